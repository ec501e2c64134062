"""Real images: scikit-learn's handwritten digits (8x8, 10 classes), dequantised, and their low-pass view.

Pixels are integers 0..16; we add U[0, 1) dequantisation noise and map to [-1, 1] [INF], so the
data has a density and the neural entropy is finite (without it, always-blank pixels make the
exact S_NN diverge as eps -> 0). The low-pass view averages 2x2 blocks (8x8 -> 4x4): the images
without their finest detail, at the dimension that remains.
"""

from __future__ import annotations

import numpy as np
from icml26_shared import check_array, check_int, check_open_interval, fail

SIDE = 8  # digits are 8x8
LEVELS = 17  # pixel values 0..16


def load_digits_dequantised(rng) -> tuple[np.ndarray, np.ndarray]:
    """All 1797 digits as (n, 64) floats in [-1, 1] (dequantised with ``rng``) and labels (n,)."""
    from sklearn.datasets import load_digits

    bunch = load_digits()
    pixels = bunch.data + rng.uniform(size=bunch.data.shape)  # in [0, 17)
    return 2 * pixels / LEVELS - 1, bunch.target.astype(np.int64)


def low_pass(images, factor: int = 2) -> np.ndarray:
    """Average ``factor x factor`` blocks of square flat images: (n, s*s) -> (n, (s/factor)^2)."""
    images = check_array("images", images, ndim=2, dtype=float)
    side = round(float(np.sqrt(images.shape[1])))
    if side * side != images.shape[1]:
        raise fail("images", images, "flattened square images (n, side*side)")
    factor = check_int("factor", factor, 1, side)
    if side % factor:
        raise fail("factor", factor, f"a divisor of the image side {side}")
    blocks = images.reshape(-1, side // factor, factor, side // factor, factor)
    return blocks.mean(axis=(2, 4)).reshape(images.shape[0], -1)


def split(x, labels, test_fraction: float, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A random train/test split (x_train, y_train, x_test, y_test)."""
    check_open_interval("test_fraction", test_fraction, 0.0, 1.0)
    order = rng.permutation(len(x))
    n_test = max(1, round(test_fraction * len(x)))
    test, train = order[:n_test], order[n_test:]
    return x[train], labels[train], x[test], labels[test]
