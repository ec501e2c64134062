"""The quick meta-planner: a small autoregressive policy that emits a configuration token by token.

pi_theta(y | x) = prod_k pi_theta(y_k | x, y_<k) over the four axes (topology, initialization, adaptation,
navigation), so the log-probability of a whole "program" y exists and SFT and DPO apply exactly as to an LLM's
token sequence. x is the task's feature vector (``world.Task.features``). This stands in for Todo-14B (Qwen3-14B)
in the quick config; ``textplanner.py`` is the SmolLM2 meta-planner of the paper config.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np
import torch
from icml26_shared import check_int, check_positive, fail
from torch import nn

from .factory import AXES, PlannerConfig
from .method import DPO_BETA, dpo_loss

SIZES = tuple(len(v) for v in AXES.values())  # (4, 3, 3, 2)


class ConfigPolicy(nn.Module):
    """pi_theta(config | task features): an MLP encoder and one softmax head per axis that also reads the
    one-hot tokens already emitted (axis order of ``AXES``)."""

    def __init__(self, n_features: int, hidden: int = 32) -> None:
        super().__init__()
        check_int("n_features", n_features, 1)
        check_int("hidden", hidden, 1)
        self.encoder = nn.Sequential(nn.Linear(n_features, hidden), nn.Tanh())
        self.heads = nn.ModuleList(nn.Linear(hidden + sum(SIZES[:k]), SIZES[k]) for k in range(len(SIZES)))

    def _features(self, x) -> torch.Tensor:
        x = torch.as_tensor(np.asarray(x, dtype=np.float32))
        if x.ndim != 2 or x.shape[1] != self.encoder[0].in_features or not torch.isfinite(x).all():
            raise fail("features", tuple(x.shape), f"a finite (batch, {self.encoder[0].in_features}) array")
        return x

    def log_prob(self, x, configs: Sequence[PlannerConfig]) -> torch.Tensor:
        """log pi_theta(y | x) for each row: (batch,) = sum over the four axes of the token log-probabilities."""
        x = self._features(x)
        if len(configs) != x.shape[0]:
            raise fail("configs", len(configs), f"one configuration per feature row ({x.shape[0]})")
        idx = torch.tensor([c.indices for c in configs], dtype=torch.long)  # (batch, 4)
        h, prev, total = self.encoder(x), [], torch.zeros(x.shape[0])
        for k, head in enumerate(self.heads):
            logits = head(torch.cat([h, *prev], dim=1))
            total = total + torch.log_softmax(logits, dim=1).gather(1, idx[:, k : k + 1])[:, 0]
            prev.append(nn.functional.one_hot(idx[:, k], SIZES[k]).float())
        return total

    @torch.no_grad()
    def decode(self, x, generator: torch.Generator | None = None) -> list[PlannerConfig]:
        """One configuration per row: greedy (argmax per token) without ``generator``, else sampled with it."""
        x = self._features(x)
        h, prev, chosen = self.encoder(x), [], []
        for k, head in enumerate(self.heads):
            logits = head(torch.cat([h, *prev], dim=1))
            if generator is None:
                token = logits.argmax(1)
            else:
                token = torch.multinomial(torch.softmax(logits, 1), 1, generator=generator)[:, 0]
            chosen.append(token)
            prev.append(nn.functional.one_hot(token, SIZES[k]).float())
        return [PlannerConfig.from_indices(tuple(int(t[i]) for t in chosen)) for i in range(x.shape[0])]


def train_sft(
    policy: ConfigPolicy, x, configs: Sequence[PlannerConfig], steps: int = 300, lr: float = 1e-2
) -> list[float]:
    """Supervised fine-tuning on successful generations: minimise -mean log pi_theta(y | x) (full batch, Adam)."""
    check_int("steps", steps, 1)
    check_positive("lr", lr)
    if len(configs) == 0:
        raise fail("configs", configs, "at least one successful (task, configuration) example")
    optimiser = torch.optim.Adam(policy.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        loss = -policy.log_prob(x, configs).mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(float(loss.detach()))
    return losses


def train_dpo(
    policy: ConfigPolicy,
    x,
    chosen: Sequence[PlannerConfig],
    rejected: Sequence[PlannerConfig],
    beta: float = DPO_BETA,
    steps: int = 300,
    lr: float = 1e-2,
) -> tuple[ConfigPolicy, list[float]]:
    """DPO of a copy of ``policy`` against ``policy`` itself frozen as the reference (the SFT model).

    Returns the trained copy and the loss per step; ``policy`` is left unchanged.
    """
    check_int("steps", steps, 1)
    check_positive("lr", lr)
    check_positive("beta", beta)
    if len(chosen) == 0 or len(chosen) != len(rejected):
        raise fail(
            "rejected", len(rejected), f"as many rejected as chosen configurations ({len(chosen)}), at least one"
        )
    reference = policy
    with torch.no_grad():
        ref_chosen, ref_rejected = reference.log_prob(x, chosen), reference.log_prob(x, rejected)
    trained = copy.deepcopy(policy)
    optimiser = torch.optim.Adam(trained.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        loss = dpo_loss(trained.log_prob(x, chosen), trained.log_prob(x, rejected), ref_chosen, ref_rejected, beta)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(float(loss.detach()))
    return trained, losses
