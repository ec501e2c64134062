"""Touch: update only the selected parameter groups, with optimizer state only for them.

``ThinkTouch`` runs the paradigm of the paper on any torch model split into G parameter groups. Each
round of ``switch_every`` steps it asks a selection strategy (the Exp3.M bandit of ``selection.py``, or a
baseline rule) for k groups S_t, freezes every other group (``requires_grad=False``, so autograd computes
no weight gradient for them), and steps AdamW on the touched groups only:

    theta_{t+1,g} = theta_{t,g} - lr * u_{t,g}   for g in S_t,   theta_{t+1,g} = theta_{t,g} otherwise.

AdamW's moments exist only for touched groups: a group's state is deleted when it leaves S_t (as LISA and
BAdam do), so the optimizer-state memory is that of the selected groups, measured here in bytes. The
bandit's reward for a touched group is its squared gradient norm ``||grad_g L_t||^2`` averaged over the
round and divided by a decaying running maximum (``RunningMax``): the quantity whose sum over touched
groups the descent lemma turns into guaranteed loss decrease [INF: our reconstruction; the paper's exact
reward is not public].
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from icml26_shared import check_choice, check_int, check_number, check_positive, fail
from torch import nn

from .baselines import Cyclic, Excluding, FullFineTuning, RandomK
from .selection import Exp3M, GreedyOracle, RunningMax, Strategy

STRATEGIES: dict[str, type[Strategy]] = {
    "bandit": Exp3M,
    "greedy": GreedyOracle,
    "random": RandomK,
    "cyclic": Cyclic,
    "full": FullFineTuning,
    "excluding": Excluding,
}


def make_strategy(name: str, G: int, k: int, **options) -> Strategy:
    """The selection strategy ``name`` (one of ``STRATEGIES``) over G groups with budget k."""
    check_choice("strategy", name, STRATEGIES)
    return STRATEGIES[name](G, k, **options)


def check_groups(groups: Sequence[Sequence[nn.Parameter]], model: nn.Module | None = None) -> list[list]:
    """Parameter groups: a non-empty list of non-empty, disjoint lists of parameters; with ``model``,
    every parameter of the model that requires a gradient must be in a group."""
    groups = [list(g) for g in groups]
    if not groups:
        raise fail("groups", groups, "at least one parameter group")
    seen: set[int] = set()
    for index, group in enumerate(groups):
        if not group:
            raise fail("groups", f"group {index} is empty", "non-empty parameter groups")
        for p in group:
            if not isinstance(p, torch.Tensor):
                raise fail("groups", type(p).__name__, "groups of torch parameters")
            if id(p) in seen:
                raise fail("groups", f"a parameter of shape {tuple(p.shape)} in two groups", "disjoint groups")
            seen.add(id(p))
    if model is not None:
        missing = [name for name, p in model.named_parameters() if p.requires_grad and id(p) not in seen]
        if missing:
            raise fail("groups", f"parameters {missing} are in no group", "groups covering every trainable parameter")
    return groups


def groups_by_module(model: nn.Module) -> tuple[list[str], list[list[nn.Parameter]]]:
    """One group per module that owns trainable parameters directly (a Linear's weight and bias; for a
    LoRA layer its A and B): the default grouping [INF: one group per weight matrix]."""
    names, groups = [], []
    for name, module in model.named_modules():
        params = [p for p in module.parameters(recurse=False) if p.requires_grad]
        if params:
            names.append(name or type(model).__name__)
            groups.append(params)
    return names, check_groups(groups, model)


def group_sq_norms(groups: Sequence[Sequence[torch.Tensor]]) -> np.ndarray:
    """``||grad_g||^2`` of each group (a parameter without a gradient counts 0), shape (G,)."""
    out = np.zeros(len(groups))
    with torch.no_grad():
        for index, group in enumerate(groups):
            out[index] = sum(float(p.grad.pow(2).sum()) for p in group if p.grad is not None)
    return out


def optimizer_state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes of every tensor the optimizer holds as state (AdamW: exp_avg, exp_avg_sq, step)."""
    return sum(
        value.numel() * value.element_size()
        for state in optimizer.state.values()
        for value in state.values()
        if isinstance(value, torch.Tensor)
    )


