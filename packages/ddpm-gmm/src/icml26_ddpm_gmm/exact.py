"""Exact total variation of a reverse sampler for a collinear Gaussian mixture, by a 1-D grid chain.

If every mean lies on one line, mu_k = a_k u (|u| = 1), the score splits: along u it is the score of
a 1-D mixture, orthogonal to u it is linear, -x_perp / v_t. So the sampler's law factorises into the
1-D law of <Y, u> (propagated here exactly on a grid, in float64) times an isotropic Gaussian in the
d-1 orthogonal coordinates whose variance follows a closed-form recursion. For sigma = 1 that
recursion is exact (variance stays 1), so the TV is the 1-D TV whatever d is: the dimension-free
mechanism. For sigma != 1 the orthogonal variance is off by O(sum beta_t^2) per coordinate and the TV
in d dimensions is computed by a 2-D quadrature over (<y, u>, |y_perp|).

One grid step: push the density through the monotone map m(y) = a_t y + b_t s_t(y) (change of
variables, linear interpolation) and convolve with N(0, sigma_t^2) by FFT (exact for a Gaussian).
The interpolation does not conserve mass exactly: the chain's total mass drifts by O(h^2) per step, measured
on the README's three-component mixture at h = 0.005: -1.9e-6 after T = 400 steps, -2.7e-7 after 100; at
T = 400 it shrinks about 4x per halving of h (-8.2e-6 at h = 0.01, -3.0e-7 at h = 0.0025). The TV is affected by
at most half the mass error.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from icml26_shared import check_int, check_positive, fail
from scipy import stats

from .method import Coefficients, GaussianMixture, alpha_bars, check_score_error, gmm_score, pad_steps

GRID_SPACING = 0.005  # h of the 1-D grid; tests check that halving it changes the TV by < 1e-4
GRID_PAD = 12.0  # grid covers [min a_k - pad*max(1, sigma), max a_k + pad*max(1, sigma)]


def line_of(mixture: GaussianMixture) -> tuple[np.ndarray, np.ndarray]:
    """(u, a): a unit vector u (d,) and positions a (K,) with mu_k = a_k u; ValueError if not collinear."""
    means = mixture.means
    norms = np.linalg.norm(means, axis=1)
    u = means[np.argmax(norms)] / norms.max() if norms.max() > 0 else np.eye(mixture.d)[0]
    a = means @ u
    if np.abs(means - np.outer(a, u)).max() > 1e-9 * max(1.0, norms.max()):
        raise fail("means", means, "collinear means mu_k = a_k u (the exact TV needs a 1-D projection)")
    return u, a


def make_grid(a: np.ndarray, sigma: float, h: float = GRID_SPACING) -> np.ndarray:
    """A uniform grid (N,), N a power of two, wide enough for the mixture, N(0, 1) and the FFT wrap."""
    h = check_positive("h", h)
    pad = GRID_PAD * max(1.0, sigma)
    low, high = min(a.min(), 0.0) - pad, max(a.max(), 0.0) + pad
    n = 1 << int(np.ceil(np.log2((high - low) / h)))
    return low + h * np.arange(n)


def mixture_density_1d(x, weights, a, sigma):
    """sum_k pi_k N(x; a_k, sigma^2) on x (N,)."""
    z = (x[:, None] - a[None, :]) / sigma
    return np.exp(-0.5 * z**2) @ weights / (sigma * np.sqrt(2 * np.pi))


@jax.jit
def _grid_chain(grid, T, abar, a, b, sig, weights, means, sigma, bias):
    """Density of <Y_0, u> on ``grid`` for Y_T ~ N(0, 1); also min_t min_y m_t'(y) (must stay > 0).

    Arrays are indexed t-1 and zero-padded past T (T is traced, so one compilation serves every T).
    """
    h = grid[1] - grid[0]
    omega = 2 * jnp.pi * jnp.fft.rfftfreq(grid.shape[0], h)
    p_T = jnp.exp(-0.5 * grid**2) / jnp.sqrt(2 * jnp.pi)

    def step(i, carry):
        p, min_slope = carry
        t = T - 1 - i

        def m(y):  # the deterministic part of the step, y scalar
            return a[t] * y + b[t] * (gmm_score(y[None], abar[t], weights, means, sigma)[0] + bias)

        x = jax.vmap(m)(grid)
        dm = jax.vmap(jax.grad(m))(grid)
        pushed = jnp.interp(grid, x, p / dm, left=0.0, right=0.0)  # change of variables through m
        p_new = jnp.fft.irfft(jnp.fft.rfft(pushed) * jnp.exp(-0.5 * (sig[t] * omega) ** 2), n=grid.shape[0])
        return p_new, jnp.minimum(min_slope, jnp.min(dm))

    return jax.lax.fori_loop(0, T, step, (p_T, jnp.inf))


def chain_density_1d(
    mixture: GaussianMixture, betas, coefficients: Coefficients, eps_score=0.0, h: float = GRID_SPACING
) -> tuple[np.ndarray, np.ndarray]:
    """(grid, density of <Y_0, u>) for a collinear mixture, in float64; score error eps_score along u."""
    _, a = line_of(mixture)
    grid = make_grid(a, mixture.sigma, h)
    bias = float(check_score_error(eps_score, None, 1)[0])
    abar = alpha_bars(betas)
    if any(len(c) != len(abar) for c in coefficients):
        raise fail("coefficients", [len(c) for c in coefficients], f"three arrays of length T={len(abar)}")
    with jax.enable_x64(True):
        args = (*pad_steps(abar, *coefficients), mixture.weights, a[:, None], mixture.sigma, bias)
        p_0, min_slope = _grid_chain(jnp.asarray(grid), len(abar), *(jnp.asarray(v, jnp.float64) for v in args))
        p_0, min_slope = np.asarray(p_0), float(min_slope)
    if min_slope <= 0:
        raise fail("coefficients", coefficients, "steps whose map y -> a_t y + b_t s_t(y) is increasing")
    return grid, p_0


def tv_1d(mixture: GaussianMixture, betas, coefficients: Coefficients, eps_score=0.0, h=GRID_SPACING) -> float:
    """TV(law of <Y_0, u>, law of <X_0, u>) = 1/2 int |p_gen - p_data|; for sigma = 1 this is the d-dim TV."""
    grid, p_gen = chain_density_1d(mixture, betas, coefficients, eps_score, h)
    _, a = line_of(mixture)
    p_data = mixture_density_1d(grid, mixture.weights, a, mixture.sigma)
    return 0.5 * float(np.abs(p_gen - p_data).sum() * (grid[1] - grid[0]))


def orthogonal_variance(betas, coefficients: Coefficients, sigma: float = 1.0) -> float:
    """Variance of each coordinate orthogonal to span{mu_k} after the chain, started at 1.

    There the score is -x / v_t, v_t = abar_t sigma^2 + 1 - abar_t, so one step maps
    V -> (a_t - b_t / v_t)^2 V + sigma_t^2. Target: sigma^2. For sigma = 1 and DDPM it stays 1 exactly.
    """
    sigma = check_positive("sigma", sigma)
    abar = alpha_bars(betas)
    v = abar * sigma**2 + 1 - abar
    V = 1.0
    for t in reversed(range(len(abar))):
        V = (coefficients.a[t] - coefficients.b[t] / v[t]) ** 2 * V + coefficients.sigma[t] ** 2
    return float(V)


def tv_d(
    mixture: GaussianMixture, betas, coefficients: Coefficients, d: int, n_radius: int = 2048, h: float = GRID_SPACING
) -> float:
    """Exact TV in d dimensions for a collinear mixture of N(mu_k, sigma^2 I_d), any sigma (see tv_dims)."""
    return tv_dims(mixture, betas, coefficients, (d,), n_radius, h)[0]


def tv_dims(
    mixture: GaussianMixture, betas, coefficients: Coefficients, dims, n_radius: int = 2048, h: float = GRID_SPACING
) -> list[float]:
    """Exact TV in each dimension d of ``dims`` for a collinear mixture of N(mu_k, sigma^2 I_d), any sigma.

    Both laws are (law along u) x (isotropic Gaussian on the d-1 others), so the TV is a 2-D integral
    over y = <x, u> and r = |x_perp| with r chi-distributed: 1/2 int int |p(y) f_V(r) - q(y) f_s2(r)|.
    The 1-D chain runs once for all d.
    """
    dims = [check_int("d", d, 1) for d in dims]
    n_radius = check_int("n_radius", n_radius, 16)
    grid, p_gen = chain_density_1d(mixture, betas, coefficients, h=h)
    _, a = line_of(mixture)
    p_data = mixture_density_1d(grid, mixture.weights, a, mixture.sigma)
    V, s2 = orthogonal_variance(betas, coefficients, mixture.sigma), mixture.sigma**2
    return [_tv_with_orthogonal(grid, p_gen, p_data, d - 1, V, s2, n_radius) for d in dims]


def _tv_with_orthogonal(grid, p_gen, p_data, k: int, V: float, s2: float, n_radius: int) -> float:
    """1/2 int int |p_gen(y) chi_k,V(r) - p_data(y) chi_k,s2(r)| dy dr (k = 0: the 1-D TV)."""
    h = grid[1] - grid[0]
    if k == 0:
        return 0.5 * float(np.abs(p_gen - p_data).sum() * h)
    centre = [np.sqrt(max(k - 1, 0) * w) for w in (V, s2)]
    spread = GRID_PAD * np.sqrt(max(V, s2))
    r = np.linspace(max(0.0, min(centre) - spread), max(centre) + spread, n_radius)
    f_gen, f_data = (stats.chi.pdf(r, k, scale=np.sqrt(w)) for w in (V, s2))  # |N(0, w I_k)|
    stride = 4  # the y-grid is 4x coarser here: the densities are smooth on this scale
    y_gen, y_data = p_gen[::stride], p_data[::stride]
    # trapezoid rule in r (the chi density of 1 dof is largest at the end point r = 0), a sum in y
    inner = [
        np.trapezoid(np.abs(g[:, None] * f_gen - q[:, None] * f_data), r, axis=1).sum()
        for g, q in zip(np.array_split(y_gen, 16), np.array_split(y_data, 16), strict=True)
    ]
    return 0.5 * float(sum(inner) * h * stride)
