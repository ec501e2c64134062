import hashlib
import os
import stat

import numpy as np
import pytest
from icml26_shared import (
    ChecksumError,
    atomic_write_text,
    atomic_writer,
    cache_dir,
    cached,
    fetch,
    sha256_file,
    verify,
)
from icml26_shared import cache as cache_module


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("ICML26_DATA_MIRROR", raising=False)
    cache_module._mirror_index.cache_clear()


def _source(tmp_path, name="data.bin", payload=b"icml26 payload"):
    src = tmp_path / "remote" / name
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_bytes(payload)
    return src, hashlib.sha256(payload).hexdigest()


def test_cache_dir_honours_env(tmp_path):
    assert cache_dir() == tmp_path / "cache"


def test_cache_dir_default_is_user_cache(monkeypatch):
    monkeypatch.delenv("ICML26_CACHE")
    assert "icml26" in str(cache_dir())


def test_fetch_downloads_verifies_and_reuses(tmp_path):
    src, sha = _source(tmp_path)
    path = fetch(src.as_uri(), sha)
    assert path.read_bytes() == src.read_bytes() and path.parent == tmp_path / "cache" / "downloads"
    src.unlink()  # the second call must not need the source
    assert fetch(src.as_uri(), sha) == path


def test_fetch_refuses_wrong_checksum_and_leaves_nothing(tmp_path):
    src, sha = _source(tmp_path)
    wrong = "0" * 64
    with pytest.raises(ChecksumError, match=f"expected {wrong}, actual {sha}"):
        fetch(src.as_uri(), wrong)
    assert not (tmp_path / "cache" / "downloads" / src.name).exists()
    assert not list((tmp_path / "cache" / "downloads").glob("*.tmp"))


def test_fetch_replaces_a_corrupted_cached_copy(tmp_path):
    src, sha = _source(tmp_path)
    path = fetch(src.as_uri(), sha)
    path.write_bytes(b"bit rot")
    assert fetch(src.as_uri(), sha).read_bytes() == src.read_bytes()


def test_fetch_prefers_the_mirror_matched_by_name_and_checksum(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror" / "nested"
    mirror.mkdir(parents=True)
    (mirror / "x.wav").write_bytes(b"mirror copy")
    sha = hashlib.sha256(b"mirror copy").hexdigest()
    monkeypatch.setenv("ICML26_DATA_MIRROR", str(tmp_path / "mirror"))
    path = fetch("https://unreachable.invalid/dir/x.wav", sha)
    assert path.read_bytes() == b"mirror copy"


def test_fetch_ignores_a_mirror_file_with_another_checksum(tmp_path, monkeypatch):
    (tmp_path / "mirror").mkdir()
    (tmp_path / "mirror" / "data.bin").write_bytes(b"tampered")
    monkeypatch.setenv("ICML26_DATA_MIRROR", str(tmp_path / "mirror"))
    src, sha = _source(tmp_path)
    assert fetch(src.as_uri(), sha).read_bytes() == src.read_bytes()


def test_fetch_unreachable_url_says_where_to_put_the_file():
    with pytest.raises(OSError, match="ICML26_DATA_MIRROR"):
        fetch("file:///nonexistent/dir/f.bin", "a" * 64)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"url": "", "sha256": "a" * 64}, "url"),
        ({"url": "http://h/f", "sha256": "xyz"}, "sha256"),
        ({"url": "http://h/", "sha256": "a" * 64}, "filename"),
        ({"url": "http://h/f", "sha256": "a" * 64, "subdir": "../up"}, "subdir"),
    ],
)
def test_fetch_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        fetch(**kwargs)


def test_verify(tmp_path):
    src, sha = _source(tmp_path)
    assert verify(src, sha) == src
    with pytest.raises(ChecksumError, match="sha256 mismatch"):
        verify(src, "f" * 64)


def test_atomic_writer_leaves_old_file_on_error(tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_writer(target) as fh:
        fh.write(b"partial")
        raise RuntimeError("crash mid-write")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["f.txt"]


def test_cached_builds_once_and_round_trips_numpy():
    calls = []

    def build():
        calls.append(1)
        return {"x": np.arange(6, dtype=np.float32).reshape(2, 3), "y": np.array([1, 2])}

    a = cached("gen/arrays-v1", build)
    b = cached("gen/arrays-v1", build)
    assert len(calls) == 1
    np.testing.assert_array_equal(a["x"], b["x"])
    assert a["x"].dtype == np.float32 and a["y"].tolist() == [1, 2]


def test_cached_rebuilds_a_corrupted_entry(tmp_path):
    calls = []

    def build():
        calls.append(1)
        return {"x": np.ones(3)}

    cached("k", build)
    path = tmp_path / "cache" / "cached" / "k.safetensors"
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 0xFF
    path.write_bytes(bytes(raw))
    np.testing.assert_array_equal(cached("k", build)["x"], np.ones(3))
    assert len(calls) == 2
    assert sha256_file(path) == (path.parent / "k.safetensors.sha256").read_text().strip()


def test_cached_round_trips_torch_state_dicts():
    torch = pytest.importorskip("torch")
    state = {"w": torch.randn(3, 2), "b": torch.zeros(2)}
    back = cached("ckpt/model", lambda: state)
    assert isinstance(back["w"], torch.Tensor) and torch.equal(back["w"], state["w"])


@pytest.mark.parametrize("key", ["", "../escape", "/abs", "a/../../b", "sp ace"])
def test_cached_bad_key(key):
    with pytest.raises(ValueError, match="key="):
        cached(key, lambda: {"x": np.ones(1)})


def test_cached_builder_must_return_arrays():
    with pytest.raises(ValueError, match=r"builder\(\)="):
        cached("empty", dict)


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_written_files_honour_the_umask(tmp_path, monkeypatch, umask):
    """Results, figures and cache entries get the mode of a plain open(): 0666 & ~umask (not mkstemp's 0600)."""
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    old = os.umask(umask)
    try:
        atomic_write_text(tmp_path / "r.json", "{}")
        entry = cached("umask/check", lambda: {"a": np.arange(3)})
        assert entry["a"].tolist() == [0, 1, 2]
        written = [tmp_path / "r.json", *sorted((tmp_path / "cache" / "cached" / "umask").iterdir())]
    finally:
        os.umask(old)
    assert len(written) == 3
    for path in written:
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask, path
