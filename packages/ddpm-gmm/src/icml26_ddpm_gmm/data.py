"""Generated targets: collinear Gaussian mixtures in R^d (the exact-TV setting), drawn per seed."""

from __future__ import annotations

import numpy as np
from icml26_shared import check_int, check_positive

from .method import GaussianMixture


def random_direction(rng: np.random.Generator, d: int) -> np.ndarray:
    """A uniformly random unit vector u in R^d, shape (d,)."""
    d = check_int("d", d, 1)
    u = rng.standard_normal(d)
    return u / np.linalg.norm(u)


def random_collinear_mixture(
    rng: np.random.Generator,
    K: int,
    d: int,
    spread: float = 4.0,
    sigma: float = 1.0,
) -> GaussianMixture:
    """K components N(a_k u, sigma^2 I_d): a_k ~ U[-spread, spread], weights ~ Dirichlet(2), u random."""
    K = check_int("K", K, 1)
    spread = check_positive("spread", spread)
    a = np.sort(rng.uniform(-spread, spread, K))
    weights = rng.dirichlet(np.full(K, 2.0))
    return GaussianMixture(weights, np.outer(a, random_direction(rng, d)), sigma)


def spaced_collinear_mixture(
    rng: np.random.Generator,
    K: int,
    d: int,
    spacing: float = 3.0,
) -> GaussianMixture:
    """K unit-variance components at a_k = spacing * (k - (K-1)/2) along a random u; weights ~ Dirichlet(2)."""
    K = check_int("K", K, 1)
    spacing = check_positive("spacing", spacing)
    a = spacing * (np.arange(K) - (K - 1) / 2)
    return GaussianMixture(rng.dirichlet(np.full(K, 2.0)), np.outer(a, random_direction(rng, d)))


def embed(mixture: GaussianMixture, u: np.ndarray) -> GaussianMixture:
    """The 1-D mixture (means (K, 1)) placed on the line through unit vector u: means a_k u, shape (K, d)."""
    return GaussianMixture(mixture.weights, np.outer(mixture.means[:, 0], u), mixture.sigma)
