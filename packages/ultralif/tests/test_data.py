"""Real-data loaders: shapes and ranges, checksum verification, and clear errors for missing or bad data."""

import gzip
import os

import numpy as np
import pytest
from icml26_shared import ChecksumError
from icml26_ultralif.data import (
    FASHION_DIR,
    fsdd_files,
    load_digits_split,
    load_fashion_mnist,
    load_fsdd,
    log_mel_frames,
    mel_filterbank,
)

needs_fashion = pytest.mark.skipif(not FASHION_DIR.is_dir(), reason="apt-get install dataset-fashion-mnist")
needs_mirror = pytest.mark.skipif(not os.environ.get("ICML26_DATA_MIRROR"), reason="FSDD mirror not set")


def test_digits_split_is_stratified_and_scaled():
    X_train, _, X_test, y_test = load_digits_split()
    assert X_train.shape == (1438, 64) and X_test.shape == (359, 64)
    assert 0 <= X_train.min() and X_train.max() <= 1
    assert np.bincount(y_test).min() >= 35


@needs_fashion
def test_fashion_mnist_subset_has_images_in_unit_interval():
    X_train, y_train, X_test, _ = load_fashion_mnist(300, 200)
    assert X_train.shape == (300, 784) and X_test.shape == (200, 784)
    assert 0 <= X_train.min() and X_train.max() <= 1 and set(np.unique(y_train)) == set(range(10))


def test_fashion_mnist_missing_folder_names_the_debian_package(tmp_path):
    with pytest.raises(FileNotFoundError, match="apt-get install dataset-fashion-mnist"):
        load_fashion_mnist(10, 10, folder=tmp_path)


def test_fashion_mnist_rejects_a_file_with_the_wrong_checksum(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    for name in (
        "train-images-idx3-ubyte",
        "train-labels-idx1-ubyte",
        "t10k-images-idx3-ubyte",
        "t10k-labels-idx1-ubyte",
    ):
        (tmp_path / f"{name}.gz").write_bytes(gzip.compress(b"\x00\x00\x08\x01\x00\x00\x00\x01\x07"))
    with pytest.raises(ChecksumError, match="sha256 mismatch"):
        load_fashion_mnist(1, 1, folder=tmp_path)


@pytest.mark.parametrize(("kwargs", "name"), [({"n_train": 0}, "n_train"), ({"n_test": 10001}, "n_test")])
def test_fashion_mnist_rejects_bad_sizes(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        load_fashion_mnist(**({"n_train": 10, "n_test": 10} | kwargs))


def test_fsdd_manifest_lists_all_recordings_with_checksums():
    rows = fsdd_files()
    assert len(rows) == 3000 and all(len(r["sha256"]) == 64 and r["url"].endswith(r["name"]) for r in rows)
    assert len(fsdd_files(6)) == 6 * 10 * 6


def test_mel_filterbank_covers_the_spectrum_with_triangles():
    fb = mel_filterbank(20)
    assert fb.shape == (20, 129) and fb.min() >= 0 and fb.max() <= 1
    assert (fb.argmax(1) == np.sort(fb.argmax(1))).all()


def test_log_mel_frames_bins_time():
    wave = np.sin(np.linspace(0, 800 * np.pi, 4000)) * 1000
    frames = log_mel_frames(wave, T=4, n_bands=16)
    assert frames.shape == (4, 16) and np.isfinite(frames).all()
    np.testing.assert_allclose(frames[1], frames[2], atol=0.1)  # a stationary tone (inner bins)


@needs_mirror
def test_fsdd_loader_uses_the_documented_split():
    X_train, _, X_test, y_test = load_fsdd(T=1, n_bands=32, per_speaker=6)  # the smoke config's data
    assert X_train.shape == (60, 1, 32) and X_test.shape == (300, 1, 32)
    assert abs(float(X_train.mean())) < 1e-4 and set(np.unique(y_test)) == set(range(10))


@pytest.mark.parametrize(("kwargs", "name"), [({"per_speaker": 3}, "per_speaker"), ({"T": 0}, "T")])
def test_fsdd_rejects_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        load_fsdd(**kwargs)


def test_mel_filterbank_rejects_bad_band_count():
    with pytest.raises(ValueError, match="n_bands="):
        mel_filterbank(0)
