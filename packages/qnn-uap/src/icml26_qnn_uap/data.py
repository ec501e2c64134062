"""The paper's 2-D regression targets (Sec. 4) and the 100/100 uniform random train/test split."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icml26_shared import check_choice, check_int

TARGETS = ("f1", "f2", "f3")
DOMAINS = {"f1": np.pi, "f2": np.pi, "f3": 1.0}  # half-width of the sampling box [-h, h]^2


def target(name: str, x: np.ndarray) -> np.ndarray:
    """Evaluate the paper's target ``name`` on ``x`` (N, 2) -> (N,)."""
    check_choice("name", name, TARGETS)
    x0, x1 = x[:, 0], x[:, 1]
    if name == "f1":
        return np.exp(-(np.sin(x0 / 2) ** 2 + np.sin(x1 / 2) ** 2))
    if name == "f2":
        return (np.cos(x0 + x1 + np.pi / 6) + 1) / 2.5
    return (x0 - x1 + 1) ** 2 / 9


@dataclass(frozen=True)
class Dataset:
    """A train/test split of one target: inputs ``(N, 2)`` and values ``(N,)``."""

    name: str
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


def make_dataset(name: str, seed: int, n_train: int = 100, n_test: int = 100) -> Dataset:
    """Sample ``n_train + n_test`` points uniformly from the target's box (Sec. 4: 200 points, 100/100)."""
    check_choice("name", name, TARGETS)
    n_train = check_int("n_train", n_train, 1)
    n_test = check_int("n_test", n_test, 1)
    rng = np.random.default_rng(seed)
    h = DOMAINS[name]
    x = rng.uniform(-h, h, size=(n_train + n_test, 2))
    y = target(name, x)
    return Dataset(name, x[:n_train], y[:n_train], x[n_train:], y[n_train:])
