"""Kernels over the numeric sub-vocabulary (paper Sec. 3.1) and the ablation kernels (App. C.4).

``value_distance_kernel``: ``K_ij = mean_sigma kappa_sigma(d_ij)`` with ``d_ij = |v_i - v_j|``, Gaussian
``kappa_sigma(d) = exp(-d^2 / (2 sigma^2))`` (paper default, sigma = 2) or Laplace ``exp(-|d| / sigma)``.
Distances are first "squashed" affinely (min nonzero -> 1, max -> ``squash_factor``, 0 stays 0), so one
sigma means the same locality for V_num = 0..9 and 0..999 (official code; identity for digits 0..9).
``shuffled_value_kernel``: the same kernel after permuting the value <-> token map (the control).
``random_psd_kernel``: a value-agnostic PSD kernel ``(Z Z^T)^{o p}`` from Rademacher rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from icml26_shared import check_choice, check_int, check_positive, fail

KERNEL_TYPES = ("gaussian", "laplace")
SIGMA = 2.0  # paper default bandwidth (Sec. 3.1)
SQUASH_FACTOR = 9.0  # official code: max distance -> 9, so digits 0..9 are unchanged


def _check_values(values: torch.Tensor | Sequence[float]) -> torch.Tensor:
    v = torch.as_tensor(values, dtype=torch.float64)
    if v.ndim != 1 or v.numel() == 0 or not torch.isfinite(v).all():
        raise fail("values", values, "a non-empty 1-d sequence of finite numbers")
    return v


def _check_sigmas(sigmas: Sequence[float]) -> list[float]:
    sigmas = list(sigmas)
    if not sigmas:
        raise fail("sigmas", sigmas, "a non-empty sequence of bandwidths > 0")
    return [check_positive("sigmas", s) for s in sigmas]


def squash_distances(d: torch.Tensor, squash_factor: float = SQUASH_FACTOR) -> torch.Tensor:
    """Affine map of nonzero distances: min nonzero -> 1, max -> ``squash_factor``; 0 stays 0.

    A factor <= 1 disables it (official code), as does a matrix with a single nonzero distance level.
    """
    factor = float(squash_factor)
    nonzero = d > 0
    if factor <= 1.0 or not nonzero.any():
        return d
    low, high = d[nonzero].min(), d.max()
    if high <= low:
        return d
    out = 1.0 + (d - low) * (factor - 1.0) / (high - low)
    return torch.where(nonzero, out, torch.zeros_like(d))


def distance_kernel(
    d: torch.Tensor,
    sigmas: Sequence[float] = (SIGMA,),
    kernel_type: str = "gaussian",
    squash_factor: float = SQUASH_FACTOR,
) -> torch.Tensor:
    """``K = mean_sigma kappa_sigma(squash(d))`` clamped to [0, 1], for a distance matrix ``d`` (N, N)."""
    sigmas = _check_sigmas(sigmas)
    check_choice("kernel_type", kernel_type, KERNEL_TYPES)
    d = squash_distances(d, squash_factor)
    if kernel_type == "gaussian":
        K = sum(torch.exp(-(d**2) / (2.0 * s**2)) for s in sigmas)  # eq. (3): Gaussian RBF over value distance
    else:
        K = sum(torch.exp(-d.abs() / s) for s in sigmas)
    return (K / len(sigmas)).clamp(0.0, 1.0)


def value_distance_kernel(
    values: torch.Tensor | Sequence[float],
    sigmas: Sequence[float] = (SIGMA,),
    kernel_type: str = "gaussian",
    squash_factor: float = SQUASH_FACTOR,
) -> torch.Tensor:
    """The paper's kernel over V_num: (N,) values -> (N, N) Gram matrix of ``kappa(|v_i - v_j|)``."""
    v = _check_values(values)
    return distance_kernel((v[:, None] - v[None, :]).abs(), sigmas, kernel_type, squash_factor)


def shuffled_value_kernel(
    values: torch.Tensor | Sequence[float],
    seed: int,
    sigmas: Sequence[float] = (SIGMA,),
    kernel_type: str = "gaussian",
    squash_factor: float = SQUASH_FACTOR,
) -> torch.Tensor:
    """The value-distance kernel after a random permutation of the value <-> token map (control)."""
    v = _check_values(values)
    generator = torch.Generator().manual_seed(check_int("seed", seed, 0))
    return value_distance_kernel(v[torch.randperm(v.numel(), generator=generator)], sigmas, kernel_type, squash_factor)


def random_psd_kernel(n: int, seed: int, feature_dim: int = 4, power: int = 5) -> torch.Tensor:
    """Value-agnostic PSD kernel: unit Rademacher rows Z (n, feature_dim), ``K = (Z Z^T)^{o power}``.

    Diagonal 1; PSD by the Schur product theorem (App. C.4 uses feature_dim 4, odd power 5).
    """
    n = check_int("n", n, 1)
    feature_dim = check_int("feature_dim", feature_dim, 2)
    power = check_int("power", power, 1)
    generator = torch.Generator().manual_seed(check_int("seed", seed, 0))
    Z = torch.randint(0, 2, (n, feature_dim), generator=generator).double() * 2 - 1
    Z = Z / feature_dim**0.5
    return (Z @ Z.T) ** power


def laplacian(K: torch.Tensor) -> torch.Tensor:
    """Graph Laplacian ``L = D - K`` with ``D = diag(deg)``, ``deg_i = sum_j K_ij`` (Sec. 3.3)."""
    return torch.diag(K.sum(dim=1)) - K
