"""What the paper compares against: full fine-tuning, LoRA, and the fixed selection rules of LISA
(uniform random k groups) and BAdam (cyclic blocks); plus a rule that never touches some groups, the
counter-example of the coverage condition."""

from __future__ import annotations

import math

import numpy as np
import torch
from icml26_shared import check_int, check_positive, fail
from torch import nn

from .selection import Strategy


class FullFineTuning(Strategy):
    """Touch every group every step (k = G): standard full fine-tuning with AdamW."""

    def __init__(self, G: int, k: int | None = None) -> None:
        super().__init__(G, G if k is None else k)
        if self.k != self.G:
            raise fail("k", k, f"k = G = {self.G} for full fine-tuning")

    def choose(self, rng: np.random.Generator, sq_norms: np.ndarray | None = None) -> np.ndarray:
        return np.arange(self.G)


class RandomK(Strategy):
    """LISA-style selection [INF: over all groups]: k groups drawn uniformly without replacement."""

    def choose(self, rng: np.random.Generator, sq_norms: np.ndarray | None = None) -> np.ndarray:
        return np.sort(rng.choice(self.G, size=self.k, replace=False))


class Cyclic(Strategy):
    """BAdam-style block coordinate descent: k consecutive groups, cycling through all G in order."""

    def __init__(self, G: int, k: int) -> None:
        super().__init__(G, k)
        self.round = 0

    def choose(self, rng: np.random.Generator, sq_norms: np.ndarray | None = None) -> np.ndarray:
        chosen = (self.round * self.k + np.arange(self.k)) % self.G
        self.round += 1
        return np.sort(chosen)


class Excluding(Strategy):
    """Random k groups among all but ``never``: violates the coverage condition (a group with a
    non-zero gradient is touched with probability 0), so it can stall at a non-stationary point."""

    def __init__(self, G: int, k: int, never: tuple[int, ...] = (0,)) -> None:
        super().__init__(G, k)
        never = tuple(check_int("never", g, 0, self.G - 1) for g in never)
        self.allowed = np.array([g for g in range(self.G) if g not in never])
        if self.allowed.size < self.k:
            raise fail("never", never, f"at most G - k = {self.G - self.k} excluded groups")

    def choose(self, rng: np.random.Generator, sq_norms: np.ndarray | None = None) -> np.ndarray:
        return np.sort(rng.choice(self.allowed, size=self.k, replace=False))


class LoRALinear(nn.Module):
    """``y = W x + b + (alpha / r) B A x`` with W, b frozen; A (r, in) Kaiming-uniform, B (out, r) zero,
    so the adapted layer starts equal to the base layer (Hu et al., 2022)."""

    def __init__(self, base: nn.Linear, rank: int, alpha: float) -> None:
        super().__init__()
        self.rank = check_int("rank", rank, 1, min(base.in_features, base.out_features))
        self.scale = check_positive("alpha", alpha) / self.rank
        self.base = base.requires_grad_(False)
        self.A = nn.Parameter(torch.empty(self.rank, base.in_features))
        self.B = nn.Parameter(torch.zeros(base.out_features, self.rank))
        nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + self.scale * (x @ self.A.T) @ self.B.T


def apply_lora(model: nn.Module, rank: int, alpha: float | None = None) -> nn.Module:
    """Replace every ``nn.Linear`` of ``model`` (in place) by a LoRALinear of ``rank``; alpha defaults to
    2 rank [INF]. Every other parameter is frozen, so only the A, B factors train."""
    alpha = 2.0 * rank if alpha is None else alpha
    model.requires_grad_(False)
    targets = [(name, module) for name, module in model.named_modules() if isinstance(module, nn.Linear)]
    if not targets:
        raise fail("model", type(model).__name__, "a module with at least one nn.Linear")
    for name, module in targets:
        parent = model.get_submodule(name.rpartition(".")[0]) if "." in name else model
        setattr(parent, name.rpartition(".")[2], LoRALinear(module, rank, alpha))
    return model
