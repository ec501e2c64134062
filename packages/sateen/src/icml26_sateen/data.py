"""Real images and an in-repo corruption suite (a miniature ImageNet-C / CIFAR-10-C).

* ``load_dataset("digits")``: scikit-learn's 1797 8x8 digits, a fixed stratified 50/50 split;
  ``load_dataset("fashion")``: Fashion-MNIST 28x28 (``icml26_shared.load_fashion_mnist``, checksum-verified).
  Images are float32 (n, 1, h, w) in [0, 1].
* ``corrupt(images, name, severity, rng)``: the corruptions of ``CORRUPTIONS`` at severity 1..5, deterministic
  given the numpy generator. Blur and pixelate scale with the image side (parameters are set for 28 pixels).
* ``continual_stream``: the continual test-time adaptation stream, every corruption in turn, repeated.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import torch
import torch.nn.functional as F
from icml26_shared import check_array, check_choice, check_int, load_fashion_mnist
from scipy import ndimage

DATASETS = ("digits", "fashion")
CORRUPTIONS = ("gaussian_noise", "shot_noise", "impulse_noise", "gaussian_blur", "contrast", "pixelate")
SEVERITY = {  # parameter per severity 1..5 (ImageNet-C style ladders, set for [0, 1] images of side 28) [INF]
    "gaussian_noise": (0.08, 0.12, 0.18, 0.26, 0.38),  # noise std
    "shot_noise": (60.0, 25.0, 12.0, 5.0, 3.0),  # photons per unit intensity (Poisson)
    "impulse_noise": (0.03, 0.06, 0.09, 0.17, 0.27),  # fraction of salt-and-pepper pixels
    "gaussian_blur": (0.6, 0.9, 1.2, 1.5, 1.8),  # blur std in pixels at side 28
    "contrast": (0.4, 0.3, 0.2, 0.1, 0.05),  # contrast factor around the image mean
    "pixelate": (0.6, 0.5, 0.4, 0.3, 0.25),  # side of the low-resolution copy / side
}
REFERENCE_SIDE = 28


def load_dataset(name: str, n_train: int = 10000, n_test: int = 2000) -> tuple[np.ndarray, ...]:
    """``(X_train, y_train, X_test, y_test)`` with images (n, 1, h, w) float32 in [0, 1], labels int64.

    ``n_train``/``n_test`` apply to Fashion-MNIST only; digits always use their fixed 50/50 split.
    """
    check_choice("name", name, DATASETS)
    if name == "fashion":
        X_train, y_train, X_test, y_test = load_fashion_mnist(n_train, n_test)
        return X_train.reshape(-1, 1, 28, 28), y_train, X_test.reshape(-1, 1, 28, 28), y_test
    from sklearn.datasets import load_digits

    digits = load_digits()
    X, y = (digits.images / 16.0).astype(np.float32)[:, None], digits.target.astype(np.int64)
    rng = np.random.default_rng(0)
    test = np.zeros(len(y), dtype=bool)
    for c in np.unique(y):
        members = rng.permutation(np.flatnonzero(y == c))
        test[members[: len(members) // 2]] = True
    return X[~test], y[~test], X[test], y[test]


def corrupt(images: np.ndarray, name: str, severity: int, rng: np.random.Generator) -> np.ndarray:
    """``images`` (n, c, h, w) in [0, 1] under corruption ``name`` at ``severity`` (1..5), clipped to [0, 1]."""
    x = check_array("images", images, ndim=4).astype(np.float32)
    check_choice("name", name, CORRUPTIONS)
    level = SEVERITY[name][check_int("severity", severity, 1, 5) - 1]
    side = x.shape[-1]
    if name == "gaussian_noise":
        out = x + rng.normal(0.0, level, x.shape)
    elif name == "shot_noise":
        out = rng.poisson(x * level) / level
    elif name == "impulse_noise":
        out = x.copy()
        hit = rng.random(x.shape) < level
        out[hit] = rng.integers(0, 2, int(hit.sum()))  # salt (1) or pepper (0)
    elif name == "gaussian_blur":
        out = ndimage.gaussian_filter(x, sigma=(0, 0, level * side / REFERENCE_SIDE, level * side / REFERENCE_SIDE))
    elif name == "contrast":
        mean = x.mean(axis=(1, 2, 3), keepdims=True)
        out = (x - mean) * level + mean
    else:  # pixelate: area-downsample, nearest-upsample
        small = max(1, round(side * level))
        t = torch.from_numpy(x)
        out = F.interpolate(
            F.interpolate(t, size=(small, small), mode="area"), size=x.shape[-2:], mode="nearest"
        ).numpy()
    return np.clip(out, 0.0, 1.0).astype(np.float32)


def corruption_suite(
    images: np.ndarray, severity: int, rng: np.random.Generator, corruptions: tuple[str, ...] = CORRUPTIONS
) -> dict[str, np.ndarray]:
    """Every corruption of ``images`` at ``severity``: {name: (n, c, h, w)}."""
    return {name: corrupt(images, name, severity, rng) for name in corruptions}


def batches(
    images: np.ndarray, labels: np.ndarray, batch_size: int, rng: np.random.Generator
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Shuffled test batches ``(x (b, c, h, w), y (b,))`` of one domain (the last batch may be smaller)."""
    check_int("batch_size", batch_size, 1)
    order = rng.permutation(len(labels))
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        yield torch.from_numpy(images[idx]), torch.from_numpy(labels[idx])


def continual_stream(
    suite: dict[str, np.ndarray], labels: np.ndarray, rounds: int, batch_size: int, rng: np.random.Generator
) -> Iterator[tuple[int, str, torch.Tensor, torch.Tensor]]:
    """The continual stream: ``rounds`` passes over every domain of ``suite`` in order, without reset;
    yields ``(round, domain, x, y)``."""
    check_int("rounds", rounds, 1)
    for r in range(rounds):
        for name, images in suite.items():
            for x, y in batches(images, labels, batch_size, rng):
                yield r, name, x, y
