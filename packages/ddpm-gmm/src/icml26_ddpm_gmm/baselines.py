"""Comparators: the linear and cosine schedules, DDIM and the probability-flow ODE, and a numpy DDPM loop.

All samplers share the affine step ``Y_{t-1} = a_t Y_t + b_t s_t(Y_t) + sigma_t Z_t`` of method.py, so
the exact-TV grid chain and the jitted Monte-Carlo chain run every one of them unchanged.
"""

from __future__ import annotations

import numpy as np
from icml26_shared import check_int, check_open_interval, check_positive
from scipy.special import softmax

from .method import Coefficients, GaussianMixture, alpha_bars, check_betas, check_score_error, ddpm_coefficients


def linear_schedule(T: int, beta_start: float = 1e-4, beta_end: float = 0.02) -> np.ndarray:
    """Ho et al. (2020): beta linear from 1e-4 to 0.02 at T=1000, rescaled by 1000/T for other T."""
    T = check_int("T", T, 1)
    check_positive("beta_start", beta_start)
    check_positive("beta_end", beta_end)
    scale = 1000.0 / T
    return check_betas(np.linspace(scale * beta_start, scale * beta_end, T))


def cosine_schedule(T: int, s: float = 0.008, max_beta: float = 0.999) -> np.ndarray:
    """Nichol & Dhariwal (2021): abar(t) = cos^2(((t/T + s)/(1 + s)) pi/2), betas capped at max_beta."""
    T = check_int("T", T, 1)
    check_positive("s", s)
    check_open_interval("max_beta", max_beta, 0.0, 1.0)
    t = np.arange(T + 1) / T
    abar = np.cos((t + s) / (1 + s) * np.pi / 2) ** 2
    return check_betas(np.minimum(1 - abar[1:] / abar[:-1], max_beta))


def ddim_coefficients(betas) -> Coefficients:
    """DDIM (eta = 0, Song et al. 2021) written in the score: eps_hat = -sqrt(1 - abar_t) s_t(x),
    x0_hat = (x + (1 - abar_t) s_t(x)) / sqrt(abar_t), Y_{t-1} = sqrt(abar_{t-1}) x0_hat + sqrt(1 - abar_{t-1}) eps_hat.
    """
    abar = alpha_bars(betas)
    abar_prev = np.concatenate([[1.0], abar[:-1]])
    a = np.sqrt(abar_prev / abar)
    b = a * (1 - abar) - np.sqrt((1 - abar_prev) * (1 - abar))
    return Coefficients(a=a, b=b, sigma=np.zeros_like(abar))


def probability_flow_coefficients(betas) -> Coefficients:
    """Probability-flow ODE, Euler step in the DDPM discretisation (Li et al.'s deterministic sampler):

    Y_{t-1} = (Y_t + (1 - alpha_t) / 2 * s_t(Y_t)) / sqrt(alpha_t).
    """
    betas = check_betas(betas)
    alpha = 1 - betas
    return Coefficients(a=1 / np.sqrt(alpha), b=betas / (2 * np.sqrt(alpha)), sigma=np.zeros_like(betas))


def numpy_ddpm_sample(rng: np.random.Generator, mixture: GaussianMixture, betas, n: int, eps_score=0.0, direction=None):
    """The DDPM sampler as a plain numpy loop over t (the benchmark's reference; same maths as ddpm_sample)."""
    n = check_int("n", n, 1)
    coef, abar = ddpm_coefficients(betas), alpha_bars(betas)
    bias = check_score_error(eps_score, direction, mixture.d)
    y = rng.standard_normal((n, mixture.d))
    for t in reversed(range(len(abar))):
        v = abar[t] * mixture.sigma**2 + 1 - abar[t]
        centers = np.sqrt(abar[t]) * mixture.means
        logits = np.log(mixture.weights) + (y @ centers.T) / v - (centers**2).sum(1) / (2 * v)
        score = (softmax(logits, axis=1) @ centers - y) / v + bias
        y = coef.a[t] * y + coef.b[t] * score + coef.sigma[t] * rng.standard_normal(y.shape)
    return y
