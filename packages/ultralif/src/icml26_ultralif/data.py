"""Real datasets, offline: scikit-learn digits, Fashion-MNIST (Debian IDX files) and the Free Spoken Digit Dataset.

* ``load_digits_split``: 1797 8x8 digits in [0, 1], a fixed stratified 80/20 split.
* ``load_fashion_mnist``: ``icml26_shared.load_fashion_mnist`` (Debian's ``dataset-fashion-mnist`` IDX files,
  decompressed sha256 verified, decoded once and cached), re-exported here.
* ``load_fsdd``: FSDD wav files fetched through the checksum-verified cache (``icml26_shared.fetch_file``:
  the data manifest's URL and sha256, mirror first), turned into
  log mel filterbank frames (B, T, bands): the temporal/audio task. Split: recordings 0-4 of each
  speaker and digit are the test set (the dataset's documented split).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path, PurePosixPath

import numpy as np
from icml26_shared import cached, check_int, fail, fetch_file, fingerprint, load_fashion_mnist
from icml26_shared.datasets import manifest

__all__ = ["load_digits_split", "load_fashion_mnist", "load_fsdd", "log_mel_frames", "mel_filterbank"]

FSDD_RATE = 8000  # Hz
FSDD_SPEAKERS = ("george", "jackson", "lucas", "nicolas", "theo", "yweweler")
FSDD_TEST_INDICES = 5  # recordings 0..4 of each (digit, speaker) form the test set
DIGITS_TEST_FRACTION = 0.2
N_FFT, HOP = 256, 128  # 32 ms windows, 16 ms hop at 8 kHz


def load_digits_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn digits as ``(X_train (1438, 64), y_train, X_test (359, 64), y_test)``, pixels in [0, 1].

    Reads the CSV that ships inside scikit-learn (what ``load_digits`` reads) without importing scikit-learn,
    and splits it 80/20, stratified by class, with a fixed permutation.
    """
    spec = importlib.util.find_spec("sklearn")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("scikit-learn is needed for the digits data: pip install scikit-learn")
    table = np.loadtxt(Path(spec.origin).parent / "datasets" / "data" / "digits.csv.gz", delimiter=",")
    X, y = (table[:, :-1] / 16.0).astype(np.float32), table[:, -1].astype(np.int64)
    rng = np.random.default_rng(0)
    test = np.zeros(len(y), dtype=bool)
    for c in np.unique(y):
        members = rng.permutation(np.flatnonzero(y == c))
        test[members[: round(DIGITS_TEST_FRACTION * len(members))]] = True
    return X[~test], y[~test], X[test], y[test]


def fsdd_files(per_speaker: int = 50) -> list[str]:
    """Data-manifest paths of the FSDD recordings with index < ``per_speaker`` for every digit and speaker."""
    check_int("per_speaker", per_speaker, FSDD_TEST_INDICES + 1, 50)
    recordings = [p for p in manifest() if p.startswith("fsdd/recordings/")]
    return sorted(p for p in recordings if int(PurePosixPath(p).stem.split("_")[2]) < per_speaker)


def mel_filterbank(n_bands: int, n_fft: int = N_FFT, rate: int = FSDD_RATE) -> np.ndarray:
    """Triangular mel filters (n_bands, n_fft // 2 + 1) between 0 Hz and the Nyquist frequency."""
    check_int("n_bands", n_bands, 1, n_fft // 2)
    mel = np.linspace(0.0, 2595 * np.log10(1 + (rate / 2) / 700), n_bands + 2)
    edges = 700 * (10 ** (mel / 2595) - 1)
    freqs = np.linspace(0, rate / 2, n_fft // 2 + 1)
    lo, mid, hi = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    return np.maximum(0.0, np.minimum((freqs - lo) / (mid - lo), (hi - freqs) / (hi - mid)))


def log_mel_frames(wave: np.ndarray, T: int, n_bands: int, rate: int = FSDD_RATE) -> np.ndarray:
    """Log mel energies of ``wave`` averaged in ``T`` equal time bins: (T, n_bands)."""
    from scipy.signal import stft

    check_int("T", T, 1)
    _, _, Z = stft(wave.astype(np.float64), fs=rate, nperseg=N_FFT, noverlap=N_FFT - HOP)
    energies = mel_filterbank(n_bands, N_FFT, rate) @ np.abs(Z) ** 2  # (bands, frames)
    logmel = np.log(energies + 1e-6).T
    if len(logmel) < T:
        raise fail("wave", wave, f"a recording with at least T={T} STFT frames")
    return np.stack([chunk.mean(0) for chunk in np.array_split(logmel, T)])


def load_fsdd(T: int = 1, n_bands: int = 32, per_speaker: int = 50):
    """FSDD as ``(X_train (n, T, bands), y_train, X_test, y_test)``, features standardised with train statistics.

    ``per_speaker`` recordings per digit and speaker (50 = all 3000; indices 0-4 are the test set).
    """
    from scipy.io import wavfile

    check_int("T", T, 1, 64)
    rows = fsdd_files(per_speaker)

    def build() -> dict[str, np.ndarray]:
        feats, labels, test = [], [], []
        for path in rows:
            rate, wave = wavfile.read(fetch_file(path))
            if rate != FSDD_RATE:
                raise fail("rate", rate, f"{FSDD_RATE} Hz in {path}")
            digit, _, index = PurePosixPath(path).stem.split("_")
            feats.append(log_mel_frames(wave, T, n_bands))
            labels.append(int(digit))
            test.append(int(index) < FSDD_TEST_INDICES)
        return {"X": np.stack(feats).astype(np.float32), "y": np.array(labels), "test": np.array(test)}

    key = fingerprint({"files": [manifest()[p][0] for p in rows], "T": T, "bands": n_bands, "fft": [N_FFT, HOP]})
    arrays = cached(f"ultralif/fsdd-{key}", build)
    X, y, test = arrays["X"], arrays["y"].astype(np.int64), arrays["test"].astype(bool)
    mean, std = X[~test].mean((0, 1)), X[~test].std((0, 1)) + 1e-6
    X = ((X - mean) / std).astype(np.float32)
    return X[~test], y[~test], X[test], y[test]
