"""The paper's Riemannian diagnostics of a generator map ``F: z -> x``.

``F`` is the full deterministic sampler, from an initial noise latent ``z`` to the final latent/image
``x`` (Sec. 3 of the paper; ``F_sampling_latents_cfg_embeds`` in the official code). Its Jacobian is
never formed in full: finite differences in a random orthonormal subspace ``W`` (D x D_low) give the
projected Jacobian ``J W`` (D_out x D_low), from which

* Local Scaling ``LS = sqrt(lambda_1(A))``, ``A = (J W)^T (J W)``: the largest stretch ("capacity");
* the principal direction ``V1 = W v1`` (latent space) and its directional derivative ``P1 = dF/dV1``;
* Projected High-Frequency Energy ``PHFE = Var(Laplacian(P1))``: how much of the principal stretch
  lands in perceptible high-frequency detail;
* Local Complexity ``LC = ||v1 - v1'|| / eps``: how fast the principal axis turns between ``z`` and a
  neighbour ``z' = z + W n`` (``||n|| = eps``), i.e. curvature; ``Axis_Cos = |v1 . v1'|``;
* per-pixel maps ``LS_map``, ``LC_map``, ``PHFE_map`` (the paper's heat maps).

Shapes (einops-style letters): B samples, K points per sample, D latent size, d = D_low, C/H/W output
channels, height, width. Everything is batched over samples: one call of ``F`` evaluates every
finite-difference point of every sample.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as nnf
from icml26_shared import check_int, check_positive, fail

D_LOW = 64  # official default subspace dimension (Geometry_Diffusion.py; 256 in one analyzer default)
EPS = 0.02  # official finite-difference step
LAPLACIAN = ((0.0, 1.0, 0.0), (1.0, -4.0, 1.0), (0.0, 1.0, 0.0))  # 5-point stencil of the PHFE filter

Generator = Callable[..., torch.Tensor]  # F(z) or F(z, cond): (N, *latent) -> (N, C, H, W)


@dataclass(frozen=True)
class Geometry:
    """The diagnostics of B samples: scalars (B,), maps (B, H, W), the generated outputs (B, C, H, W)."""

    LS: torch.Tensor
    LC: torch.Tensor
    PHFE: torch.Tensor
    axis_cos: torch.Tensor
    LS_map: torch.Tensor
    LC_map: torch.Tensor
    PHFE_map: torch.Tensor
    x: torch.Tensor


def random_subspace(dim: int, d_low: int, generator: torch.Generator | None = None, dtype=torch.float64):
    """W (D, d) with orthonormal columns: ``QR(randn(D, d))`` as in the official code."""
    dim = check_int("dim", dim, 1)
    d_low = check_int("d_low", d_low, 1, dim)
    q, _ = torch.linalg.qr(torch.randn(dim, d_low, generator=generator, dtype=dtype))
    return q


def laplacian(x: torch.Tensor) -> torch.Tensor:
    """Depthwise 5-point Laplacian with zero padding: (B, C, H, W) -> (B, C, H, W)."""
    check_spatial("x", x)
    c = x.shape[1]
    kernel = torch.tensor(LAPLACIAN, dtype=x.dtype, device=x.device).view(1, 1, 3, 3).repeat(c, 1, 1, 1)
    return nnf.conv2d(x, kernel, padding=1, groups=c)


def projected_high_frequency_energy(p1: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """PHFE of directional derivatives ``p1`` (B, C, H, W): ``Var(Lap p1)`` over all of a sample's
    entries (unbiased, as ``torch.var``) -> (B,), and the map ``||Lap p1||_2`` over channels (B, H, W)."""
    lap = laplacian(p1)
    return lap.flatten(1).var(dim=1), lap.pow(2).sum(1).sqrt()


def principal_stretch(jacobian: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Top eigenpair of ``A = J^T J`` for projected Jacobians (B, D_out, d): ``LS = sqrt(lambda_1)`` (B,)
    and the unit principal direction ``v1`` (B, d) in subspace coordinates.

    An eigenvector has no sign, but the one-sided difference along ``V1`` (PHFE) depends on it; we fix
    it (ours) so that the entry of largest magnitude is positive, which makes runs reproducible across
    LAPACK builds."""
    a = jacobian.transpose(1, 2) @ jacobian  # (B, d, d)
    eigenvalues, eigenvectors = torch.linalg.eigh(a)
    v1 = eigenvectors[:, :, -1]
    pivot = v1.gather(1, v1.abs().argmax(dim=1, keepdim=True))
    v1 = v1 * torch.where(pivot < 0, -1.0, 1.0).to(v1.dtype)
    return eigenvalues[:, -1].clamp_min(0).sqrt(), v1


def check_spatial(name: str, x: torch.Tensor) -> None:
    """PHFE needs a spatial layout: a 4-D (B, C, H, W) tensor with H, W >= 3."""
    if x.ndim != 4:
        raise fail(name, tuple(x.shape), "a 4-D output (B, C, H, W): PHFE needs a spatial layout")
    if x.shape[2] < 3 or x.shape[3] < 3:
        raise fail(name, tuple(x.shape), "an output with height and width >= 3 (the Laplacian is 3x3)")


