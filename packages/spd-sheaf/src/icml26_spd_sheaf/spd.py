"""SPD machinery: spectral functions with a stable backward, and the two Lie group structures on SPD(n).

The paper's key insight [PUB, abstract] is that SPD(n) is a Lie group, so sheaf operators need no
projection to a Euclidean space. We implement both standard group structures [INF, ours: the paper
body was not available; these are the textbook choices]:

* Log-Euclidean (Arsigny et al. 2007): ``X (.) Y = expm(logm X + logm Y)``, identity ``I``, inverse
  ``X^{-1}``; ``logm`` is a group isomorphism (SPD, (.)) -> (Sym(n), +).
* Log-Cholesky (Lin 2019): with ``X = L L^T``, ``L (.) K = floor(L) + floor(K) + D(L) D(K)`` on the
  Cholesky factors (floor = strictly lower part, D = diagonal); ``phi(L) = floor(L) + log D(L)`` is an
  isomorphism onto lower-triangular matrices with +.

Spectral functions ``U f(Lambda) U^T`` are differentiated with the Daleckii-Krein formula, using
``f'`` on (near-)equal eigenvalues so that rank-1 + eps*I inputs (a doubly degenerate eigenvalue)
have finite gradients.
"""

from __future__ import annotations

import numpy as np
import torch
from icml26_shared import check_array, check_positive, fail

DEGENERACY_TOL = 1e-6  # eigenvalue gap below which the Daleckii-Krein quotient is replaced by f'


def sym(x: torch.Tensor) -> torch.Tensor:
    """Symmetric part ``(x + x^T) / 2`` over the last two axes."""
    return 0.5 * (x + x.transpose(-1, -2))


def check_spd(name: str, x, rtol: float = 1e-6) -> np.ndarray:
    """Validate a (..., n, n) batch of SPD matrices: finite, square, symmetric and positive definite."""
    arr = check_array(name, x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else x)
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
        raise fail(name, arr, "a (..., n, n) batch of square matrices")
    scale = max(float(np.abs(arr).max()), 1.0)
    if not np.allclose(arr, np.swapaxes(arr, -1, -2), atol=rtol * scale, rtol=0):
        raise fail(name, arr, "symmetric matrices (X == X^T)")
    if float(np.linalg.eigvalsh(arr).min()) <= 0:
        raise fail(name, arr, "positive definite matrices (all eigenvalues > 0)")
    return arr


def _dk_kernel(lam: torch.Tensor, f_lam: torch.Tensor, df_lam: torch.Tensor) -> torch.Tensor:
    """Daleckii-Krein matrix K_ij = (f(l_i) - f(l_j)) / (l_i - l_j), and f'(l_i) where l_i ~ l_j."""
    diff = lam.unsqueeze(-1) - lam.unsqueeze(-2)
    close = diff.abs() <= DEGENERACY_TOL * lam.abs().amax(-1, keepdim=True).unsqueeze(-1).clamp_min(1.0)
    quotient = (f_lam.unsqueeze(-1) - f_lam.unsqueeze(-2)) / torch.where(close, torch.ones_like(diff), diff)
    mean_slope = 0.5 * (df_lam.unsqueeze(-1) + df_lam.unsqueeze(-2))
    return torch.where(close, mean_slope, quotient)


class _SpectralFunction(torch.autograd.Function):
    """``U f(Lambda) U^T`` for symmetric ``x``; ``kind`` selects f in {log, exp, clamp}."""

    @staticmethod
    def forward(ctx, x, kind, floor):
        lam, u = torch.linalg.eigh(x)
        if kind == "log":
            f_lam, df_lam = lam.log(), lam.reciprocal()
        elif kind == "exp":
            f_lam = lam.exp()
            df_lam = f_lam
        else:  # clamp: ReEig, f = max(lambda, floor)
            f_lam = lam.clamp_min(floor)
            df_lam = (lam > floor).to(lam.dtype)
        ctx.save_for_backward(u, _dk_kernel(lam, f_lam, df_lam))
        return (u * f_lam.unsqueeze(-2)) @ u.transpose(-1, -2)

    @staticmethod
    def backward(ctx, grad):
        u, kernel = ctx.saved_tensors
        inner = u.transpose(-1, -2) @ sym(grad) @ u
        return u @ (kernel * inner) @ u.transpose(-1, -2), None, None


