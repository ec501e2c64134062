"""Layer norm, GELU, (log-)softmax and AdamW from operations that round the same on every torch CPU kernel path.

torch's fused CPU kernels for ``layer_norm``, ``gelu``, ``softmax``, ``log_softmax``, ``scaled_dot_product_attention``
and AdamW's ``lerp_``/``addcmul_`` round differently (by ~1e-16 in float64) on its vectorised (AVX2/AVX512) and
default (scalar) kernels; pre-training the VLM grows such differences by ~1e11 in 400 steps, so a verdict then
depends on the CPU (issue 27, README "Across machines"). The same functions built from elementwise arithmetic,
``exp``, ``log``, ``erf``, ``sqrt``, reductions and matrix products give the same bits on both paths (tested in
``tests/test_kernel_paths.py``), forward and backward. Each equals torch's own function up to rounding.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch
from icml26_shared import check_positive, fail
from torch import nn


def softmax(x: torch.Tensor) -> torch.Tensor:
    """softmax over the last axis; the maximum is subtracted without a gradient (softmax ignores the shift)."""
    e = torch.exp(x - x.amax(-1, keepdim=True).detach())
    return e / e.sum(-1, keepdim=True)


def log_softmax(x: torch.Tensor) -> torch.Tensor:
    """log softmax over the last axis."""
    shifted = x - x.amax(-1, keepdim=True).detach()
    return shifted - torch.log(torch.exp(shifted).sum(-1, keepdim=True))


def gelu(x: torch.Tensor) -> torch.Tensor:
    """The exact (erf) GELU, x Phi(x), as ``nn.GELU()``."""
    return x * (0.5 * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0)))))


class LayerNorm(nn.LayerNorm):
    """``nn.LayerNorm`` over the last axis (biased variance, eps inside the square root), in portable ops."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        centred = x - x.mean(-1, keepdim=True)
        normed = centred / torch.sqrt((centred * centred).mean(-1, keepdim=True) + self.eps)
        return normed * self.weight + self.bias


class AdamW:
    """AdamW (Loshchilov & Hutter 2019) with torch's defaults and update order: decoupled weight decay, then the
    bias-corrected Adam step. torch's own CPU AdamW updates the moments with ``lerp_`` and ``addcmul_``, which
    round differently on the two kernel paths; here each product and sum is its own correctly rounded op.

    Not a ``torch.optim.Optimizer``: that base class imports ``torch._dynamo`` when it is built (3.4 CPU s per
    process, measured under load), and nothing here uses its hooks, parameter groups or state dicts."""

    def __init__(
        self,
        params: Iterable[torch.Tensor],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
    ) -> None:
        self.params = list(params)
        if not self.params or not all(isinstance(p, torch.Tensor) for p in self.params):
            raise fail("params", self.params, "a non-empty iterable of tensors")
        self.lr, self.betas, self.eps, self.weight_decay = check_positive("lr", lr), betas, eps, weight_decay
        self.state: dict[torch.Tensor, dict] = {}

    def zero_grad(self) -> None:
        """Drop every gradient (``set_to_none``: the next backward writes a fresh one)."""
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        lr, (beta1, beta2), eps, decay = self.lr, self.betas, self.eps, self.weight_decay
        for p in self.params:
            if p.grad is None:
                continue
            state = self.state.setdefault(
                p, {"step": 0, "exp_avg": torch.zeros_like(p), "exp_avg_sq": torch.zeros_like(p)}
            )
            state["step"] += 1
            t, m, v, g = state["step"], state["exp_avg"], state["exp_avg_sq"], p.grad
            p.mul_(1 - lr * decay)
            m.mul_(beta1).add_(g * (1 - beta1))
            v.mul_(beta2).add_(g * g * (1 - beta2))
            denom = v.sqrt() / math.sqrt(1 - beta2**t) + eps
            p.sub_(m / denom * (lr / (1 - beta1**t)))
