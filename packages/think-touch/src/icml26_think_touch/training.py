"""Pre-training on task A and fine-tuning on task B with any strategy (or LoRA), with memory records."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch
from icml26_shared import check_int, check_positive, derive
from torch import nn
from torch.nn import functional as F

from .baselines import apply_lora
from .data import Task
from .method import STRATEGIES, ThinkTouch, groups_by_module, make_strategy


@dataclass
class FineTuneResult:
    """What one fine-tuning run measured: losses on task B's training set (the optimisation objective),
    test accuracy, peak optimizer-state and gradient bytes, and how often each group was touched."""

    train_loss: float
    test_accuracy: float
    peak_state_bytes: int
    peak_grad_bytes: int
    touch_counts: np.ndarray
    curve: np.ndarray  # (evaluations,) training loss every ``eval_every`` steps, starting at step 0


def evaluate(model: nn.Module, X: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Mean cross-entropy and accuracy of ``model`` on (X, y)."""
    with torch.no_grad():
        logits = model(torch.as_tensor(X))
        target = torch.as_tensor(y)
        return float(F.cross_entropy(logits, target)), float((logits.argmax(1) == target).float().mean())


def pretrain(model: nn.Module, task: Task, steps: int, lr: float, batch_size: int, seed: int) -> nn.Module:
    """Full AdamW training of ``model`` on ``task`` (the "pre-trained model" of the miniature)."""
    steps, batch_size = check_int("steps", steps, 1), check_int("batch_size", batch_size, 1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=check_positive("lr", lr), weight_decay=0.0)
    X, y = torch.as_tensor(task.X_train), torch.as_tensor(task.y_train)
    rng = np.random.default_rng(derive(seed, "pretrain-batches"))
    for _ in range(steps):
        idx = torch.as_tensor(rng.integers(0, len(y), batch_size))
        loss = F.cross_entropy(model(X[idx]), y[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model


def fine_tune(
    model: nn.Module,
    task: Task,
    strategy: str,
    k: int | None,
    steps: int,
    lr: float,
    batch_size: int,
    seed: int,
    switch_every: int = 1,
    gamma: float = 0.1,
    lora_rank: int | None = None,
    eval_every: int = 25,
) -> FineTuneResult:
    """Fine-tune a copy of ``model`` on ``task`` for ``steps`` AdamW steps touching k groups per round
    (``strategy`` from ``STRATEGIES``; k = None means all groups). With ``lora_rank`` the copy is wrapped
    in LoRA adapters first and its (A, B) pairs are the groups. Every run with the same ``seed`` sees the
    same batches, so strategies are compared on paired data."""
    steps, batch_size = check_int("steps", steps, 1), check_int("batch_size", batch_size, 1)
    eval_every = check_int("eval_every", eval_every, 1)
    model = copy.deepcopy(model)
    if lora_rank is not None:
        apply_lora(model, lora_rank)
    _, groups = groups_by_module(model)
    options = {"gamma": gamma} if strategy == "bandit" else {}
    rule = make_strategy(strategy, len(groups), len(groups) if k is None else k, **options)
    optimizer = ThinkTouch(groups, rule, lr=lr, switch_every=switch_every, seed=derive(seed, "select", strategy))
    X, y = torch.as_tensor(task.X_train), torch.as_tensor(task.y_train)
    rng = np.random.default_rng(derive(seed, "batches"))
    curve = []
    for t in range(steps):
        if t % eval_every == 0:
            curve.append(evaluate(model, task.X_train, task.y_train)[0])
        idx = torch.as_tensor(rng.integers(0, len(y), batch_size))
        optimizer.step(lambda idx=idx: F.cross_entropy(model(X[idx]), y[idx]))
    model.requires_grad_(False)
    train_loss, _ = evaluate(model, task.X_train, task.y_train)
    curve.append(train_loss)
    _, test_accuracy = evaluate(model, task.X_test, task.y_test)
    return FineTuneResult(
        train_loss=train_loss,
        test_accuracy=test_accuracy,
        peak_state_bytes=optimizer.peak_state_bytes,
        peak_grad_bytes=optimizer.peak_grad_bytes,
        touch_counts=optimizer.touch_counts,
        curve=np.array(curve),
    )


__all__ = ["STRATEGIES", "FineTuneResult", "evaluate", "fine_tune", "pretrain"]
