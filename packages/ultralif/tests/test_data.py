"""Real-data loaders: shapes and ranges, checksum verification, and clear errors for missing or bad data."""

import os

import numpy as np
import pytest
from icml26_shared.datasets import FASHION_DIR
from icml26_ultralif.data import (
    fsdd_files,
    load_digits_split,
    load_fashion_mnist,
    load_fsdd,
    log_mel_frames,
    mel_filterbank,
)

needs_mirror = pytest.mark.skipif(not os.environ.get("ICML26_DATA_MIRROR"), reason="FSDD mirror not set")


def test_digits_split_is_stratified_and_scaled():
    X_train, _, X_test, y_test = load_digits_split()
    assert X_train.shape == (1438, 64) and X_test.shape == (359, 64)
    assert 0 <= X_train.min() and X_train.max() <= 1
    assert np.bincount(y_test).min() >= 35


@pytest.mark.skipif(not FASHION_DIR.is_dir(), reason="apt-get install dataset-fashion-mnist")
def test_fashion_mnist_subset_has_images_in_unit_interval():
    X_train, y_train, X_test, _ = load_fashion_mnist(300, 200)
    assert X_train.shape == (300, 784) and X_test.shape == (200, 784)
    assert 0 <= X_train.min() and X_train.max() <= 1 and set(np.unique(y_train)) == set(range(10))


def test_fsdd_lists_all_recordings_of_the_manifest():
    paths = fsdd_files()
    assert len(paths) == 3000 and all(p.startswith("fsdd/recordings/") and p.endswith(".wav") for p in paths)
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
