"""Polynomial feature maps of keys and queries (paper Section 3, eqs. 4-5 and 22).

A matrix memory ``M`` of shape (d_v, D) can hold about ``D`` independent key-value pairs, where ``D`` is
the dimension of the feature map applied to the keys. ``phi_p(x) = [a_0, a_1 x, a_2 x^{(x)2}, ..., a_p
x^{(x)p}]`` raises ``D`` from ``d_k`` to ``O(d_k^p)``. With ``a_i = 1/sqrt(i!)`` the inner product of two
feature vectors is the Taylor polynomial of ``exp(q^T k)`` (eq. 22), the link to softmax attention.
"""

from __future__ import annotations

import math

import torch
from icml26_shared import check_int, fail
from torch import nn

MAX_FEATURE_DIM = 1 << 16  # refuse feature maps larger than this (the memory would be d_v x D per head)


def symmetric_square(x: torch.Tensor) -> torch.Tensor:
    """The upper triangle of ``x (x) x`` with sqrt(2) on the off-diagonal: (..., d) -> (..., d(d+1)/2).

    It keeps inner products: ``<sym(x), sym(y)> = (x^T y)^2``, with d(d+1)/2 instead of d^2 entries.
    """
    d = x.shape[-1]
    rows, cols = torch.triu_indices(d, d, device=x.device)
    scale = torch.full(rows.shape, math.sqrt(2.0), dtype=x.dtype, device=x.device).masked_fill(rows == cols, 1.0)
    return x[..., rows] * x[..., cols] * scale


def kronecker_power(x: torch.Tensor, power: int) -> torch.Tensor:
    """``x^{(x) power}`` flattened: (..., d) -> (..., d**power); ``<x^(x)p, y^(x)p> = (x^T y)^p``."""
    out = x
    for _ in range(power - 1):
        out = (out.unsqueeze(-1) * x.unsqueeze(-2)).flatten(-2)
    return out


def polynomial_feature_dim(d: int, degree: int) -> int:
    """Dimension of ``phi_p`` on ``d`` inputs: 1 + d + d(d+1)/2 + sum_{i>=3} d^i."""
    d = check_int("d", d, 1)
    degree = check_int("degree", degree, 1)
    dims = [1, d] + [d * (d + 1) // 2 if i == 2 else d**i for i in range(2, degree + 1)]
    return sum(dims)


def exp_kernel_coefficients(degree: int) -> torch.Tensor:
    """``a_i = 1/sqrt(i!)`` for i = 0..degree (eq. 22): then ``<phi(q), phi(k)> = sum_i (q^T k)^i / i!``."""
    degree = check_int("degree", degree, 1)
    return torch.tensor([1.0 / math.sqrt(math.factorial(i)) for i in range(degree + 1)])


class PolynomialFeatures(nn.Module):
    """``phi_p(x) = [a_0, a_1 x, a_2 sym(x (x) x), a_3 x^(x)3, ...]`` with learnable ``a_i`` (eqs. 4-5).

    ``a`` starts at the exponential-kernel coefficients ``1/sqrt(i!)`` (eq. 22; secondary notes write
    ``1/i!``, but the square root is what makes the inner product the Taylor series of exp). Degree 2
    uses the symmetric (upper-triangular) form, degree >= 3 the full Kronecker power.
    """

    def __init__(self, d: int, degree: int = 2, learnable: bool = True) -> None:
        super().__init__()
        self.d = check_int("d", d, 1)
        self.degree = check_int("degree", degree, 1)
        self.dim = polynomial_feature_dim(d, degree)
        if self.dim > MAX_FEATURE_DIM:
            raise fail("degree", degree, f"a degree whose feature dim <= {MAX_FEATURE_DIM} (d={d} gives {self.dim})")
        self.a = nn.Parameter(exp_kernel_coefficients(degree), requires_grad=learnable)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(..., d) -> (..., dim)."""
        if x.shape[-1] != self.d:
            raise fail("x", tuple(x.shape), f"a tensor whose last dim is d={self.d}")
        a = self.a.to(x.dtype)
        parts = [a[0] * torch.ones_like(x[..., :1]), a[1] * x]
        for i in range(2, self.degree + 1):
            parts.append(a[i] * (symmetric_square(x) if i == 2 else kronecker_power(x, i)))
        return torch.cat(parts, dim=-1)
