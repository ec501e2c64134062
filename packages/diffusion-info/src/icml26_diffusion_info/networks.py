"""A class-conditional entropy-matching network, its loss and training (torch).

The network outputs ``e_theta(x, t, c) ~ grad log p_t(x | c) - grad log p_eq(x)`` (the NeuralEntropy
"entropy matching" parameterisation), so the score is ``s = -x / kappa^2 + e_theta`` and the entropy
production rate is ``1/2 sigma^2 ||e_theta||^2`` with no further model calls. Class ``n_classes`` is
the null label used for the unconditional score (classifier-free guidance training by label dropout).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from icml26_shared import check_array, check_closed_interval, check_int, fail
from torch import nn

from .method import VPSchedule


class FourierTime(nn.Module):
    """Fixed random Fourier features of t (the official GRF time embedding, scale 10)."""

    def __init__(self, size: int, scale: float = 10.0, seed: int = 0):
        super().__init__()
        generator = torch.Generator().manual_seed(seed)
        self.register_buffer("B", scale * torch.randn(size // 2, generator=generator))

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        angle = 2 * math.pi * t[:, None] * self.B[None]
        return torch.cat([torch.sin(angle), torch.cos(angle)], dim=1)


class EntropyMatchingMLP(nn.Module):
    """e_theta(x, t, c) for flat images x (n, D), times t (n,), labels c (n,) in [0, n_classes].

    ``e_theta = h(x, t, c) / std(t)``: our scaling of the output [INF], so that the network output h is
    O(1) at every t; the last layer starts at zero, so the untrained model is the equilibrium score.
    """

    def __init__(self, dim: int, n_classes: int, schedule: VPSchedule, width: int = 256, depth: int = 3):
        super().__init__()
        self.dim, self.n_classes = check_int("dim", dim, 1), check_int("n_classes", n_classes, 1)
        self.schedule = schedule
        self.time = FourierTime(width)
        self.label = nn.Embedding(n_classes + 1, width)  # index n_classes = null label
        self.inp = nn.Linear(dim, width)
        self.blocks = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))
        self.cond = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))
        self.norms = nn.ModuleList(nn.LayerNorm(width) for _ in range(depth))
        self.out = nn.Linear(width, dim)
        nn.init.zeros_(self.out.weight)
        nn.init.zeros_(self.out.bias)

    def std(self, t: torch.Tensor) -> torch.Tensor:
        s = self.schedule
        log_mu2 = -s.beta_min * t - 0.5 * (s.beta_max - s.beta_min) * t**2
        return s.kappa * torch.sqrt(-torch.expm1(log_mu2))

    def forward(self, x: torch.Tensor, t: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise fail("x", tuple(x.shape), f"a batch of shape (n, {self.dim})")
        if c.shape != (x.shape[0],) or t.shape != (x.shape[0],):
            raise fail("c", tuple(c.shape), f"one label and one time per sample, shape ({x.shape[0]},)")
        embed = self.time(t) + self.label(c)
        h = self.inp(x)
        for block, cond, norm in zip(self.blocks, self.cond, self.norms, strict=True):
            h = h + torch.nn.functional.silu(norm(block(h) + cond(embed)))
        return self.out(h) / self.std(t)[:, None]


def entropy_matching_loss(model: EntropyMatchingMLP, x0: torch.Tensor, c: torch.Tensor, eps: float, generator):
    """E || (-x_t / kappa^2 + e_theta(x_t, t, c)) std(t) + z ||^2 with t ~ U[eps, 1] (official loss)."""
    s = model.schedule
    t = eps + (1 - eps) * torch.rand(x0.shape[0], generator=generator)
    z = torch.randn(x0.shape, generator=generator)
    log_mu2 = -s.beta_min * t - 0.5 * (s.beta_max - s.beta_min) * t**2
    mu, std = torch.exp(0.5 * log_mu2)[:, None], model.std(t)[:, None]
    x_t = mu * x0 + std * z
    score = -x_t / s.kappa**2 + model(x_t, t, c)
    return torch.mean(torch.sum((score * std + z) ** 2, dim=1))


def train_entropy_matching(
    x0,
    labels,
    n_classes: int,
    schedule: VPSchedule,
    seed: int,
    steps: int = 2000,
    batch_size: int = 256,
    lr: float = 2e-3,
    p_uncond: float = 0.1,
    eps: float = 1e-5,
    width: int = 256,
) -> EntropyMatchingMLP:
    """Train a conditional entropy-matching MLP with label dropout ``p_uncond`` (for CFG) by Adam."""
    x0 = torch.as_tensor(check_array("x0", x0, ndim=2, dtype=np.float32))
    labels = torch.as_tensor(check_array("labels", labels, ndim=1)).long()
    if labels.shape[0] != x0.shape[0] or labels.min() < 0 or labels.max() >= n_classes:
        raise fail("labels", labels.numpy(), f"{x0.shape[0]} labels in [0, {n_classes - 1}]")
    check_closed_interval("p_uncond", p_uncond, 0.0, 1.0)
    steps = check_int("steps", steps, 1)
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    model = EntropyMatchingMLP(x0.shape[1], n_classes, schedule, width=width)
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=lr, total_steps=steps, pct_start=0.1)
    for _ in range(steps):
        index = torch.randint(0, x0.shape[0], (batch_size,), generator=generator)
        c = labels[index].clone()
        c[torch.rand(batch_size, generator=generator) < p_uncond] = n_classes  # null label
        loss = entropy_matching_loss(model, x0[index], c, eps, generator)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        scheduler.step()
    return model.eval()


def model_scores(model: EntropyMatchingMLP):
    """A ``scores(x_t, t, labels) -> (s_cond, s_uncond)`` callable (numpy in/out) for ``information_profile``."""

    def scores(x_t: np.ndarray, t: float, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = torch.as_tensor(x_t, dtype=torch.float32)
        times = torch.full((x.shape[0],), float(t))
        with torch.no_grad():
            e_cond = model(x, times, torch.as_tensor(labels).long())
            e_uncond = model(x, times, torch.full((x.shape[0],), model.n_classes))
        s_eq = -x / model.schedule.kappa**2
        return (s_eq + e_cond).double().numpy(), (s_eq + e_uncond).double().numpy()

    return scores
