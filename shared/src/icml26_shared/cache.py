"""The dataset cache: checksum-verified downloads (``fetch``) and built artefacts (``cached``).

* ``cache_dir()``: ``$ICML26_CACHE``, else the platform's user cache dir.
* ``fetch(url, sha256)``: looks first in a local mirror (``$ICML26_DATA_MIRROR``, files matched by
  name and verified by sha256), then downloads. Writes are atomic (temp file + ``os.replace``) and a
  file whose checksum does not match is never returned.
* ``cached(key, builder)``: arrays or trained checkpoints stored as safetensors (never pickle), with
  a sha256 sidecar checked on every load; a corrupted entry is rebuilt, not returned.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import tempfile
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from .log import get_logger
from .validation import fail

log = get_logger("icml26.cache")

CACHE_ENV = "ICML26_CACHE"
MIRROR_ENV = "ICML26_DATA_MIRROR"
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-/]*$")
CHUNK = 1 << 20


class ChecksumError(ValueError):
    """A file's sha256 is not the one expected."""


def cache_dir() -> Path:
    """The root of the cache: ``$ICML26_CACHE`` or the platform's user cache dir for ``icml26``."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("icml26"))


def sha256_file(path: str | os.PathLike) -> str:
    """Hex sha256 of a file, read in chunks."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _umask() -> int:
    """The process umask: from /proc where it exists (no window with another umask, thread-safe), else by
    setting and restoring it."""
    with contextlib.suppress(OSError, StopIteration, ValueError):
        with open("/proc/self/status") as fh:
            return int(next(line for line in fh if line.startswith("Umask:")).split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _new_temp(path: Path) -> tuple[int, str]:
    """A temp file beside ``path`` with the mode a plain ``open(path, "w")`` would give (0666 & ~umask);
    ``mkstemp`` alone creates 0600, which hides results and caches from everyone else on a cluster."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.fchmod(fd, 0o666 & ~_umask())
    return fd, tmp


def fingerprint(obj: Any) -> str:
    """A short stable hash of a JSON-able object (config dicts, key parts)."""
    text = json.dumps(obj, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """Open a temp file beside ``path``; on success it replaces ``path`` in one step, else vanishes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _new_temp(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write text atomically (UTF-8)."""
    with atomic_writer(path) as fh:
        fh.write(text.encode("utf-8"))


def _check_sha256(sha256: Any) -> str:
    if not isinstance(sha256, str) or not SHA256_RE.match(sha256.lower()):
        raise fail("sha256", sha256, "64 hexadecimal characters")
    return sha256.lower()


def verify(path: str | os.PathLike, sha256: str) -> Path:
    """Return ``path`` if its sha256 matches, else raise ``ChecksumError`` naming both digests."""
    expected = _check_sha256(sha256)
    actual = sha256_file(path)
    if actual != expected:
        raise ChecksumError(f"{path}: sha256 mismatch: expected {expected}, actual {actual}")
    return Path(path)


@functools.lru_cache(maxsize=8)
def _mirror_index(root: str) -> dict[str, tuple[Path, ...]]:
    """File name -> paths under a mirror folder (built once per folder and process)."""
    index: dict[str, list[Path]] = {}
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            index.setdefault(f, []).append(Path(dirpath) / f)
    return {k: tuple(v) for k, v in index.items()}


def _from_mirror(filename: str, sha256: str) -> Path | None:
    root = os.environ.get(MIRROR_ENV)
    if not root or not Path(root).is_dir():
        return None
    for candidate in _mirror_index(str(Path(root).resolve())).get(filename, ()):
        if sha256_file(candidate) == sha256:
            return candidate
        log.warning("mirror file %s has another sha256 than %s; ignored", candidate, sha256)
    return None


def _copy_verified(stream: BinaryIO, target: Path, sha256: str, source: str) -> Path:
    digest = hashlib.sha256()
    with atomic_writer(target) as out:
        for block in iter(lambda: stream.read(CHUNK), b""):
            digest.update(block)
            out.write(block)
        if digest.hexdigest() != sha256:
            raise ChecksumError(f"{source}: sha256 mismatch: expected {sha256}, actual {digest.hexdigest()}")
    return target


def fetch(url: str, sha256: str, *, filename: str | None = None, subdir: str = "downloads") -> Path:
    """A local, verified copy of ``url``: from the cache, else the mirror, else the network.

    ``filename`` defaults to the URL's last path component and is how the mirror is searched.
    Raises ``ChecksumError`` if the only copy that can be had has another checksum.
    """
    if not isinstance(url, str) or not url:
        raise fail("url", url, "a non-empty URL string")
    sha256 = _check_sha256(sha256)
    name = filename or Path(urllib.parse.urlparse(url).path).name
    if not name or "/" in name or name in {".", ".."}:
        raise fail("filename", name, "a plain file name (the URL has none: pass filename=)")
    if not KEY_RE.match(subdir):
        raise fail("subdir", subdir, f"a relative path matching {KEY_RE.pattern}")
    target = cache_dir() / subdir / name
    if target.is_file():
        if sha256_file(target) == sha256:
            return target
        log.warning("cached %s has a wrong sha256; fetching it again", target)
        target.unlink()
    mirrored = _from_mirror(name, sha256)
    if mirrored is not None:
        with open(mirrored, "rb") as src:
            return _copy_verified(src, target, sha256, str(mirrored))
    log.info("downloading %s", url)
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return _copy_verified(response, target, sha256, url)
    except OSError as err:
        raise OSError(
            f"could not download {url} ({err}); put the file in ${MIRROR_ENV} or ${CACHE_ENV}/{subdir}/"
        ) from err


Arrays = Mapping[str, Any]


def _is_torch(values: Arrays) -> bool:
    return any(type(v).__module__.startswith("torch") for v in values.values())


def cached(key: str, builder: Callable[[], Arrays]) -> dict[str, Any]:
    """Return the arrays stored under ``key``, building and storing them first if absent or corrupt.

    ``builder()`` returns a mapping of names to numpy arrays or torch tensors (a state dict); the
    entry is written as safetensors with a sha256 sidecar and comes back as the same kind.
    Put everything the arrays depend on into ``key`` (use ``fingerprint(config)``).
    """
    if not isinstance(key, str) or not KEY_RE.match(key) or ".." in key.split("/"):
        raise fail("key", key, f"a relative key matching {KEY_RE.pattern}")
    path = cache_dir() / "cached" / f"{key}.safetensors"
    sidecar = path.with_name(path.name + ".sha256")
    if path.is_file() and sidecar.is_file():
        if sha256_file(path) == sidecar.read_text().strip():
            return _load(path)
        log.warning("cache entry %s fails its checksum; rebuilding", path)
    values = builder()
    if not isinstance(values, Mapping) or not values:
        raise fail("builder()", values, "a non-empty mapping of names to arrays")
    _save(values, path)
    atomic_write_text(sidecar, sha256_file(path) + "\n")
    return _load(path)


def _save(values: Arrays, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        if _is_torch(values):
            from safetensors.torch import save_file

            save_file({k: v.detach().contiguous().cpu() for k, v in values.items()}, tmp, {"kind": "torch"})
        else:
            from safetensors.numpy import save_file

            save_file({k: np.ascontiguousarray(v) for k, v in values.items()}, tmp, {"kind": "numpy"})
        os.chmod(tmp, 0o666 & ~_umask())  # safetensors writes a file of its own at tmp
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _load(path: Path) -> dict[str, Any]:
    from safetensors import safe_open

    with safe_open(str(path), framework="numpy") as fh:
        kind = (fh.metadata() or {}).get("kind", "numpy")
    if kind == "torch":
        from safetensors.torch import load_file

        return load_file(str(path))
    from safetensors.numpy import load_file

    return load_file(str(path))
