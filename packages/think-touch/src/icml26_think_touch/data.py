"""Transfer tasks on real images: pre-train on classes 0-4 (task A), fine-tune on classes 5-9 seen through
a fixed random pixel permutation (task B).

The permutation makes the update that task B needs high-rank (the input layer must be re-wired, which a
low-rank adapter cannot do well), the setting where the paper argues that full fine-tuning beats LoRA
[INF: our choice of miniature task]. Data: scikit-learn's digits (1797 images, 8x8, shipped inside
scikit-learn) for the quick run; Fashion-MNIST (Debian IDX files, checksum-verified through
``icml26_shared.load_fashion_mnist``) for the paper config.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icml26_shared import check_choice, check_int, derive, load_fashion_mnist

DATASETS = ("digits", "fashion")
TEST_FRACTION = 0.3  # digits: held-out share of each class


@dataclass(frozen=True)
class Task:
    """One classification task: float32 inputs (n, D) in [0, 1] and int64 labels in 0..4."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


def _images(dataset: str, n_train: int, n_test: int) -> tuple[np.ndarray, ...]:
    if dataset == "fashion":
        return load_fashion_mnist(n_train, n_test)
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X, y = (X / 16.0).astype(np.float32), y.astype(np.int64)
    rng = np.random.default_rng(0)  # one fixed stratified split, the same for every seed
    test = np.zeros(len(y), dtype=bool)
    for c in range(10):
        members = rng.permutation(np.flatnonzero(y == c))
        test[members[: round(TEST_FRACTION * len(members))]] = True
    return X[~test], y[~test], X[test], y[test]


def transfer_tasks(
    dataset: str = "digits", seed: int = 0, n_train: int = 60000, n_test: int = 10000
) -> tuple[Task, Task]:
    """``(task_a, task_b)``: A = classes 0-4 as is, B = classes 5-9 (relabelled 0-4) with the input
    pixels permuted by a permutation drawn from ``seed``. ``n_train``/``n_test`` apply to Fashion-MNIST."""
    check_choice("dataset", dataset, DATASETS)
    check_int("n_train", n_train, 1)
    check_int("n_test", n_test, 1)
    X_train, y_train, X_test, y_test = _images(dataset, n_train, n_test)
    permutation = np.random.default_rng(derive(seed, "permutation")).permutation(X_train.shape[1])

    def split(low: int, permute: bool) -> Task:
        a, b = (y_train >= low) & (y_train < low + 5), (y_test >= low) & (y_test < low + 5)
        cols = permutation if permute else slice(None)
        return Task(X_train[a][:, cols], y_train[a] - low, X_test[b][:, cols], y_test[b] - low)

    return split(0, False), split(5, True)