def gradient_bytes(params: Sequence[torch.Tensor]) -> int:
    """Bytes of the gradients currently stored on ``params``."""
    return sum(p.grad.numel() * p.grad.element_size() for p in params if p.grad is not None)


class ThinkTouch:
    """Selective AdamW over parameter groups: think (``strategy`` picks k of G), then touch (step them).

    ``step(closure)`` takes a closure that runs the forward pass on the step's batch and returns the loss;
    it does the backward pass itself, on the touched groups only (the greedy oracle first needs every
    group's gradient at the start of a round). ``peak_state_bytes`` and ``peak_grad_bytes`` record the
    memory actually held; ``touch_counts`` how often each group was selected (its empirical coverage).
    """

    def __init__(
        self,
        groups: Sequence[Sequence[nn.Parameter]],
        strategy: Strategy,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        weight_decay: float = 0.0,
        switch_every: int = 1,
        rho: float = 0.95,
        seed: int = 0,
    ) -> None:
        self.groups = check_groups(groups)
        if not isinstance(strategy, Strategy) or strategy.G != len(self.groups):
            raise fail("strategy", strategy, f"a selection Strategy over G={len(self.groups)} groups")
        self.strategy = strategy
        self.switch_every = check_int("switch_every", switch_every, 1)
        if check_number("weight_decay", weight_decay) < 0:
            raise fail("weight_decay", weight_decay, "a number >= 0")
        self.params = [p for group in self.groups for p in group]
        self.optimizer = torch.optim.AdamW(
            self.params, lr=check_positive("lr", lr), betas=betas, weight_decay=weight_decay
        )
        self.normalise = RunningMax(rho)
        self.rng = np.random.default_rng(seed)
        self.selected = np.arange(0)
        self.t = 0
        self._round_rewards: list[np.ndarray] = []
        self.touch_counts = np.zeros(len(self.groups), dtype=int)
        self.peak_state_bytes = 0
        self.peak_grad_bytes = 0

    def touch(self, selected: np.ndarray) -> None:
        """Make ``selected`` the trainable groups; drop the gradients and AdamW state of all others."""
        selected = np.asarray(selected, dtype=int)
        mask = np.zeros(len(self.groups), dtype=bool)
        mask[selected] = True
        for index, group in enumerate(self.groups):
            for p in group:
                p.requires_grad_(bool(mask[index]))
                if not mask[index]:
                    p.grad = None
                    self.optimizer.state.pop(p, None)
        self.selected = np.flatnonzero(mask)

    def _end_round(self) -> None:
        """Feed the round's mean normalised squared gradient norms of the touched groups to the strategy."""
        if self._round_rewards:
            mean = np.mean(self._round_rewards, axis=0)
            self.strategy.observe(self.selected, self.normalise(mean))
        self._round_rewards = []

    def step(self, closure: Callable[[], torch.Tensor]) -> float:
        """One training step; returns the loss of the batch (before the update)."""
        if self.t % self.switch_every == 0:
            self._end_round()
            if self.strategy.needs_full_gradient:
                self.touch(np.arange(len(self.groups)))
                loss = closure()
                loss.backward()
                self.peak_grad_bytes = max(self.peak_grad_bytes, gradient_bytes(self.params))
                self.touch(self.strategy.choose(self.rng, group_sq_norms(self.groups)))
            else:
                self.touch(self.strategy.choose(self.rng))
                loss = closure()
                loss.backward()
        else:
            loss = closure()
            loss.backward()
        self.peak_grad_bytes = max(self.peak_grad_bytes, gradient_bytes(self.params))
        sq_norms = group_sq_norms([self.groups[g] for g in self.selected])
        if not np.isfinite(sq_norms).all():
            raise fail("loss", float(loss.detach()), "a loss with finite gradients (lower the learning rate)")
        self._round_rewards.append(sq_norms)
        self.touch_counts[self.selected] += 1
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.peak_state_bytes = max(self.peak_state_bytes, optimizer_state_bytes(self.optimizer))
        self.t += 1
        return float(loss.detach())
