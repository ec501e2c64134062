"""DDPM with exact Gaussian-mixture scores under the paper's noise schedule (Li, Cai & Wei, ICML 2026).

The target is an isotropic Gaussian mixture ``p_data = sum_k pi_k N(mu_k, sigma^2 I_d)``; the paper's
setting is ``sigma = 1`` (our reading, [INF]). Under the variance-preserving forward process
``X_t = sqrt(alpha_t) X_{t-1} + sqrt(1 - alpha_t) W_t`` every marginal ``q_t`` is again a Gaussian
mixture, so the score is known in closed form and the only error left in the sampler is the
discretisation (plus an optional injected score error). Every reverse sampler here is one affine
update of ``(x, score)``: ``Y_{t-1} = a_t Y_t + b_t s_t(Y_t) + sigma_t Z_t``; this module holds the DDPM
coefficients, the shared jitted chain and the schedule; ``baselines.py`` holds the comparators.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from icml26_shared import check_array, check_choice, check_int, check_number, check_positive, fail

WEIGHT_TOLERANCE = 1e-8  # |sum(pi) - 1| allowed before the weights are refused


@dataclass(frozen=True)
class GaussianMixture:
    """``p_data = sum_k pi_k N(mu_k, sigma^2 I_d)``: weights (K,), means (K, d), component std sigma.

    The paper's dimension-free result is for unit-variance components, ``sigma = 1`` ([INF]); other
    values are kept for the counterpoint that shows why.
    """

    weights: np.ndarray  # pi_k, shape (K,)
    means: np.ndarray  # mu_k, shape (K, d)
    sigma: float = 1.0

    def __post_init__(self) -> None:
        weights = check_array("weights", self.weights, ndim=1, dtype=float)
        means = check_array("means", self.means, ndim=2, dtype=float)
        if (weights < 0).any():
            raise fail("weights", weights.tolist()[:8], "non-negative mixture weights")
        if abs(weights.sum() - 1.0) > WEIGHT_TOLERANCE:
            raise fail("weights", weights.tolist()[:8], f"weights summing to 1 (sum={weights.sum():.10g})")
        if means.shape[0] != weights.shape[0]:
            raise fail("means", means, f"shape (K, d) with K={weights.shape[0]} rows, one per weight")
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "means", means)
        object.__setattr__(self, "sigma", check_positive("sigma", self.sigma))

    @property
    def K(self) -> int:
        return self.weights.shape[0]

    @property
    def d(self) -> int:
        return self.means.shape[1]


class Coefficients(NamedTuple):
    """One reverse step ``Y_{t-1} = a_t Y_t + b_t s_t(Y_t) + sigma_t Z_t``, arrays of shape (T,), index t-1."""

    a: np.ndarray
    b: np.ndarray
    sigma: np.ndarray


def check_betas(betas) -> np.ndarray:
    """A noise schedule beta_1..beta_T: a 1-D float array with every value in the open interval (0, 1)."""
    betas = check_array("betas", betas, ndim=1, dtype=float)
    if not ((betas > 0) & (betas < 1)).all():
        raise fail("betas", betas, "a schedule with every beta_t in the open interval (0, 1)")
    return betas


def paper_schedule(T: int, c0: float = 2.0, c1: float = 4.0) -> np.ndarray:
    """The schedule of the paper's analysis (Li et al.'s DDPM papers), beta_1..beta_T, shape (T,).

    beta_1 = T^{-c0};  beta_{t+1} = (c1 log T / T) * min{beta_1 (1 + c1 log T / T)^t, 1}.
    The constants c0, c1 are "large enough" in the paper; c0=2, c1=4 are our choice ([INF]).
    """
    T = check_int("T", T, 2)
    c0 = check_positive("c0", c0)
    c1 = check_positive("c1", c1)
    rate = c1 * math.log(T) / T
    if rate >= 1:
        raise fail("c1", c1, f"c1 * log(T) / T < 1 so that every beta_t < 1 (got {rate:.3g} for T={T})")
    t = np.arange(1, T)
    beta_1 = T ** (-c0)
    growth = np.exp(t * np.log1p(rate))  # (1 + c1 log T / T)^t without overflow
    return check_betas(np.concatenate([[beta_1], rate * np.minimum(beta_1 * growth, 1.0)]))


def alpha_bars(betas) -> np.ndarray:
    """bar(alpha)_t = prod_{i <= t} (1 - beta_i), shape (T,)."""
    return np.cumprod(1.0 - check_betas(betas))


def ddpm_coefficients(betas, variance: str = "beta") -> Coefficients:
    """DDPM: Y_{t-1} = (Y_t + (1 - alpha_t) s_t(Y_t)) / sqrt(alpha_t) + sigma_t Z_t.

    ``variance="beta"``: sigma_t^2 = beta_t (the paper's sampler); ``"posterior"``: sigma_t^2 =
    beta_t (1 - bar(alpha)_{t-1}) / (1 - bar(alpha)_t) (Ho et al.'s other choice).
    """
    betas = check_betas(betas)
    check_choice("variance", variance, ("beta", "posterior"))
    alpha = 1.0 - betas
    if variance == "beta":
        sigma2 = betas
    else:
        abar = np.cumprod(alpha)
        abar_prev = np.concatenate([[1.0], abar[:-1]])
        sigma2 = betas * (1.0 - abar_prev) / (1.0 - abar)
    return Coefficients(a=1.0 / np.sqrt(alpha), b=betas / np.sqrt(alpha), sigma=np.sqrt(sigma2))


def gmm_score(x, alpha_bar, weights, means, sigma):
    """Exact score of q_t = sum_k pi_k N(sqrt(abar) mu_k, v I), v = abar sigma^2 + 1 - abar; x (..., d).

    grad log q_t(x) = (sum_k w_k(x) sqrt(abar) mu_k - x) / v, with posterior weights
    w_k(x) = softmax_k(log pi_k + <x, c_k>/v - |c_k|^2 / (2v)), c_k = sqrt(abar) mu_k.
    For sigma = 1, v = 1 and w depends on x only through its projection on span{mu_k}.
    """
    v = alpha_bar * sigma**2 + 1.0 - alpha_bar
    centers = jnp.sqrt(alpha_bar) * means  # (K, d)
    logits = jnp.log(weights) + (x @ centers.T) / v - jnp.sum(centers**2, axis=-1) / (2.0 * v)
    w = jax.nn.softmax(logits, axis=-1)  # (..., K)
    return (w @ centers - x) / v


def check_score_error(eps_score: float, direction, d: int) -> np.ndarray:
    """The injected score error eps_score * e (e a unit vector, shape (d,)): its RMS is eps_score."""
    eps_score = check_number("eps_score", eps_score)
    if eps_score < 0:
        raise fail("eps_score", eps_score, "a score-error size >= 0")
    e = np.eye(d)[0] if direction is None else check_array("direction", direction, ndim=1, dtype=float)
    if e.shape != (d,) or np.linalg.norm(e) == 0:
        raise fail("direction", e, f"a non-zero vector of shape ({d},)")
    return eps_score * e / np.linalg.norm(e)


STEP_BUCKET = 512  # schedules are zero-padded to a multiple of this, so one compilation serves every T


def pad_steps(*arrays: np.ndarray) -> list[np.ndarray]:
    """Zero-pad per-step arrays (T,) to a multiple of STEP_BUCKET; loops run only the first T entries."""
    T = len(arrays[0])
    size = -(-T // STEP_BUCKET) * STEP_BUCKET
    return [np.concatenate([x, np.zeros(size - T)]) for x in arrays]


@jax.jit
def _chain(key, y_T, T, abar, a, b, sig, weights, means, sigma, bias):
    """Run Y_T -> Y_0 over t = T..1 (arrays indexed t-1 and zero-padded past T; T is traced)."""

    def step(i, y):
        t = T - 1 - i
        s = gmm_score(y, abar[t], weights, means, sigma) + bias
        z = jax.random.normal(jax.random.fold_in(key, t), y.shape, y.dtype)
        return a[t] * y + b[t] * s + sig[t] * z

    return jax.lax.fori_loop(0, T, step, y_T)


def sample_chain(
    key, mixture: GaussianMixture, betas, n: int, coefficients: Coefficients, eps_score=0.0, direction=None
):
    """n samples (n, d) of a reverse sampler started at Y_T ~ N(0, I_d), with exact scores + eps_score * e."""
    n = check_int("n", n, 1)
    abar = alpha_bars(betas)
    if any(len(c) != len(abar) for c in coefficients):
        raise fail("coefficients", [len(c) for c in coefficients], f"three arrays of length T={len(abar)}")
    bias = check_score_error(eps_score, direction, mixture.d)
    key, k0 = jax.random.split(key)
    dtype = jnp.zeros(0).dtype  # float32 unless x64 is enabled by the caller
    y_T = jax.random.normal(k0, (n, mixture.d), dtype)
    args = (*pad_steps(abar, *coefficients), mixture.weights, mixture.means, mixture.sigma, bias)
    return _chain(key, y_T, len(abar), *(jnp.asarray(v, dtype) for v in args))


def ddpm_sample(key, mixture: GaussianMixture, betas, n: int, eps_score=0.0, direction=None, variance="beta"):
    """The paper's sampler: n DDPM samples (n, d) with exact mixture scores (plus eps_score * e)."""
    return sample_chain(key, mixture, betas, n, ddpm_coefficients(betas, variance), eps_score, direction)