def _evaluate(F: Generator, z: torch.Tensor, cond: torch.Tensor | None, repeats: int, batch_size: int | None):
    """F on z (B, K, *latent) with each sample's condition repeated K times -> (B, K, C, H, W)."""
    b, k = z.shape[:2]
    flat = z.reshape(b * k, *z.shape[2:])
    rows = None if cond is None else cond.repeat_interleave(repeats, dim=0)
    step = batch_size or flat.shape[0]
    outs = []
    for start in range(0, flat.shape[0], step):
        chunk = flat[start : start + step]
        out = F(chunk) if rows is None else F(chunk, rows[start : start + step])
        outs.append(out)
    out = torch.cat(outs)
    check_spatial("F(z)", out)
    if not torch.isfinite(out).all():
        raise FloatingPointError(f"F(z) returned NaN or inf for samples of shape {tuple(z.shape)}")
    return out.reshape(b, k, *out.shape[1:])


def subspace_jacobian(
    F: Generator,
    z: torch.Tensor,
    W: torch.Tensor,
    eps: float = EPS,
    cond: torch.Tensor | None = None,
    batch_size: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Forward differences ``J[:, i] = (F(z + eps w_i) - F(z)) / eps`` for z (B, *latent), W (B, D, d).

    Returns the centre outputs (B, C, H, W) and the unflattened columns (B, d, C, H, W)."""
    b, d = z.shape[0], W.shape[2]
    directions = W.transpose(1, 2).reshape(b, d, *z.shape[1:])  # (B, d, *latent)
    points = torch.cat([z.unsqueeze(1), z.unsqueeze(1) + eps * directions], dim=1)  # (B, 1 + d, *latent)
    out = _evaluate(F, points, cond, d + 1, batch_size)
    return out[:, 0], (out[:, 1:] - out[:, :1]) / eps


def _principal(F, z, W, eps, cond, batch_size):
    """LS, v1, the unnormalised latent direction W v1, the centre output and the column stack at the points z."""
    x, columns = subspace_jacobian(F, z, W, eps, cond, batch_size)
    ls, v1 = principal_stretch(columns.flatten(2).transpose(1, 2))  # J: (B, D_out, d)
    return ls, v1, (W @ v1.unsqueeze(2)).squeeze(2), x, columns


def derivative_point(z: torch.Tensor, direction: torch.Tensor, eps: float, latent_dtype: torch.dtype | None = None):
    """The point ``z + eps V1`` of the directional derivative P1, ``V1 = direction / ||direction||`` per sample;
    z (B, *latent), direction (B, D).

    ``latent_dtype=None`` computes in z's dtype. With a ``latent_dtype`` (bfloat16 in the paper) the official
    order and arithmetic of that dtype: the direction is rounded to it, divided by the float32 norm of the
    rounded values (one rounding), ``eps * V1`` is rounded, and the sum with z (held in that dtype) is rounded
    (issue 27: adding in float32 and rounding once moves a few entries by one bfloat16 ulp, which LC_map
    divides by eps^2). The result is returned in z's dtype."""
    b = z.shape[0]
    if latent_dtype is None:
        V1 = direction / direction.norm(dim=1, keepdim=True)
        return z + eps * V1.reshape(z.shape)
    rounded = direction.to(latent_dtype)
    V1 = (rounded.float() / rounded.float().norm(dim=1, keepdim=True)).to(latent_dtype)
    return (z.reshape(b, -1).to(latent_dtype) + eps * V1).reshape(z.shape).to(z.dtype)


def generative_geometry(
    F: Generator,
    z: torch.Tensor,
    d_low: int = D_LOW,
    eps: float = EPS,
    *,
    cond: torch.Tensor | None = None,
    W: torch.Tensor | None = None,
    n: torch.Tensor | None = None,
    generator: torch.Generator | None = None,
    batch_size: int | None = None,
    latent_dtype: torch.dtype | None = None,
) -> Geometry:
    """LS, LC, PHFE, Axis_Cos and their maps for the latents ``z`` (B, *latent) of the generator ``F``.

    ``F(z)`` (or ``F(z, cond)`` when ``cond`` (B, ...) is given) maps (N, *latent) to (N, C, H, W).
    ``W`` (B, D, d) are the random subspaces and ``n`` (B, d) the neighbour offsets; both are drawn from
    ``generator`` (a fresh subspace per sample, ``n ~ N(0, I_d)`` rescaled to length ``eps``) unless
    given. ``batch_size`` caps the rows of one call of ``F``.

    ``latent_dtype`` (e.g. ``torch.bfloat16``, the paper's SD 3.5 setting) holds the latents in that dtype as
    the official code does: z and the neighbour ``z' = z + W n`` are rounded to it (``z'`` after a float32
    sum, issue 20: in bfloat16 this moves LC from 10.4 to 6.5 on the same z, W, n and sampler); the Jacobian
    points ``z + eps w_i`` are summed in z's dtype and rounded once by the sampler; the derivative points
    ``z + eps V1`` and ``z' + eps V1'`` are built in ``latent_dtype`` arithmetic (``derivative_point``, issue
    27). ``None`` keeps everything in ``z``'s dtype.
    """
    if not isinstance(z, torch.Tensor) or z.ndim < 2:
        raise fail("z", getattr(z, "shape", z), "a tensor (B, *latent) with a batch dimension")
    if not torch.isfinite(z).all():
        raise fail("z", tuple(z.shape), "finite latents (found NaN or inf)")
    b, dim = z.shape[0], math.prod(z.shape[1:])
    d_low = check_int("d_low", d_low, 1, dim)
    eps = check_positive("eps", eps)
    if batch_size is not None:
        check_int("batch_size", batch_size, 1)
    if cond is not None and (not isinstance(cond, torch.Tensor) or cond.shape[0] != b):
        raise fail("cond", getattr(cond, "shape", cond), f"a tensor with one condition per sample (B={b}, ...)")
    if W is None:
        W = torch.stack([random_subspace(dim, d_low, generator, z.dtype) for _ in range(b)])
    elif tuple(W.shape) != (b, dim, d_low):
        raise fail("W", tuple(W.shape), f"subspaces of shape (B, D, d_low) = {(b, dim, d_low)}")
    if n is None:
        n = torch.randn(b, d_low, generator=generator, dtype=z.dtype)
    elif tuple(n.shape) != (b, d_low):
        raise fail("n", tuple(n.shape), f"neighbour offsets of shape (B, d_low) = {(b, d_low)}")
    n = eps * n / n.norm(dim=1, keepdim=True)  # ||n|| = eps
    if latent_dtype is not None:  # the official code holds the latents in the sampler's dtype
        z = z.to(latent_dtype).to(z.dtype)
    flat = z.reshape(b, dim)

    ls, v1, V1, x, columns = _principal(F, z, W, eps, cond, batch_size)
    ls_map = columns.pow(2).sum(dim=(1, 2)).sqrt()  # sqrt(sum_{c,i} J_i(c,h,w)^2): (B, H, W)

    z_prime = (flat + (W @ n.unsqueeze(2)).squeeze(2)).reshape(z.shape)  # z' = z + W n
    if latent_dtype is not None:  # the official code holds z' in the sampler's dtype, then adds eps steps
        z_prime = z_prime.to(latent_dtype).to(z.dtype)
    _, v1_prime, V1_prime, x_prime, _ = _principal(F, z_prime, W, eps, cond, batch_size)
    cos = (v1 * v1_prime).sum(1)
    flip = torch.where(cos < 0, -1.0, 1.0).to(z.dtype)  # sign-align v1' with v1 (eigenvectors have no sign)
    v1_prime, V1_prime = v1_prime * flip[:, None], V1_prime * flip[:, None]
    lc = (v1 - v1_prime).norm(dim=1) / eps  # LC = ||v1 - v1'|| / eps

    plus = torch.stack(
        [derivative_point(z, V1, eps, latent_dtype), derivative_point(z_prime, V1_prime, eps, latent_dtype)], dim=1
    )  # (B, 2, *latent)
    out = _evaluate(F, plus, cond, 2, batch_size)
    p1 = (out[:, 0] - x) / eps  # directional derivative of F along V1 at z
    p1_prime = (out[:, 1] - x_prime) / eps  # ... along V1' at z'
    phfe, phfe_map = projected_high_frequency_energy(p1)
    lc_map = (p1_prime - p1).pow(2).sum(1).sqrt() / eps
    return Geometry(ls, lc, phfe, (cos * flip).abs(), ls_map, lc_map, phfe_map, x)


def geometric_hotspots(
    lc: torch.Tensor,
    phfe: torch.Tensor,
    reference_lc: torch.Tensor,
    reference_phfe: torch.Tensor,
    quantile: float = 0.9,
) -> torch.Tensor:
    """Samples whose curvature is extreme but buys no detail (ours, [INF]): LC above the ``quantile`` of a
    reference (in-distribution) population while PHFE is at or below the reference median -> bool (B,)."""
    if not 0 < quantile < 1:
        raise fail("quantile", quantile, "a number in the open interval (0, 1)")
    lc_cut = torch.quantile(reference_lc.double(), quantile)
    phfe_cut = torch.quantile(reference_phfe.double(), 0.5)
    return (lc.double() > lc_cut) & (phfe.double() <= phfe_cut)


def robust_normalise(x: torch.Tensor, low: float = 0.01, high: float = 0.99) -> torch.Tensor:
    """Map a heat map to [0, 1] after clipping to its ``low``/``high`` quantiles (the official display)."""
    if not 0 <= low < high <= 1:
        raise fail("low, high", (low, high), "quantiles with 0 <= low < high <= 1")
    flat = x.double().flatten()
    clipped = x.double().clamp(torch.quantile(flat, low), torch.quantile(flat, high))
    clipped = clipped - clipped.min()
    return clipped / (clipped.max() + 1e-12)
