"""Real images, offline: scikit-learn's handwritten digits upsampled to 16 x 16, and image validation.

The digits (1797 images, 8 x 8, 10 classes) are read from the CSV that ships inside scikit-learn (what
``sklearn.datasets.load_digits`` reads) without importing scikit-learn, scaled to [0, 1] and upsampled
bilinearly to 16 x 16 so that the spectrum has room for bands ([INF] ours: the paper uses CIFAR-10,
CIFAR-100 and ImageNet subsets at 32 x 32 and more, not available offline here).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import torch
from icml26_shared import check_int, fail

DIGITS_SIZE = 8  # native resolution of the scikit-learn digits
N_CLASSES = 10


def check_images(name: str, x, channels: int | None = None) -> torch.Tensor:
    """A finite float tensor (B, C, H, W) with values in [0, 1] (an image batch); returned as float32."""
    x = torch.as_tensor(x)
    if x.ndim != 4 or 0 in x.shape:
        raise fail(name, tuple(x.shape), "a non-empty image batch of shape (B, C, H, W)")
    if channels is not None and x.shape[1] != channels:
        raise fail(name, tuple(x.shape), f"{channels} channel(s) in axis 1")
    if not x.is_floating_point():
        raise fail(name, x.dtype, "floating-point pixels in [0, 1]")
    if not torch.isfinite(x).all() or x.min() < 0 or x.max() > 1:
        raise fail(name, (float(x.min()), float(x.max())), "finite pixel values in [0, 1] (min, max shown)")
    return x.float()


def check_labels(name: str, y, n: int) -> torch.Tensor:
    """Integer class labels (n,) in ``[0, N_CLASSES)``."""
    y = torch.as_tensor(y)
    if y.ndim != 1 or y.shape[0] != n:
        raise fail(name, tuple(y.shape), f"labels of shape ({n},), one per image")
    if y.is_floating_point() or y.dtype == torch.bool:
        raise fail(name, y.dtype, "integer class labels")
    if y.min() < 0 or y.max() >= N_CLASSES:
        raise fail(name, (int(y.min()), int(y.max())), f"labels in [0, {N_CLASSES - 1}]")
    return y.long()


def load_digits_images(size: int = 16) -> tuple[torch.Tensor, torch.Tensor]:
    """All 1797 digits as ``(x (1797, 1, size, size) float32 in [0, 1], y (1797,) int64)``."""
    size = check_int("size", size, DIGITS_SIZE)
    spec = importlib.util.find_spec("sklearn")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("scikit-learn is needed for the digits data: pip install scikit-learn")
    table = np.loadtxt(Path(spec.origin).parent / "datasets" / "data" / "digits.csv.gz", delimiter=",")
    x = torch.from_numpy(table[:, :-1] / 16.0).float().reshape(-1, 1, DIGITS_SIZE, DIGITS_SIZE)
    x = torch.nn.functional.interpolate(x, size=(size, size), mode="bilinear", align_corners=False)
    return x, torch.from_numpy(table[:, -1]).long()


def split_digits(n_train: int, seed: int, size: int = 16):
    """A seeded random split: ``(x_train, y_train, x_test, y_test)``, the test set is every other image."""
    x, y = load_digits_images(size)
    n_train = check_int("n_train", n_train, 1, len(y) - 1)
    order = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed))
    train, test = order[:n_train], order[n_train:]
    return x[train], y[train], x[test], y[test]
