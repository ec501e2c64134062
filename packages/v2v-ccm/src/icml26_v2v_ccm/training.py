"""Training the tiny V2V MLLM (cross-entropy on the answers + the QSM distillation) and the pruned evaluation."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F
from icml26_shared import check_int, check_positive

from .data import QAData, patch_centres
from .model import CooperativeQA, Inputs, distillation_loss

TRAIN_KEEP_RATIOS = (0.125, 0.25, 0.5)  # token-drop augmentation [INF]


def batch_inputs(model: CooperativeQA, data: QAData, scenes: np.ndarray, questions: np.ndarray):
    """The model inputs of (scene, question) pairs: embedded question (b, 2, d), visual tokens (b, a, n, d),
    sequence positions (b, l, 2), and the answers (b,)."""
    pos = torch.from_numpy(patch_centres(data.grid, data.patch)).float()
    raw = torch.from_numpy(data.tokens[scenes]).float()
    visual = model.embed_tokens(raw, pos)
    ref, ego = torch.from_numpy(data.ref[scenes, questions]), torch.from_numpy(data.ego[scenes])
    question = model.embed_question(torch.from_numpy(data.qtype[scenes, questions]), ref, ego)
    positions = model.positions(ref, ego, pos, raw.shape[1])
    return Inputs(question, visual, positions), torch.from_numpy(data.answer[scenes, questions])


def augmentation_mask(shape: tuple[int, int, int], generator: torch.Generator) -> torch.Tensor:
    """Keep masks (b, a, n) for training [INF]: half the samples dense; the rest keep a random subset of each
    CAV's tokens at a ratio drawn uniformly from TRAIN_KEEP_RATIOS + (0,) (0 = ego-only); the ego's tokens are
    always kept. The model thus sees partial cooperation as it will at test time, whatever the selector."""
    b, a, n = shape
    keep = torch.ones(shape, dtype=torch.bool)
    pruned = torch.rand(b, generator=generator) < 0.5
    ratios = torch.tensor((*TRAIN_KEEP_RATIOS, 0.0))
    rho = ratios[torch.randint(len(ratios), (b,), generator=generator)]
    ranks = torch.rand(b, a - 1, n, generator=generator).argsort(-1).argsort(-1)
    senders = ranks < (rho * n).ceil()[:, None, None]
    keep[:, 1:] = torch.where(pruned[:, None, None], senders, keep[:, 1:])
    return keep


def train(
    model: CooperativeQA, data: QAData, steps: int, batch_size: int, lr: float, seed: int, log_every: int = 0
) -> list[float]:
    """Adam on cross-entropy + the QSM distillation loss (dense samples only); returns the per-step losses."""
    check_int("steps", steps, 1)
    check_int("batch_size", batch_size, 1)
    check_positive("lr", lr)
    generator = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, lr, total_steps=steps, pct_start=0.1)
    losses = []
    n_questions = data.qtype.shape[1]
    model.train()
    for _ in range(steps):
        scenes = rng.integers(len(data), size=batch_size)
        questions = rng.integers(n_questions, size=batch_size)
        inputs, answer = batch_inputs(model, data, scenes, questions)
        keep = augmentation_mask(inputs.visual.shape[:3], generator)
        logits, attentions = model(inputs, keep)
        loss = F.cross_entropy(logits, answer)
        dense = keep.flatten(1).all(1)
        if dense.any():
            dense_inputs = Inputs(*(t[dense] for t in inputs))
            loss = loss + distillation_loss(model, dense_inputs, [a[dense] for a in attentions])
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        schedule.step()
        losses.append(loss.item())
    model.eval()
    return losses


Selector = Callable[..., torch.Tensor]


@torch.no_grad()
def evaluate(
    model: CooperativeQA, data: QAData, select: Selector, batch_size: int = 256
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Answer every (scene, question) with the CAV tokens chosen by ``select(inputs, coverage, start)`` -> keep
    mask (b, a-1, n) (``start``: index of the batch's first question, for reproducible random streams).
    Returns correct (S*Q,) bool, question types (S*Q,), CAV tokens kept (S*Q,)."""
    S, Q = data.qtype.shape
    scenes, questions = np.divmod(np.arange(S * Q), Q)
    correct, kept = [], []
    for start in range(0, S * Q, batch_size):
        sl = slice(start, start + batch_size)
        inputs, answer = batch_inputs(model, data, scenes[sl], questions[sl])
        coverage = torch.from_numpy(data.coverage[scenes[sl]])
        senders = select(inputs, coverage, start)
        keep = torch.cat([torch.ones_like(senders[:, :1]), senders], 1)
        logits, _ = model(inputs, keep)
        correct.append((logits.argmax(-1) == answer).numpy())
        kept.append(senders.flatten(1).sum(1).numpy())
    return np.concatenate(correct), data.qtype[scenes, questions], np.concatenate(kept)
