"""Training and evaluation of graph-level models (RMSE, ROC-AUC, accuracy), with model selection on validation."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from icml26_shared import check_choice, check_int, check_positive, fail
from torch_geometric.data import Data
from torch_geometric.loader import DataLoader

TASKS = ("regression", "classification", "accuracy")  # accuracy: binary, from logits


def score(task: str, prediction: np.ndarray, target: np.ndarray) -> float:
    """RMSE (regression, lower is better), ROC-AUC averaged over tasks with both classes, or binary accuracy."""
    check_choice("task", task, TASKS)
    mask = ~np.isnan(target)
    if task == "accuracy":
        return float(np.mean((prediction[mask] > 0) == (target[mask] > 0.5)))
    if task == "regression":
        return float(np.sqrt(np.mean((prediction[mask] - target[mask]) ** 2)))
    from sklearn.metrics import roc_auc_score

    aucs = [
        roc_auc_score(target[mask[:, t], t], prediction[mask[:, t], t])
        for t in range(target.shape[1])
        if len(np.unique(target[mask[:, t], t])) == 2
    ]
    if not aucs:
        raise fail("target", target.shape, "at least one task with both classes present")
    return float(np.mean(aucs))


@torch.no_grad()
def predict(model: torch.nn.Module, graphs: Sequence[Data], batch_size: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """Model outputs and targets over ``graphs`` (eval mode)."""
    model.eval()
    outs, ys = [], []
    for batch in DataLoader(list(graphs), batch_size=batch_size):
        outs.append(model(batch))
        ys.append(batch.y)
    return torch.cat(outs).numpy(), torch.cat(ys).numpy()


def fit(
    make_model: Callable[[], torch.nn.Module],
    task: str,
    train: Sequence[Data],
    valid: Sequence[Data],
    test: Sequence[Data],
    epochs: int,
    seed: int,
    lr: float = 3e-3,
    batch_size: int = 64,
) -> dict[str, float]:
    """Train with Adam; return the test score at the epoch of the best validation score, and the final train loss.

    Regression targets are standardised with the training mean/std; scores are in the original units.
    """
    check_choice("task", task, TASKS)
    epochs, lr = check_int("epochs", epochs, 1), check_positive("lr", lr)
    if not train or not valid or not test:
        raise fail("train/valid/test", (len(train), len(valid), len(test)), "three non-empty splits")
    torch.manual_seed(seed)
    model = make_model()
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    y_train = torch.cat([g.y for g in train])
    mean = torch.nanmean(y_train, 0) if task == "regression" else torch.zeros(y_train.shape[1])
    std = (
        torch.from_numpy(np.nanstd(y_train.numpy(), 0)).clamp_min(1e-6)
        if task == "regression"
        else torch.ones(y_train.shape[1])
    )
    generator = torch.Generator().manual_seed(seed)
    loader = DataLoader(
        list(train), batch_size=batch_size, shuffle=True, generator=generator, drop_last=len(train) > batch_size
    )
    sign = -1.0 if task == "regression" else 1.0
    best, best_test, last_loss = -np.inf, np.nan, np.nan
    for _ in range(epochs):
        model.train()
        losses = []
        for batch in loader:
            optimiser.zero_grad()
            out, y = model(batch), batch.y
            mask = ~torch.isnan(y)
            if task == "regression":
                loss = ((out - (y - mean) / std)[mask] ** 2).mean()
            else:  # classification and accuracy both train with binary cross-entropy on logits
                loss = torch.nn.functional.binary_cross_entropy_with_logits(out[mask], y[mask])
            loss.backward()
            optimiser.step()
            losses.append(loss.item())
        last_loss = float(np.mean(losses))
        valid_score = sign * score(task, *_unscale(predict(model, valid), mean, std, task))
        if valid_score > best:
            best, best_test = valid_score, score(task, *_unscale(predict(model, test), mean, std, task))
    return {"test": best_test, "train_loss": last_loss}


def _unscale(pair: tuple[np.ndarray, np.ndarray], mean, std, task: str) -> tuple[np.ndarray, np.ndarray]:
    """Undo the target standardisation of regression outputs (classification logits are kept)."""
    out, y = pair
    return (out * std.numpy() + mean.numpy(), y) if task == "regression" else (out, y)
