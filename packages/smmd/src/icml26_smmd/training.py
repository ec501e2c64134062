"""Training with a numeric-target objective and greedy evaluation of exact accuracy and MAE."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import torch
from icml26_shared import check_int, check_positive, fail
from torch import nn

from .data import TokenTask
from .tokens import NumericVocab


def fit(
    module: nn.Module,
    parameters: Iterable[nn.Parameter],
    n: int,
    batch_loss: Callable[[torch.Tensor], torch.Tensor],
    epochs: int,
    seed: int,
    lr: float,
    batch_size: int,
    weight_decay: float = 0.0,
) -> list[float]:
    """AdamW on ``parameters`` over shuffled mini-batches of ``n`` examples; ``batch_loss(rows)`` returns the
    loss of the rows (a LongTensor of indices). Mean loss per epoch. The one training loop of the package: the
    toy models (``train``) and the LLM's trained blocks (``llm.finetune``) both run it."""
    epochs = check_int("epochs", epochs, 1)
    batch_size = check_int("batch_size", batch_size, 1)
    check_positive("lr", lr)
    optimizer = torch.optim.AdamW(parameters, lr=lr, weight_decay=weight_decay)
    generator = torch.Generator().manual_seed(seed)
    history = []
    module.train()
    for _ in range(epochs):
        order, total = torch.randperm(n, generator=generator), 0.0
        for start in range(0, n, batch_size):
            batch = order[start : start + batch_size]
            loss = batch_loss(batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(batch)
        history.append(total / n)
    return history


def train(
    model: nn.Module,
    objective: nn.Module,
    task: TokenTask,
    epochs: int,
    seed: int,
    lr: float = 2e-3,
    batch_size: int = 64,
    weight_decay: float = 0.0,
) -> list[float]:
    """AdamW on ``objective(model(x), y)`` over shuffled mini-batches; mean loss per epoch."""
    x, y = torch.as_tensor(task.inputs), torch.as_tensor(task.targets)
    if len(x) != len(y):
        raise fail("task", (len(x), len(y)), "as many inputs as target rows")
    return fit(
        model,
        model.parameters(),
        len(x),
        lambda rows: objective(model(x[rows]), y[rows]),
        epochs,
        seed,
        lr,
        batch_size,
        weight_decay,
    )


@dataclass(frozen=True)
class Prediction:
    """Greedy answers: full-vocabulary argmax tokens (n, T) and the numeric reading (n, k) of V_num."""

    tokens: np.ndarray
    numbers: np.ndarray


@torch.no_grad()
def predict(model: nn.Module, inputs: np.ndarray, vocab: NumericVocab, numeric_positions: list[int]) -> Prediction:
    """Argmax per position; at ``numeric_positions`` also the value of the argmax over V_num only."""
    model.eval()
    logits = torch.cat([model(torch.as_tensor(inputs[i : i + 512])) for i in range(0, len(inputs), 512)])
    numeric = vocab.value_probabilities(logits[:, numeric_positions]).argmax(-1)  # the most probable value
    return Prediction(logits.argmax(-1).numpy(), vocab.values[numeric].numpy())


def exact_accuracy(prediction: Prediction, task: TokenTask) -> float:
    """Fraction of answers whose every token (numbers, separators, <eos>) is right."""
    return float((prediction.tokens == task.targets).all(axis=1).mean())
