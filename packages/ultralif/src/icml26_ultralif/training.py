"""Training and evaluation of an SNN: Adam on ``CE + lambda * spike rate``, accuracy and spike rate on a test set.

Everything random (shuffling, Poisson encoding) draws from an explicit ``torch.Generator`` seeded by the
caller, so two neurons trained with the same seed see the same batches: their accuracies are paired.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from icml26_shared import check_array, check_int, check_positive, check_same_length, fail

from .networks import SNN, sparse_loss

LR = 1e-3  # Adam (paper)
BATCH_SIZE = 128  # paper


@dataclass(frozen=True)
class Evaluation:
    """Test accuracy (fraction) and mean spike rate of a trained SNN."""

    accuracy: float
    spike_rate: float


def _tensors(X, y, name: str) -> tuple[torch.Tensor, torch.Tensor]:
    X = check_array(f"X_{name}", X, ndim=(2, 3))
    y = check_array(f"y_{name}", y, ndim=1)
    check_same_length(**{f"X_{name}": X, f"y_{name}": y})
    if not np.issubdtype(y.dtype, np.integer) or y.min() < 0:
        raise fail(f"y_{name}", y, "integer class labels >= 0")
    return torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y, dtype=torch.long)


def train(
    model: SNN,
    X_train,
    y_train,
    epochs: int,
    seed: int,
    lam: float = 0.0,
    lr: float = LR,
    batch_size: int = BATCH_SIZE,
) -> SNN:
    """Train ``model`` in place for ``epochs`` on (X_train, y_train) with Adam; returns it.

    ``X_train``: (n, D) for rate/direct encoding or (n, T, D) for frames; ``y_train``: (n,) labels;
    ``lam``: weight of the spike-rate penalty.
    """
    X, y = _tensors(X_train, y_train, "train")
    check_int("epochs", epochs, 1)
    check_int("batch_size", batch_size, 1)
    check_positive("lr", lr)
    generator = torch.Generator().manual_seed(check_int("seed", seed, 0))
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for _ in range(epochs):
        order = torch.randperm(len(X), generator=generator)
        for start in range(0, len(X), batch_size):
            idx = order[start : start + batch_size]
            logits = model(X[idx], generator)
            loss = sparse_loss(logits, y[idx], model.spike_rate, lam)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model


@torch.no_grad()
def evaluate(model: SNN, X_test, y_test, seed: int, batch_size: int = 1024) -> Evaluation:
    """Accuracy and mean spike rate of ``model`` on (X_test, y_test); ``seed`` drives the Poisson code."""
    X, y = _tensors(X_test, y_test, "test")
    generator = torch.Generator().manual_seed(check_int("seed", seed, 0))
    model.eval()
    correct, spikes = 0, 0.0
    for start in range(0, len(X), batch_size):
        logits = model(X[start : start + batch_size], generator)
        correct += int((logits.argmax(1) == y[start : start + batch_size]).sum())
        spikes += float(model.spike_rate) * len(logits)
    return Evaluation(accuracy=correct / len(X), spike_rate=spikes / len(X))
