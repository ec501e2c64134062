"""Comparators of the paper's diagnostics.

* ``full_spectral_norm``: the exact top singular value of the *full* Jacobian dF/dz by power iteration on
  ``J^T J`` with forward- and reverse-mode autodiff (``torch.func.jvp`` / ``vjp``): the reference that the
  subspace estimate LS bounds from below (``sigma_1(J W) <= sigma_1(J)`` for orthonormal W).
* ``output_sensitivity``: the mean finite-difference stretch ``||F(z + eps n) - F(z)|| / eps`` over random
  unit directions n, a non-geometric, path-length-style (PPL) instability proxy.
* ``image_high_frequency``: ``Var(Laplacian(x))`` of the generated image itself, detail without geometry.
"""

from __future__ import annotations

import torch
from icml26_shared import check_int, check_positive

from .method import Generator, _evaluate, laplacian


def full_spectral_norm(
    F: Generator, z: torch.Tensor, cond: torch.Tensor | None = None, iters: int = 30, generator=None
) -> torch.Tensor:
    """sigma_1(dF/dz) for every sample of z (B, *latent) -> (B,). F must act row-wise (as a sampler does),
    so the Jacobian of the batch is block diagonal and one power iteration serves all samples."""
    iters = check_int("iters", iters, 1)

    def f(x):
        return F(x) if cond is None else F(x, cond)

    v = torch.randn(z.shape, generator=generator, dtype=z.dtype)
    norm_axes = tuple(range(1, z.ndim))
    v = v / v.pow(2).sum(norm_axes, keepdim=True).sqrt()
    sigma = torch.zeros(z.shape[0], dtype=z.dtype)
    for _ in range(iters):
        _, jv = torch.func.jvp(f, (z,), (v,))  # J v
        _, pullback = torch.func.vjp(f, z)
        (jtjv,) = pullback(jv)  # J^T J v
        sigma = jv.flatten(1).norm(dim=1)
        v = jtjv / jtjv.pow(2).sum(norm_axes, keepdim=True).sqrt()
    return sigma.detach()


def output_sensitivity(
    F: Generator,
    z: torch.Tensor,
    cond: torch.Tensor | None = None,
    eps: float = 0.02,
    directions: int = 8,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Mean over ``directions`` random unit latent directions of ``||F(z + eps n) - F(z)|| / eps`` -> (B,)."""
    eps = check_positive("eps", eps)
    directions = check_int("directions", directions, 1)
    b = z.shape[0]
    n = torch.randn(b, directions, *z.shape[1:], generator=generator, dtype=z.dtype)
    n = n / n.flatten(2).norm(dim=2).view(b, directions, *[1] * (z.ndim - 1))
    points = torch.cat([z.unsqueeze(1), z.unsqueeze(1) + eps * n], dim=1)
    out = _evaluate(F, points, cond, directions + 1, None)
    return ((out[:, 1:] - out[:, :1]).flatten(2).norm(dim=2) / eps).mean(dim=1)


def image_high_frequency(x: torch.Tensor) -> torch.Tensor:
    """Var(Laplacian(x)) of generated outputs (B, C, H, W) -> (B,): the image's own high-frequency energy."""
    return laplacian(x).flatten(1).var(dim=1)
