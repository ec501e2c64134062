"""Real datasets, offline: scikit-learn digits, Fashion-MNIST (Debian IDX files) and the Free Spoken Digit Dataset.

* ``load_digits_split``: 1797 8x8 digits in [0, 1], a fixed stratified 80/20 split.
* ``load_fashion_mnist``: the IDX files of Debian's ``dataset-fashion-mnist`` (or a folder of your own),
  verified by the sha256 of the decompressed files, decoded once and cached.
* ``load_fsdd``: FSDD wav files fetched through the checksum-verified cache (mirror first), turned into
  log mel filterbank frames (B, T, bands): the temporal/audio task. Split: recordings 0-4 of each
  speaker and digit are the test set (the dataset's documented split).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import importlib.util
import os
from importlib import resources
from pathlib import Path

import numpy as np
from icml26_shared import ChecksumError, cached, check_int, fail, fetch, fingerprint

FASHION_DIR = Path("/usr/share/datasets/fashion-mnist")
FASHION_SHA256 = {  # sha256 of the decompressed IDX files (../shared/data/README.md)
    "train-images-idx3-ubyte": "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
    "train-labels-idx1-ubyte": "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
    "t10k-images-idx3-ubyte": "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
    "t10k-labels-idx1-ubyte": "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
}
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

    Pixels in [0, 1]. ``folder`` holds the four IDX files, gzipped or not (default: Debian's
    /usr/share/datasets/fashion-mnist). Their decompressed sha256 is verified before decoding.
    """
    check_int("n_train", n_train, 1, 60000)
    check_int("n_test", n_test, 1, 10000)
    root = Path(folder) if folder is not None else FASHION_DIR
    paths = {name: _find_idx(root, name) for name in FASHION_SHA256}

    def build() -> dict[str, np.ndarray]:
        return {name.split("-idx")[0]: _read_idx(paths[name], sha) for name, sha in FASHION_SHA256.items()}

    arrays = cached(f"ultralif/fashion-mnist-{fingerprint(FASHION_SHA256)}", build)
    X_train = (arrays["train-images"][:n_train].reshape(n_train, -1) / 255.0).astype(np.float32)
    X_test = (arrays["t10k-images"][:n_test].reshape(n_test, -1) / 255.0).astype(np.float32)
    return (
        X_train,
        arrays["train-labels"][:n_train].astype(np.int64),
        X_test,
        arrays["t10k-labels"][:n_test].astype(np.int64),
    )


def fsdd_files(per_speaker: int = 50) -> list[dict[str, str]]:
    """Rows (name, sha256, url) of the FSDD recordings with index < ``per_speaker`` for every digit and speaker."""
    check_int("per_speaker", per_speaker, FSDD_TEST_INDICES + 1, 50)
    with resources.files(__package__).joinpath("fsdd_recordings.tsv").open() as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    return [r for r in rows if int(r["name"].removesuffix(".wav").split("_")[2]) < per_speaker]


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
        for row in rows:
            rate, wave = wavfile.read(fetch(row["url"], row["sha256"], filename=row["name"], subdir="fsdd"))
            if rate != FSDD_RATE:
                raise fail("rate", rate, f"{FSDD_RATE} Hz in {row['name']}")
            digit, _, index = row["name"].removesuffix(".wav").split("_")
            feats.append(log_mel_frames(wave, T, n_bands))
            labels.append(int(digit))
            test.append(int(index) < FSDD_TEST_INDICES)
        return {"X": np.stack(feats).astype(np.float32), "y": np.array(labels), "test": np.array(test)}

    key = fingerprint({"files": [r["sha256"] for r in rows], "T": T, "bands": n_bands, "fft": [N_FFT, HOP]})
    arrays = cached(f"ultralif/fsdd-{key}", build)
    X, y, test = arrays["X"], arrays["y"].astype(np.int64), arrays["test"].astype(bool)
    mean, std = X[~test].mean((0, 1)), X[~test].std((0, 1)) + 1e-6
    X = ((X - mean) / std).astype(np.float32)
    return X[~test], y[~test], X[test], y[test]
