"""The measurements behind each claim, one function per claim, on a collinear base mixture (means (K, 1))."""

from __future__ import annotations

import jax
import numpy as np
from scipy import stats

from .baselines import cosine_schedule, ddim_coefficients, linear_schedule, probability_flow_coefficients
from .data import embed, random_direction, spaced_collinear_mixture
from .exact import chain_density_1d, line_of, tv_1d, tv_dims
from .method import GaussianMixture, ddpm_coefficients, ddpm_sample, paper_schedule

FAMILY_LEVEL = 0.05  # family-wise level of the Monte-Carlo KS tests (Bonferroni over all of them)


def loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x (nan if some y <= 0)."""
    y = np.asarray(y, dtype=float)
    if (y <= 0).any():
        return float("nan")
    return float(np.polyfit(np.log(np.asarray(x, dtype=float)), np.log(y), 1)[0])


def paper_ddpm_tv(mixture: GaussianMixture, T: int, h: float, eps_score: float = 0.0) -> float:
    """Exact TV of the paper's DDPM sampler (paper schedule, sigma_t^2 = beta_t) after T steps."""
    betas = paper_schedule(T)
    return tv_1d(mixture, betas, ddpm_coefficients(betas), eps_score, h)


def tv_curve(base: GaussianMixture, Ts, h: float) -> list[float]:
    """Claim A: exact TV for each T in Ts."""
    return [paper_ddpm_tv(base, T, h) for T in Ts]


def dimension_check(base: GaussianMixture, config, seed: int) -> tuple[float, dict]:
    """Claim B: run the full d-dim DDPM chain (jitted, float32) for each d and test, by one-sample KS,
    that <Y, u> follows the exact 1-D chain and that |Y_perp|^2 ~ chi^2(d-1), i.e. Y_perp ~ N(0, I).

    Returns the largest KS statistic over its Bonferroni critical value (<= 1: no d is distinguishable
    from the d-free law) and, per d, the projected samples for the figure.
    """
    betas = paper_schedule(config.mc_T)
    rng = np.random.default_rng(seed)
    n = config.mc_samples
    critical = stats.kstwobign.ppf(1 - FAMILY_LEVEL / (2 * len(config.dims))) / np.sqrt(n)
    grid, p_gen = chain_density_1d(base, betas, ddpm_coefficients(betas), h=config.h)
    cdf = np.cumsum(p_gen) * (grid[1] - grid[0])
    worst, projections = 0.0, {"grid": grid, "p_gen": p_gen}
    for i, d in enumerate(config.dims):
        mixture = embed(base, random_direction(rng, d))
        u, _ = line_of(mixture)
        y = np.asarray(ddpm_sample(jax.random.key(seed + i), mixture, betas, n), dtype=float)
        along = y @ u
        r2 = (y**2).sum(axis=1) - along**2
        ks_along = stats.kstest(along, lambda x: np.interp(x, grid, cdf)).statistic
        ks_orth = stats.kstest(stats.chi2.cdf(r2, d - 1), "uniform").statistic
        worst = max(worst, ks_along / critical, ks_orth / critical)
        projections[d] = along
    return worst, projections


def k_curve(rng: np.random.Generator, config) -> list[float]:
    """Claim C: exact TV at T = K_T for K equally spaced unit-variance components, K in Ks."""
    return [
        paper_ddpm_tv(spaced_collinear_mixture(rng, K, 1, config.K_spacing), config.K_T, config.h) for K in config.Ks
    ]


def score_error_curve(base: GaussianMixture, config, tv_0: float | None = None) -> tuple[list[float], float]:
    """Claim D: exact TV at T = eps_T with a score bias of size eps_s along u, and without (tv_0, eps_s = 0)."""
    tvs = [paper_ddpm_tv(base, config.eps_T, config.h, eps) for eps in config.eps_scores]
    return tvs, paper_ddpm_tv(base, config.eps_T, config.h) if tv_0 is None else tv_0


def nonunit_curve(base: GaussianMixture, config) -> tuple[list[float], list[float]]:
    """Counterpoint: exact TV in d dimensions (d in dims) at T = nonunit_T, for sigma = 1 and sigma_nonunit."""
    betas = paper_schedule(config.nonunit_T)
    coefficients = ddpm_coefficients(betas)
    nonunit = GaussianMixture(base.weights, base.means, config.sigma_nonunit)
    unit = tv_dims(base, betas, coefficients, config.dims, h=config.h)
    return unit, tv_dims(nonunit, betas, coefficients, config.dims, h=config.h)


def comparator_curves(base: GaussianMixture, config) -> dict[str, list[float]]:
    """Exact TV for T in comparator_Ts of DDPM under the linear and cosine schedules, and of DDIM and the
    probability-flow ODE under the paper's schedule (same exact scores)."""
    out: dict[str, list[float]] = {"linear": [], "cosine": [], "ddim": [], "pf_ode": []}
    for T in config.comparator_Ts:
        paper = paper_schedule(T)
        out["linear"].append(tv_1d(base, linear_schedule(T), ddpm_coefficients(linear_schedule(T)), h=config.h))
        out["cosine"].append(tv_1d(base, cosine_schedule(T), ddpm_coefficients(cosine_schedule(T)), h=config.h))
        out["ddim"].append(tv_1d(base, paper, ddim_coefficients(paper), h=config.h))
        out["pf_ode"].append(tv_1d(base, paper, probability_flow_coefficients(paper), h=config.h))
    return out