def spd_log(x: torch.Tensor) -> torch.Tensor:
    """Matrix logarithm of SPD matrices (..., n, n): the chart SPD(n) -> Sym(n) of the Log-Euclidean group."""
    return _SpectralFunction.apply(sym(x), "log", 0.0)


def spd_exp(s: torch.Tensor) -> torch.Tensor:
    """Matrix exponential of symmetric matrices (..., n, n): Sym(n) -> SPD(n)."""
    return _SpectralFunction.apply(sym(s), "exp", 0.0)


def reeig(x: torch.Tensor, eps: float = 1e-4) -> torch.Tensor:
    """ReEig nonlinearity (Huang & Van Gool 2017): ``U max(Lambda, eps) U^T``; SPD in, SPD out."""
    return _SpectralFunction.apply(sym(x), "clamp", check_positive("eps", eps))


def log_reeig(s: torch.Tensor, eps: float = 1e-4) -> torch.Tensor:
    """ReEig written in log coordinates: ``logm(ReEig(expm(s)))`` = clamp of the eigenvalues at ``log eps``."""
    return _SpectralFunction.apply(sym(s), "clamp", float(np.log(check_positive("eps", eps))))


# --- Log-Euclidean group ---------------------------------------------------------------------------------


def le_product(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Log-Euclidean group product ``X (.) Y = expm(logm X + logm Y)``."""
    return spd_exp(spd_log(x) + spd_log(y))


def le_inverse(x: torch.Tensor) -> torch.Tensor:
    """Log-Euclidean group inverse ``expm(-logm X)`` (= the matrix inverse ``X^{-1}``)."""
    return spd_exp(-spd_log(x))


def le_power(x: torch.Tensor, t: float | torch.Tensor) -> torch.Tensor:
    """Scalar multiplication of the Lie algebra carried to the group: ``X^t = expm(t logm X)``."""
    return spd_exp(t * spd_log(x))


# --- Log-Cholesky group ----------------------------------------------------------------------------------


def _split(lower: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Strictly lower part floor(L) and the diagonal D(L) (as a vector) of lower-triangular matrices."""
    return torch.tril(lower, diagonal=-1), torch.diagonal(lower, dim1=-2, dim2=-1)


def lc_chart(x: torch.Tensor) -> torch.Tensor:
    """Log-Cholesky chart ``phi(X) = floor(L) + log D(L)`` with ``X = L L^T``: SPD(n) -> lower-triangular."""
    strict, diag = _split(torch.linalg.cholesky(sym(x)))
    return strict + torch.diag_embed(diag.log())


def lc_unchart(z: torch.Tensor) -> torch.Tensor:
    """Inverse chart: lower-triangular ``z`` -> ``L L^T`` with ``L = floor(z) + exp D(z)``."""
    strict, diag = _split(torch.tril(z))
    lower = strict + torch.diag_embed(diag.exp())
    return lower @ lower.transpose(-1, -2)


def lc_product(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Log-Cholesky group product (Lin 2019): ``phi^{-1}(phi(X) + phi(Y))``."""
    return lc_unchart(lc_chart(x) + lc_chart(y))


def lc_inverse(x: torch.Tensor) -> torch.Tensor:
    """Log-Cholesky group inverse ``phi^{-1}(-phi(X))`` (not the matrix inverse)."""
    return lc_unchart(-lc_chart(x))


# --- rank-1 directional inputs ---------------------------------------------------------------------------


def direction_log_features(d: torch.Tensor, eps: float = 1e-4) -> torch.Tensor:
    """``logm(d d^T + eps I)`` for unit vectors ``d`` (E, n), in closed form (E, n, n).

    ``d d^T + eps I`` has eigenvalue ``1 + eps`` along d and ``eps`` on its orthogonal complement, so
    ``logm = log(1 + eps) d d^T + log(eps) (I - d d^T)``: an "effectively rank-1" SPD input.
    """
    eps = check_positive("eps", eps)
    if d.ndim != 2 or not torch.isfinite(d).all():
        raise fail("d", tuple(d.shape), "a finite (E, n) array of unit vectors")
    norms = d.norm(dim=-1)
    if not torch.allclose(norms, torch.ones_like(norms), atol=1e-5):
        raise fail("d", tuple(d.shape), "unit vectors (every row of norm 1)")
    outer = d.unsqueeze(-1) * d.unsqueeze(-2)
    eye = torch.eye(d.shape[-1], dtype=d.dtype)
    return np.log1p(eps) * outer + np.log(eps) * (eye - outer)
