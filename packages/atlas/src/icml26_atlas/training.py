"""Outer-loop training and evaluation of a recall model on MQAR (Adam on the cross-entropy at queries)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from icml26_shared import check_int, check_positive

from .data import IGNORE, mqar_batch
from .layers import RecallModel


def recall_loss(model: RecallModel, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over the scored (query) positions."""
    logits = model(tokens)
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE)


def train_recall(model: RecallModel, steps: int, batch: int, n_pairs: int, seed: int, lr: float = 3e-3) -> list[float]:
    """Adam with linear warm-up (10%) and cosine decay on fresh MQAR batches; the loss per step."""
    check_int("steps", steps, 1)
    check_positive("lr", lr)
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    warmup = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda s: min(1.0, (s + 1) / warmup) * 0.5 * (1 + torch.cos(torch.tensor(torch.pi * s / steps)).item()),
    )
    losses = []
    model.train()
    for _ in range(steps):
        tokens, targets = mqar_batch(batch, n_pairs, model.vocab, generator)
        loss = recall_loss(model, tokens, targets)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
    return losses


@torch.no_grad()
def recall_accuracy(model: RecallModel, n_sequences: int, n_pairs: int, seed: int) -> float:
    """Fraction of queries whose arg-max prediction is the stored value, on fresh sequences."""
    check_int("n_sequences", n_sequences, 1)
    model.eval()
    tokens, targets = mqar_batch(n_sequences, n_pairs, model.vocab, torch.Generator().manual_seed(seed))
    scored = targets != IGNORE
    return (model(tokens).argmax(-1)[scored] == targets[scored]).float().mean().item()
