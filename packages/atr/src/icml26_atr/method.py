"""Adaptive Token Refinement (ATR): two token-level operations for long-tailed LVLM fine-tuning.

1. The bounded adaptive loss on the *output* (answer) tokens: it filters the tokens the model already fits
   (loss below an adaptive threshold, so head tokens, which become easy first, drop out first), reweights the
   kept ones by how badly they are fitted, and bounds each token's loss.
2. The visual token mask on the *input* tokens: a random share of the visual tokens is replaced by a learned
   [MASK] embedding, and the answer is trained from the full and the masked view ("augmenting the
   probability paths": the answer must be reachable from several partial visual evidences).

Neither uses the class frequencies: ATR is distribution-agnostic. The paper's equations are not public
(abstract only); every formula here is our reconstruction [INF] and every constant is an argument.

Per answer token t (eqs. numbered as in the README, all [INF]):
    (1) l_t = -log p_t,  p_t = softmax(z_t)[y_t]
    (2) tau <- beta * tau + (1 - beta) * quantile_q({l_t})          adaptive filter threshold, no class prior
    (3) m_t = 1[l_t >= tau]                                           keep-mask
    (4) w_t = clip((1 - p_t)^gamma / mean_{m}((1 - p)^gamma), 0, w_max)   bounded reweighting (stop-gradient)
    (5) l~_t = l_t (default)  or  min(l_t, B), B = -log(eps)  or  (1 - p_t^q) / q   optional bounded token loss
    (6) L_out = sum_t m_t w_t l~_t / sum_t m_t
    (7) L = lambda_full L_out(full view) + lambda_mask L_out(masked view) [+ kl KL(p_full || p_mask)]
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from icml26_shared import check_choice, check_closed_interval, check_number, check_positive, fail
from torch import nn

from .data import IGNORE
from .portable import log_softmax

BOUNDS = ("none", "truncate", "gce")


def check_token_inputs(logits: torch.Tensor, targets: torch.Tensor) -> None:
    """Logits (..., V) and integer targets (...) of the same leading shape, finite logits, >= 1 scored token."""
    if logits.ndim < 2 or tuple(logits.shape[:-1]) != tuple(targets.shape):
        raise fail("targets", tuple(targets.shape), f"the leading shape of logits {tuple(logits.shape)}")
    if targets.dtype not in (torch.int64, torch.int32):
        raise fail("targets", targets.dtype, "integer token ids")
    valid = targets != IGNORE
    if not valid.any():
        raise fail("targets", tuple(targets.shape), f"at least one scored token (not all {IGNORE})")
    if not torch.isfinite(logits).all():
        raise fail("logits", "non-finite values", "finite logits")
    bad = valid & ((targets < 0) | (targets >= logits.shape[-1]))
    if bad.any():
        raise fail("targets", targets[bad][:3].tolist(), f"ids in [0, {logits.shape[-1] - 1}] or {IGNORE}")


def at_least_float32(x: torch.Tensor) -> torch.Tensor:
    """``x`` in float32 when it is in a lower precision (bfloat16/float16 on a GPU); float64 stays float64."""
    return x.to(torch.promote_types(x.dtype, torch.float32))


def token_log_probs(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """log p_t of every scored token, flattened to (N,) in order (eq. 1: l_t = -log p_t)."""
    check_token_inputs(logits, targets)
    valid = targets != IGNORE
    return log_softmax(at_least_float32(logits[valid])).gather(-1, targets[valid][:, None])[:, 0]


def bounded_token_loss(log_p: torch.Tensor, bound: str = "none", eps: float = 1e-3, q: float = 0.7):
    """Eq. (5): ``-log p`` ("none": only the weights are bounded), ``min(-log p, -log eps)`` ("truncate"), or
    the generalised cross-entropy ``(1 - p^q) / q`` ("gce", Zhang & Sabuncu 2018), bounded by ``1 / q``.

    A bounded loss has (near) zero gradient on tokens far above the bound: "truncate" and "gce" stop learning
    any token whose probability has fallen below eps (a new or rare answer word), hence the default."""
    check_choice("bound", bound, BOUNDS)
    if bound == "none":
        return -log_p
    if bound == "truncate":
        check_closed_interval("eps", eps, 0.0, 1.0)
        if eps in (0.0, 1.0):
            raise fail("eps", eps, "a probability in (0, 1): the bound B = -log(eps) must be finite and > 0")
        return torch.clamp(-log_p, max=-math.log(eps))
    if not 0 < check_number("q", q) <= 1:
        raise fail("q", q, "a number in (0, 1]")
    return (1 - torch.exp(q * log_p)) / q


def token_weights(p: torch.Tensor, keep: torch.Tensor, gamma: float = 1.0, w_max: float = 5.0) -> torch.Tensor:
    """Eq. (4): ``(1 - p)^gamma`` normalised to mean 1 over the kept tokens, clipped to [0, w_max]; no gradient."""
    if check_number("gamma", gamma) < 0:
        raise fail("gamma", gamma, "a number >= 0")
    if check_number("w_max", w_max) < 1:
        raise fail("w_max", w_max, "a bound >= 1 (the mean weight is 1)")
    hardness = (1 - p.detach()).clamp_min(0) ** gamma
    mean = hardness[keep].mean() if keep.any() else hardness.new_tensor(1.0)
    return (hardness / mean.clamp_min(1e-12)).clamp(0, w_max)


class BoundedAdaptiveLoss(nn.Module):
    """ATR's bounded adaptive loss on the output tokens (eqs. 1-6).

    Args:
        quantile: q of the filter; tokens below the running q-quantile of token losses are dropped.
        momentum: beta of the running threshold (eq. 2); 0 uses each batch's own quantile.
        gamma: exponent of the reweighting (eq. 4); 0 turns reweighting off.
        w_max: upper bound of a token's weight.
        bound: "none" (the default: only the weights are bounded), "truncate" (min(l, -log eps)) or "gce"
            ((1 - p^q) / q).
        eps, q: the bound's constant.

    The threshold ``tau`` is state (a buffer): it is updated in training mode when ``update`` is True.
    """

    def __init__(
        self,
        quantile: float = 0.3,
        momentum: float = 0.9,
        gamma: float = 1.0,
        w_max: float = 5.0,
        bound: str = "none",
        eps: float = 1e-3,
        q: float = 0.7,
    ) -> None:
        super().__init__()
        if not 0 <= check_number("quantile", quantile) < 1:
            raise fail("quantile", quantile, "a number in [0, 1)")
        if not 0 <= check_number("momentum", momentum) < 1:
            raise fail("momentum", momentum, "a number in [0, 1)")
        token_weights(torch.zeros(1), torch.ones(1, dtype=torch.bool), gamma, w_max)  # validates gamma, w_max
        bounded_token_loss(torch.zeros(1), bound, eps, q)  # validates bound, eps, q
        self.quantile, self.momentum, self.gamma, self.w_max = quantile, momentum, gamma, w_max
        self.bound, self.eps, self.q = bound, eps, q
        # eq. (2), nan until the first batch; a float64 scalar, so a float64 run keeps every bit of it
        self.register_buffer("tau", torch.tensor(float("nan"), dtype=torch.float64))

    def forward(self, logits: torch.Tensor, targets: torch.Tensor, update: bool = True) -> torch.Tensor:
        log_p = token_log_probs(logits, targets)
        loss = -log_p  # eq. (1)
        if self.training and update:  # eq. (2): running quantile of the batch's token losses
            batch_tau = torch.quantile(loss.detach(), self.quantile)
            first = torch.isnan(self.tau)
            self.tau.copy_(torch.where(first, batch_tau, self.momentum * self.tau + (1 - self.momentum) * batch_tau))
        tau = self.tau if not torch.isnan(self.tau) else loss.detach().min()
        keep = loss.detach() >= tau  # eq. (3)
        w = token_weights(log_p.exp(), keep, self.gamma, self.w_max)  # eq. (4)
        bounded = bounded_token_loss(log_p, self.bound, self.eps, self.q)  # eq. (5)
        return (keep * w * bounded).sum() / keep.sum().clamp_min(1)  # eq. (6)


def visual_token_mask(
    batch: int, num_visual: int, r_max: float = 0.5, generator: torch.Generator | None = None, device=None
) -> torch.Tensor:
    """ATR's visual token mask: a ratio r ~ U(0, r_max) per step, then round(r * n) random visual tokens of
    every sample are masked. Returns a bool (batch, num_visual), True = replaced by [MASK]."""
    check_closed_interval("r_max", r_max, 0.0, 1.0)
    r = torch.rand((), generator=generator).item() * r_max
    k = round(r * num_visual)
    order = torch.rand(batch, num_visual, generator=generator).argsort(dim=1)
    return (order < k).to(device)


TokenLoss = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def two_view_loss(
    model: nn.Module,
    visual: torch.Tensor,
    text: torch.Tensor,
    targets: torch.Tensor,
    token_loss: TokenLoss,
    r_max: float = 0.5,
    lambda_full: float = 1.0,
    lambda_mask: float = 0.5,
    kl: float = 0.0,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Eq. (7) for visual tokens (b, n, d) (``TinyVLM.visual_tokens``) and text (b, t): the token loss on the full
    view plus ``lambda_mask`` times it on a visually masked view (the same tokens, some replaced by [MASK]), and
    optionally the consistency KL(p_full || p_masked) on the answer tokens. ``token_loss`` is CE (ATR-VTM) or
    a ``BoundedAdaptiveLoss`` (ATR); the masked view does not move the adaptive threshold."""
    check_positive("lambda_full", lambda_full)
    if check_number("lambda_mask", lambda_mask) < 0:
        raise fail("lambda_mask", lambda_mask, "a weight >= 0")
    if check_number("kl", kl) < 0:
        raise fail("kl", kl, "a weight >= 0")
    full = model.language_model(visual, text)
    mask = visual_token_mask(visual.shape[0], visual.shape[1], r_max, generator, visual.device)
    masked = model.language_model(visual, text, mask)
    extra = {"update": False} if isinstance(token_loss, BoundedAdaptiveLoss) else {}
    loss = lambda_full * token_loss(full, targets) + lambda_mask * token_loss(masked, targets, **extra)
    if kl > 0:
        valid = targets != IGNORE
        log_full, log_masked = log_softmax(full[valid]), log_softmax(masked[valid])
        target = log_full.detach()  # KL(p_full || p_masked), summed over tokens, averaged over them (batchmean)
        loss = loss + kl * (target.exp() * (target - log_masked)).sum() / target.shape[0]
    return loss
