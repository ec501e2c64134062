"""Analytic generators whose diagnostics are known in closed form.

* ``LinearGenerator``: ``F(z) = A z + b``. Finite differences are exact, the principal axis never turns
  (LC = 0, Axis_Cos = 1), LS is the top singular value of ``A W``.
* ``RankOneGenerator``: ``F(z) = base + p(g(z)) T`` with ``g(z) = u.z + (c/2) (v.z)^2`` (a level-set
  boundary of curvature c). With the identity profile ``p(g) = g`` it is a *smooth detail modulation*
  (T a high-frequency texture); with ``p(g) = sigmoid(k g)`` and ``T = T1 - T2`` it is a *sharp semantic
  switch* between two smooth templates. Every finite difference of such an F is a multiple of T, so
  the projected Jacobian is rank one, ``J W = vec(T) a^T``, and all metrics follow from the vector
  ``a`` of one-dimensional differences: ``LS = ||T|| ||a||``, ``v1 = a / ||a||``,
  ``PHFE = s^2 Var(Lap T)`` with ``s`` the difference along V1. ``closed_form(eps)`` evaluates these
  formulas for the method's step ``eps``; ``closed_form(None)`` is the eps -> 0 limit (exact Jacobian).

The closed forms are written in numpy, independently of ``method.py``, so the tests compare two paths.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from icml26_shared import check_array, check_choice, check_positive, fail

from .method import LAPLACIAN


def numpy_laplacian(x: np.ndarray) -> np.ndarray:
    """The PHFE filter on one output (C, H, W), zero padding, written with numpy slices."""
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1)))
    out = np.zeros_like(x)
    for di in range(3):
        for dj in range(3):
            if LAPLACIAN[di][dj]:
                out += LAPLACIAN[di][dj] * padded[:, di : di + x.shape[1], dj : dj + x.shape[2]]
    return out


def canonical_sign(v: np.ndarray) -> np.ndarray:
    """Orient a unit vector so that its entry of largest magnitude is positive (the method's convention)."""
    return v if v[np.argmax(np.abs(v))] >= 0 else -v


@dataclass(frozen=True)
class LinearGenerator:
    """``F(z) = A vec(z) + b`` reshaped to ``out_shape`` (C, H, W); A is (C H W, D)."""

    A: np.ndarray
    b: np.ndarray
    out_shape: tuple[int, int, int]

    def __post_init__(self) -> None:
        check_array("A", self.A, ndim=2)
        if self.A.shape[0] != int(np.prod(self.out_shape)) or self.b.shape != (self.A.shape[0],):
            raise fail("A", self.A.shape, f"rows = C*H*W of out_shape {self.out_shape} and b of that length")

    def __call__(self, z: torch.Tensor) -> torch.Tensor:
        A = torch.as_tensor(self.A, dtype=z.dtype)
        out = z.flatten(1) @ A.T + torch.as_tensor(self.b, dtype=z.dtype)
        return out.reshape(z.shape[0], *self.out_shape)

    def closed_form(self, W: np.ndarray, n: np.ndarray) -> dict[str, np.ndarray]:
        """Metrics of one sample for subspace W (D, d); n is irrelevant (the Jacobian is constant)."""
        del n
        AW = self.A @ W
        _, s, vt = np.linalg.svd(AW, full_matrices=False)
        v1 = canonical_sign(vt[0])
        p1 = (AW @ v1).reshape(self.out_shape)
        lap = numpy_laplacian(p1)
        cols = AW.T.reshape(-1, *self.out_shape)
        zero = np.zeros(self.out_shape[1:])
        return {
            "LS": s[0],
            "LC": 0.0,
            "PHFE": lap.var(ddof=1),
            "axis_cos": 1.0,
            "LS_map": np.sqrt((cols**2).sum((0, 1))),
            "LC_map": zero,
            "PHFE_map": np.sqrt((lap**2).sum(0)),
        }


@dataclass(frozen=True)
class RankOneGenerator:
    """``F(z) = base + p(g(z)) T``, ``g(z) = u.z + (c/2)(v.z)^2``; ``profile`` "identity" or "sigmoid" (k).

    base, T: (C, H, W); u, v: (D,) unit and orthogonal; c: curvature of the boundary g = 0; k: steepness.
    """

    base: np.ndarray
    T: np.ndarray
    u: np.ndarray
    v: np.ndarray
    c: float = 1.0
    profile: str = "identity"
    k: float = 1.0

    def __post_init__(self) -> None:
        check_array("T", self.T, ndim=3)
        check_choice("profile", self.profile, ("identity", "sigmoid"))
        check_positive("k", self.k)
        if self.base.shape != self.T.shape:
            raise fail("base", self.base.shape, f"the shape of T {self.T.shape}")
        if abs(float(self.u @ self.v)) > 1e-9 or abs(np.linalg.norm(self.u) - 1) > 1e-9:
            raise fail("u", self.u.shape, "a unit vector orthogonal to v")

    def g(self, z):
        """The boundary function on flattened latents (N, D) (numpy or torch)."""
        return z @ self.u + 0.5 * self.c * (z @ self.v) ** 2

    def p(self, g):
        """The profile: identity (detail modulation) or sigmoid(k g) (semantic switch)."""
        if self.profile == "identity":
            return g
        return 1 / (1 + np.exp(-self.k * g)) if isinstance(g, np.ndarray) else torch.sigmoid(self.k * g)

    def dp(self, g: np.ndarray) -> np.ndarray:
        if self.profile == "identity":
            return np.ones_like(g)
        s = 1 / (1 + np.exp(-self.k * g))
        return self.k * s * (1 - s)

    def __call__(self, z: torch.Tensor) -> torch.Tensor:
        u, v = (torch.as_tensor(a, dtype=z.dtype) for a in (self.u, self.v))
        flat = z.flatten(1)
        g = flat @ u + 0.5 * self.c * (flat @ v) ** 2
        T, base = (torch.as_tensor(a, dtype=z.dtype) for a in (self.T, self.base))
        return base + self.p(g)[:, None, None, None] * T

    def boundary_point(self, z: np.ndarray) -> np.ndarray:
        """Move z (D,) along u (which leaves v.z unchanged) onto the boundary g(z) = 0."""
        return z - self.g(z[None])[0] * self.u

    def _coefficients(self, z: np.ndarray, W: np.ndarray, eps: float | None) -> np.ndarray:
        """a (d,): one-dimensional differences of p(g) along the columns of W (or its gradient)."""
        if eps is None:
            grad = self.u + self.c * (z @ self.v) * self.v
            return self.dp(self.g(z[None]))[0] * (W.T @ grad)
        return (self.p(self.g(z[None] + eps * W.T)) - self.p(self.g(z[None]))) / eps

    def _slope(self, z: np.ndarray, V1: np.ndarray, eps: float | None) -> float:
        """s: the difference of p(g) along the unit latent direction V1 (P1 = s T)."""
        if eps is None:
            return float(self.dp(self.g(z[None]))[0] * (self.u + self.c * (z @ self.v) * self.v) @ V1)
        return float((self.p(self.g((z + eps * V1)[None])) - self.p(self.g(z[None])))[0] / eps)

    def closed_form(self, z: np.ndarray, W: np.ndarray, n: np.ndarray, eps: float | None) -> dict[str, np.ndarray]:
        """Metrics of one sample z (D,) for subspace W (D, d), neighbour offset n (d,) of length ``eps_n``.

        ``eps`` is the finite-difference step (None: the exact Jacobian). The neighbour is always
        ``z + W n``; pass n already scaled to its length."""
        a, a_prime = self._coefficients(z, W, eps), self._coefficients(z + W @ n, W, eps)
        v1 = canonical_sign(a / np.linalg.norm(a))
        v1_prime = a_prime / np.linalg.norm(a_prime)
        if v1 @ v1_prime < 0:
            v1_prime = -v1_prime
        step = np.linalg.norm(n)
        s, s_prime = self._slope(z, W @ v1, eps), self._slope(z + W @ n, W @ v1_prime, eps)
        lap = numpy_laplacian(self.T)
        t_norm_map = np.sqrt((self.T**2).sum(0))
        return {
            "LS": np.linalg.norm(self.T) * np.linalg.norm(a),
            "LC": np.linalg.norm(v1 - v1_prime) / step,
            "PHFE": s**2 * lap.var(ddof=1),
            "axis_cos": abs(float(v1 @ v1_prime)),
            "LS_map": np.linalg.norm(a) * t_norm_map,
            "LC_map": abs(s_prime - s) * t_norm_map / step,
            "PHFE_map": abs(s) * np.sqrt((lap**2).sum(0)),
        }


def smooth_template(rng: np.random.Generator, shape: tuple[int, int, int], blobs: int = 2) -> np.ndarray:
    """A sum of wide Gaussian blobs (C, H, W): a low-frequency 'semantic' image."""
    c, h, w = shape
    yy, xx = np.mgrid[0:h, 0:w] / max(h, w)
    out = np.zeros(shape)
    for _ in range(blobs):
        cy, cx = rng.uniform(0.2, 0.8, size=2)
        out += rng.normal(size=(c, 1, 1)) * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * 0.25**2))
    return out


def detail_template(rng: np.random.Generator, shape: tuple[int, int, int]) -> np.ndarray:
    """A random-amplitude checkerboard texture (C, H, W): the highest-frequency pattern of the grid."""
    _, h, w = shape
    checker = (-1.0) ** (np.arange(h)[:, None] + np.arange(w)[None, :])
    return rng.uniform(0.5, 1.5, size=shape) * checker[None]


def orthonormal_pair(rng: np.random.Generator, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Two random orthonormal vectors of R^dim."""
    q, _ = np.linalg.qr(rng.normal(size=(dim, 2)))
    return q[:, 0], q[:, 1]
