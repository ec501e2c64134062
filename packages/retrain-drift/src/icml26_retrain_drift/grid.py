"""Exact 1-D grid simulator of one diffusion generation: forward OU marginals and the learned reverse SDE.

Forward process (variance-preserving OU, g(t)^2 = 2):  ``dX_t = -X_t dt + sqrt(2) dB_t``, X_0 ~ q.
Learned reverse SDE, run from t = T down to 0 and started at the prior N(0, 1):
``dY = [Y + 2 s_hat(Y, t)] ds + sqrt(2) dB``,  with ``s_hat = grad log q_t + eta`` (eta = score error).

Instead of the density rho_t of Y we evolve the ratio ``h_t = rho_t / q_t``. Substituting rho = q h into the
reverse Fokker-Planck equation and using the forward one for q gives (ours, derived in the README):

    -d h / dt = h'' - (x + 2 eta) h' - 2 (eta' + eta * sigma) h,      sigma = d/dx log q_t         (R)

With eta = 0 this is the OU backward equation, so the exact-score path has no discretisation bias (h stays
an OU average of the prior ratio); the score error enters only through its own terms. h is O(1) everywhere,
so chi-square divergences (integrals of q (h - 1)^2) are free of the tail noise of a density difference.
(R) is solved by Crank-Nicolson on a geometric time grid with Neumann boundaries (a tridiagonal solve per
step); the marginals q_t come from the exact OU transition kernel applied to the grid density.
All arrays are float64: callers wrap these functions in ``jax.enable_x64(True)`` (see ``method.py``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from icml26_shared import check_int, check_positive, fail


def time_grid(T: float = 8.0, steps: int = 160, t_min: float = 1e-3) -> np.ndarray:
    """Times ``0 = t_0 < t_min = t_1 < ... < t_K = T``, geometric above t_min (fine where the score is sharp)."""
    T = check_positive("T", T)
    steps = check_int("steps", steps, 2)
    t_min = check_positive("t_min", t_min)
    if t_min >= T:
        raise fail("t_min", t_min, f"a first time step smaller than T={T}")
    return np.concatenate([[0.0], np.geomspace(t_min, T, steps)])


def ou_kernel(x: jax.Array, t: jax.Array) -> jax.Array:
    """OU transition matrix K[j, l] = P(X_t in cell j | X_0 = x_l), columns summing to 1 -> (n, n).

    X_t | X_0 = y ~ N(e^-t y, 1 - e^-2t); at t = 0 the matrix is the identity.
    """
    m = jnp.exp(-t)
    v = jnp.maximum(1.0 - jnp.exp(-2.0 * t), 1e-12)
    logits = -((x[:, None] - m * x[None, :]) ** 2) / (2.0 * v)
    kernel = jnp.exp(logits - logits.max(axis=0, keepdims=True))
    return kernel / kernel.sum(axis=0, keepdims=True)


@jax.jit
def ou_kernels(x: jax.Array, t: jax.Array) -> jax.Array:
    """The OU transition matrices at every time of the grid -> (len(t), n, n); computed once per (x, t)."""
    return jax.vmap(lambda tk: ou_kernel(x, tk))(t)


def grid_gradient(f: jax.Array, dx: float) -> jax.Array:
    """d/dx on the grid: central differences inside, one-sided at the two ends (last axis)."""
    return jnp.gradient(f, dx, axis=-1)


class GenerationPath(NamedTuple):
    """One generation of the grid simulator (all float64).

    p_hat: the generated density on the grid (n,); q: forward marginals q_t (K+1, n);
    h: the ratio rho_t / q_t along the reverse path (K+1, n).
    """

    p_hat: jax.Array
    q: jax.Array
    h: jax.Array


def _operator(b: jax.Array, c: jax.Array, dx: float) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Diagonals (lower, main, upper) of A h = h'' - b h' - c h with Neumann (h' = 0) ends."""
    lower = 1.0 / dx**2 + b / (2.0 * dx)
    upper = 1.0 / dx**2 - b / (2.0 * dx)
    main = -2.0 / dx**2 - c
    lower = lower.at[-1].set(2.0 / dx**2).at[0].set(0.0)  # ghost node h_n = h_{n-2}
    upper = upper.at[0].set(2.0 / dx**2).at[-1].set(0.0)  # ghost node h_-1 = h_1
    return lower, main, upper


def _apply(diagonals: tuple[jax.Array, jax.Array, jax.Array], h: jax.Array) -> jax.Array:
    """The tridiagonal matrix with these diagonals times ``h``."""
    lower, main, upper = diagonals
    return main * h + lower * jnp.roll(h, 1) + upper * jnp.roll(h, -1)


def reverse_path(q0: jax.Array, eta: jax.Array, x: jax.Array, t: jax.Array, kernels: jax.Array) -> GenerationPath:
    """Run the learned reverse SDE for training density ``q0`` (n,) and score error ``eta`` (K+1, n).

    ``kernels = ou_kernels(x, t)``. Solves (R) by Crank-Nicolson from t_K = T (h = N(0,1) / q_T) down to
    t_0 = 0; p_hat = q0 * h_0. Pure and jit/vmap-able.
    """
    dx = x[1] - x[0]
    q = kernels @ q0  # forward marginals q_t, (K+1, n)
    sigma = grid_gradient(jnp.log(q), dx)  # score of the ideal path, sigma = d/dx log q_t
    b = x[None, :] + 2.0 * eta
    c = 2.0 * (grid_gradient(eta, dx) + eta * sigma)  # eq. (R): zeroth-order coefficient
    prior = jnp.exp(-0.5 * x**2)
    prior = prior / (prior.sum() * dx)
    h_T = prior / q[-1]

    def step(h_next, k):
        delta = t[k + 1] - t[k]
        a_next = _operator(b[k + 1], c[k + 1], dx)
        lower, main, upper = _operator(b[k], c[k], dx)
        rhs = h_next + 0.5 * delta * _apply(a_next, h_next)
        h = jax.lax.linalg.tridiagonal_solve(
            -0.5 * delta * lower, 1.0 - 0.5 * delta * main, -0.5 * delta * upper, rhs[:, None]
        )[:, 0]
        return h, h

    ks = jnp.arange(len(t) - 2, -1, -1)
    h_0, hs = jax.lax.scan(step, h_T, ks)
    h = jnp.concatenate([hs[::-1], h_T[None, :]], axis=0)
    return GenerationPath(p_hat=q0 * h_0, q=q, h=h)
