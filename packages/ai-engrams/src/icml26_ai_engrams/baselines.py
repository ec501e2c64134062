"""What engram erasure is compared with: gradient-ascent unlearning and a random edit of equal norm."""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch
import torch.nn.functional as F
from icml26_shared import check_int, check_positive, fail
from torch import nn

from .method import Engram

OPTIMIZERS = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}


def gradient_ascent(
    model: nn.Module,
    X_forget: torch.Tensor,
    y_forget: torch.Tensor,
    lr: float = 1e-2,
    max_steps: int = 200,
    stop: Callable[[nn.Module], bool] | None = None,
    optimizer: str = "sgd",
) -> tuple[nn.Module, int]:
    """GA unlearning (as in the authors' ``unlearning/algos/GA.py``): optimizer steps that *increase* the
    cross-entropy of ``model(X_forget)`` against ``y_forget`` on the forget set. Full-batch; stops after
    ``max_steps`` or when ``stop(model)`` is true (checked before each step). Returns the edited copy and the
    number of steps taken.

    Logits may be (n, C) with labels (n,) (a classifier) or (n, T, V) with labels (n, T) (a language model,
    -100 marking the positions that do not count). ``optimizer`` is "sgd" (plain) or "adam" (no weight decay).
    """
    if X_forget.shape[0] == 0 or X_forget.shape[0] != y_forget.shape[0]:
        raise fail("X_forget", tuple(X_forget.shape), f"a non-empty batch with one label each ({len(y_forget)})")
    check_positive("lr", lr)
    check_int("max_steps", max_steps, 1)
    if optimizer not in OPTIMIZERS:
        raise fail("optimizer", optimizer, f"one of {sorted(OPTIMIZERS)}")
    edited = copy.deepcopy(model).eval()
    opt = OPTIMIZERS[optimizer](edited.parameters(), lr=lr)
    for step in range(max_steps):
        if stop is not None and stop(edited):
            return edited, step
        opt.zero_grad()
        logits = edited(X_forget)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y_forget.reshape(-1))  # -100: ignored
        (-loss).backward()  # ascent on the forget loss
        opt.step()
    return edited.eval(), max_steps


def random_direction(engram: Engram, generator: torch.Generator) -> Engram:
    """A Gaussian edit with each layer's Frobenius norm (weight and bias together) equal to the engram's."""
    if not isinstance(generator, torch.Generator):
        raise fail("generator", generator, "a torch.Generator")
    weight, bias = {}, {}
    for name, norm in engram.norms().items():
        e = engram.augmented(name)
        r = torch.randn(e.shape, generator=generator, dtype=e.dtype)
        r = r * (norm / float(torch.linalg.norm(r)))
        has_bias = engram.bias[name] is not None
        weight[name] = r[:, :-1] if has_bias else r
        bias[name] = r[:, -1] if has_bias else None
    return Engram(weight, bias)
