"""Binarised real images, offline: scikit-learn digits and Fashion-MNIST.

Each pixel becomes ``len(thresholds)`` bits ``[pixel > t]`` (a thermometer code, difflogic's binarisation of
MNIST/CIFAR-10 inputs), so the logic network's inputs are Boolean.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
from icml26_shared import check_array, check_int, fail, load_fashion_mnist

DIGITS_TEST_FRACTION = 0.2


def thermometer(X: np.ndarray, thresholds: tuple[float, ...]) -> np.ndarray:
    """(N, D) pixels in [0, 1] -> (N, D * T) bool, bit ``(d, t)`` = ``X[:, d] > thresholds[t]``."""
    X = check_array("X", X, ndim=2)
    if not thresholds or any(not 0 < t < 1 for t in thresholds) or list(thresholds) != sorted(set(thresholds)):
        raise fail("thresholds", thresholds, "increasing, distinct numbers in (0, 1)")
    return (X[:, :, None] > np.asarray(thresholds)[None, None, :]).reshape(len(X), -1)


def load_digits_bits(thresholds: tuple[float, ...] = (0.25, 0.5, 0.75)) -> tuple[np.ndarray, ...]:
    """scikit-learn's 1797 8x8 digits, thermometer-coded: ``(X_train, y_train, X_test, y_test)``.

    Reads the CSV shipped inside scikit-learn; a fixed stratified 80/20 split.
    """
    spec = importlib.util.find_spec("sklearn")
    if spec is None or spec.origin is None:  # pragma: no cover - scikit-learn is a dependency
        raise ModuleNotFoundError("scikit-learn is needed for the digits data: pip install scikit-learn")
    table = np.loadtxt(Path(spec.origin).parent / "datasets" / "data" / "digits.csv.gz", delimiter=",")
    X, y = table[:, :-1] / 16.0, table[:, -1].astype(np.int64)
    rng = np.random.default_rng(0)
    test = np.zeros(len(y), dtype=bool)
    for c in np.unique(y):
        members = rng.permutation(np.flatnonzero(y == c))
        test[members[: round(DIGITS_TEST_FRACTION * len(members))]] = True
    bits = thermometer(X, thresholds)
    return bits[~test], y[~test], bits[test], y[test]


def load_fashion_bits(
    n_train: int, n_test: int, pool: int = 2, thresholds: tuple[float, ...] = (0.25, 0.5, 0.75)
) -> tuple[np.ndarray, ...]:
    """Fashion-MNIST (``icml26_shared.load_fashion_mnist``), ``pool x pool`` average-pooled, thermometer-coded."""
    check_int("pool", pool, 1, 28)
    if 28 % pool:
        raise fail("pool", pool, "a divisor of 28")
    X_train, y_train, X_test, y_test = load_fashion_mnist(n_train, n_test)

    def pooled(X: np.ndarray) -> np.ndarray:
        side = 28 // pool
        return X.reshape(len(X), side, pool, side, pool).mean((2, 4)).reshape(len(X), -1)

    return thermometer(pooled(X_train), thresholds), y_train, thermometer(pooled(X_test), thresholds), y_test
