"""Recursive retraining with fresh data: the pipeline, its divergences and the paper's bounds.

Generation i trains on ``q_i = alpha * p_data + (1 - alpha) * p_hat_i`` (alpha = fraction of fresh data, the
rest synthetic from the current model; p_hat_0 = p_data) and samples p_hat_{i+1} with a score that is off
by ``eta_i``. Tracked quantities (the paper's notation):

* accumulated divergence      ``D_i = chi2(p_hat_i || p_data)``
* intra-generation divergence ``I_i = chi2(p_hat_{i+1} || q_i)``
* score-error energy on the ideal path ``eps2_i = int_0^T g(t)^2 / 2 E_{q_i,t} |eta_i(x, t)|^2 dt`` (g^2 = 2)

Results reproduced: ``I_i`` is within constant factors of ``eps2_i`` (two-sided; upper constant 2 from
Girsanov + data processing at leading order), and ``D_N ~ sum_m (1 - alpha)^{2m} I_{N-1-m}``: alpha = 0 adds
errors up (linear growth), alpha > 0 forgets them geometrically and levels off at ``I / (1 - (1 - alpha)^2)``.
Public functions take and return numpy arrays; the JAX cores run in float64 inside ``jax.enable_x64``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from icml26_shared import check_array, check_closed_interval, check_int, check_number, check_positive, fail

from .grid import ou_kernels, reverse_path

# [INF] leading-order Girsanov constant: chi2(path) = E_P (int theta dB)^2 + O(eps^3) = 2 eps2 with g^2 = 2.
GIRSANOV_CONSTANT = 2.0
MASS_TOLERANCE = 1e-3  # relative mass error of the discretised reverse solve that we accept before failing


def check_density(name: str, p, dx: float) -> np.ndarray:
    """A non-negative grid density that integrates to 1 (to 1e-6) -> (n,)."""
    p = check_array(name, p, ndim=1, dtype=float)
    if (p < 0).any():
        raise fail(name, p, "a density with non-negative values")
    mass = p.sum() * dx
    if abs(mass - 1.0) > 1e-6:
        raise fail(name, p, f"a density that integrates to 1 on the grid (got {mass:.6g})")
    return p


def check_grid(x) -> tuple[np.ndarray, float]:
    """A uniform, increasing grid of at least 16 points -> (x, dx)."""
    x = check_array("x", x, ndim=1, dtype=float)
    if len(x) < 16:
        raise fail("x", x, "a grid of at least 16 points")
    dx = np.diff(x)
    if (dx <= 0).any() or np.ptp(dx) > 1e-9 * dx.mean():
        raise fail("x", x, "a uniform, strictly increasing grid")
    return x, float(dx.mean())


def check_times(t) -> np.ndarray:
    """An increasing time grid starting at 0 with T = t[-1] > 0 (see ``grid.time_grid``)."""
    t = check_array("t", t, ndim=1, dtype=float)
    if len(t) < 3 or t[0] != 0.0 or (np.diff(t) <= 0).any():
        raise fail("t", t, "a strictly increasing time grid 0 = t_0 < ... < t_K = T with K >= 2")
    return t


def chi_square_batch(p: np.ndarray, q: np.ndarray, dx: float) -> np.ndarray:
    """chi2(p || q) along the last axis (broadcasting); inf where q = 0 < p, 0 where both vanish."""
    ratio = np.divide((p - q) ** 2, q, out=np.zeros(np.broadcast_shapes(p.shape, q.shape)), where=q > 0)
    return np.where(((q == 0) & (p > 0)).any(axis=-1), np.inf, ratio.sum(axis=-1) * dx)


def chi_square(p, q, dx: float) -> float:
    """chi2(p || q) = int (p - q)^2 / q dx on the grid; inf where q = 0 < p (never NaN)."""
    p = check_array("p", p, ndim=1, dtype=float)
    q = check_array("q", q, ndim=1, dtype=float)
    if p.shape != q.shape:
        raise fail("q", q, f"the shape of p {p.shape}")
    return float(chi_square_batch(p, q, check_positive("dx", dx)))


def _energy(q_t: jax.Array, eta: jax.Array, t: jax.Array, dx: float) -> jax.Array:
    """int_0^T (g^2 / 2) E_{q_t} |eta|^2 dt with g^2 = 2, trapezoid in t (last two axes: time, space)."""
    integrand = (q_t * eta**2).sum(axis=-1) * dx
    return jnp.trapezoid(integrand, t, axis=-1)


def score_error_energy(q_t, eta, t, dx: float) -> float:
    """eps2 = int_0^T (g^2 / 2) E_{q_t} |eta|^2 dt on the grid (the paper's ideal-path energy); q_t, eta: (K+1, n)."""
    q_t = check_array("q_t", q_t, ndim=2, dtype=float)
    eta = check_array("eta", eta, ndim=2, dtype=float)
    t = check_times(t)
    if q_t.shape != eta.shape or q_t.shape[0] != len(t):
        raise fail("eta", eta, f"shape {q_t.shape} = (len(t), n) like q_t")
    with jax.enable_x64(True):
        return float(_energy(jnp.asarray(q_t), jnp.asarray(eta), jnp.asarray(t), check_positive("dx", dx)))


class Generation(NamedTuple):
    """One generation: the sampled density (n,), the ideal-path energy eps2, the learned-path energy eps2_hat
    (the quantity of earlier upper bounds) and the ratio path h = rho_t / q_t (K+1, n)."""

    p_hat: np.ndarray
    eps2: float
    eps2_hat: float
    h: np.ndarray


_reverse_path = jax.jit(reverse_path)


def _check_mass(p_hat: np.ndarray, dx: float) -> np.ndarray:
    """Renormalise generated densities (..., n) by their grid mass; the discretised solve conserves mass to
    O(dx^2), so a mass error above ``MASS_TOLERANCE`` or a negative value means the score error is too large."""
    mass = p_hat.sum(axis=-1, keepdims=True) * dx
    if (np.abs(mass - 1.0) > MASS_TOLERANCE).any() or (p_hat < 0).any():
        raise fail(
            "eta", p_hat, f"a score error small enough for the grid solve (masses {mass.min():.4g}..{mass.max():.4g})"
        )
    return p_hat / mass


def generate(q, eta, x, t) -> Generation:
    """Train-and-sample one generation on the grid: density ``q`` (n,), score error ``eta`` (K+1, n) at times t."""
    x, dx = check_grid(x)
    t = check_times(t)
    q = check_density("q", q, dx)
    eta = check_array("eta", eta, ndim=2, dtype=float)
    if eta.shape != (len(t), len(x)):
        raise fail("eta", eta, f"shape (len(t), len(x)) = {(len(t), len(x))}")
    with jax.enable_x64(True):
        xj, tj, etaj = jnp.asarray(x), jnp.asarray(t), jnp.asarray(eta)
        path = _reverse_path(jnp.asarray(q), etaj, xj, tj, ou_kernels(xj, tj))
        eps2 = float(_energy(path.q, etaj, tj, dx))
        eps2_hat = float(_energy(path.q * path.h, etaj, tj, dx))
        p_hat, h = np.asarray(path.p_hat), np.asarray(path.h)
    return Generation(_check_mass(p_hat, dx), eps2, eps2_hat, h)


@jax.jit
def _generations(q0: jax.Array, phi: jax.Array, x: jax.Array, t: jax.Array, kernels: jax.Array):
    """A batch of generations with separable score errors eta_b(x, t) = exp(-t) phi_b(x): q0, phi (B, n)."""
    eta = jnp.exp(-t)[None, :, None] * phi[:, None, :]
    path = jax.vmap(reverse_path, in_axes=(0, 0, None, None, None))(q0, eta, x, t, kernels)
    dx = x[1] - x[0]
    return path.p_hat, _energy(path.q, eta, t, dx), _energy(path.q * path.h, eta, t, dx)


class Retraining(NamedTuple):
    """Recursive-retraining runs of N generations (leading batch axes ``...`` as in ``phis``).

    D: accumulated divergences D_0..D_N (..., N+1); I: intra-generation divergences I_0..I_{N-1} (..., N);
    eps2 / eps2_hat: ideal- / learned-path score-error energies (..., N); p_hat: final densities (..., n).
    """

    D: np.ndarray
    I: np.ndarray
    eps2: np.ndarray
    eps2_hat: np.ndarray
    p_hat: np.ndarray


def retrain(p_data, phis, alpha, x, t) -> Retraining:
    """Run q_i = alpha p_data + (1 - alpha) p_hat_i -> p_hat_{i+1} for N generations, p_hat_0 = p_data.

    Generation i samples with the score error eta_i(x, t) = exp(-t) phi_i(x) (see ``score_error``).
    ``phis``: (..., N, n), any leading batch axes (independent pipelines, run together); ``alpha``: a number
    in [0, 1] or an array broadcastable to the batch shape ``...``.
    """
    x, dx = check_grid(x)
    t = check_times(t)
    p_data = check_density("p_data", p_data, dx)
    phis = check_array("phis", phis, ndim=tuple(range(2, 8)), dtype=float)
    if phis.shape[-1] != len(x):
        raise fail("phis", phis, f"a last axis of len(x) = {len(x)}")
    batch, N = phis.shape[:-2], phis.shape[-2]
    alpha = check_array("alpha", alpha, dtype=float)
    if (alpha < 0).any() or (alpha > 1).any():
        raise fail("alpha", alpha, "fresh-data fractions in [0, 1]")
    alpha = np.broadcast_to(alpha, batch).reshape(-1, 1)
    phis = phis.reshape(-1, N, len(x))
    p_hat = np.broadcast_to(p_data, (len(phis), len(x)))
    D, I, eps2, eps2_hat = [np.zeros(len(phis))], [], [], []
    with jax.enable_x64(True):
        xj, tj = jnp.asarray(x), jnp.asarray(t)
        kernels = ou_kernels(xj, tj)
        for i in range(N):
            q = alpha * p_data + (1.0 - alpha) * p_hat  # training mixture of generation i
            out, e, e_hat = (
                np.asarray(a) for a in _generations(jnp.asarray(q), jnp.asarray(phis[:, i]), xj, tj, kernels)
            )
            p_hat = _check_mass(out, dx)
            I.append(chi_square_batch(p_hat, q, dx))
            D.append(chi_square_batch(p_hat, p_data[None, :], dx))
            eps2.append(e)
            eps2_hat.append(e_hat)
    shape = lambda a: np.stack(a, axis=-1).reshape(*batch, -1)  # noqa: E731
    return Retraining(shape(D), shape(I), shape(eps2), shape(eps2_hat), p_hat.reshape(*batch, len(x)))


def discounted_sum(errors, alpha: float) -> np.ndarray:
    """S_N = sum_{m=0}^{N-1} (1 - alpha)^{2m} e_{N-1-m} for N = 1..len(errors) (the paper's discounted
    accumulation; S_{N+1} = e_N + (1 - alpha)^2 S_N) -> (N,)."""
    errors = check_array("errors", errors, ndim=1, dtype=float)
    alpha = check_closed_interval("alpha", alpha, 0.0, 1.0)
    out, s = np.empty_like(errors), 0.0
    for n, e in enumerate(errors):
        s = e + (1.0 - alpha) ** 2 * s
        out[n] = s
    return out


def plateau(error: float, alpha: float) -> float:
    """The level D_N approaches for a constant per-generation error: e / (1 - (1 - alpha)^2); inf at alpha = 0."""
    error = check_positive("error", error)
    alpha = check_closed_interval("alpha", alpha, 0.0, 1.0)
    return float("inf") if alpha == 0.0 else error / (1.0 - (1.0 - alpha) ** 2)


def girsanov_upper(eps2) -> np.ndarray:
    """Leading-order upper bound on I_i from the ideal-path energy: chi2 <= 2 eps2 (Girsanov + data processing)."""
    eps2 = check_array("eps2", eps2, ndim=(0, 1), dtype=float)
    if (eps2 < 0).any():
        raise fail("eps2", eps2, "energies >= 0")
    return GIRSANOV_CONSTANT * eps2


def score_perturbation(x, rng: np.random.Generator, bumps: int = 6, width: float = 0.8, spread: float = 4.0):
    """A random smooth score-error shape phi(x) = sum_k a_k exp(-(x - c_k)^2 / (2 width^2)), a_k ~ N(0, 1),
    c_k ~ U[-spread, spread], scaled to max |phi| = 1 -> (n,). [INF] our model of a network's score error."""
    x = check_array("x", x, ndim=1, dtype=float)
    bumps = check_int("bumps", bumps, 1)
    width = check_positive("width", width)
    spread = check_positive("spread", spread)
    a = rng.standard_normal(bumps)
    c = rng.uniform(-spread, spread, bumps)
    phi = (a[None, :] * np.exp(-((x[:, None] - c[None, :]) ** 2) / (2 * width**2))).sum(axis=1)
    return phi / np.abs(phi).max()


def score_error(phi, eps: float, t) -> np.ndarray:
    """eta(x, t) = eps * exp(-t) * phi(x) on the time grid -> (K+1, n). [INF] the error fades with the noise
    level, as a network's does once q_t is close to Gaussian."""
    phi = check_array("phi", phi, ndim=1, dtype=float)
    eps = check_number("eps", eps)
    if eps < 0:
        raise fail("eps", eps, "a score-error amplitude >= 0")
    t = check_times(t)
    return eps * np.exp(-t)[:, None] * phi[None, :]
