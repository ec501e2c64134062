"""Targets of the two experiments: a 1-D Gaussian mixture on a grid (exact simulator) and the 2-D ring of
Gaussians (trained simulator). Everything is generated; no file is downloaded.

The OU forward process ``dX = -X dt + sqrt(2) dB`` maps a Gaussian mixture to a Gaussian mixture, so the
diffused density and its score are known in closed form (used by the tests as an independent reference).
"""

from __future__ import annotations

import numpy as np
from icml26_shared import check_array, check_int, check_number, check_positive, fail

# [INF] the 1-D target of the grid simulator: three unequal, well separated modes.
TARGET_WEIGHTS = (0.3, 0.5, 0.2)
TARGET_MEANS = (-2.5, 0.0, 2.5)
TARGET_STDS = (0.6, 0.8, 0.5)


def make_grid(half_width: float = 9.0, n: int = 512) -> np.ndarray:
    """``n`` uniformly spaced cell centres on ``[-half_width, half_width]`` -> (n,)."""
    half_width = check_positive("half_width", half_width)
    n = check_int("n", n, 16)
    dx = 2 * half_width / n
    return -half_width + dx * (np.arange(n) + 0.5)


def check_mixture(weights, means, stds) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate a 1-D mixture: weights >= 0 summing to 1, finite means, stds > 0, equal lengths."""
    w = check_array("weights", weights, ndim=1, dtype=float)
    mu = check_array("means", means, ndim=1, dtype=float)
    s = check_array("stds", stds, ndim=1, dtype=float)
    if (w < 0).any() or abs(w.sum() - 1.0) > 1e-9:
        raise fail("weights", weights, "non-negative mixture weights that sum to 1")
    if (s <= 0).any():
        raise fail("stds", stds, "standard deviations > 0")
    if not len(w) == len(mu) == len(s):
        raise fail("means", means, f"as many means and stds as weights ({len(w)})")
    return w, mu, s


def mixture_density(
    x, weights=TARGET_WEIGHTS, means=TARGET_MEANS, stds=TARGET_STDS, t: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Density and score of the mixture diffused to time ``t`` by the OU process, at points ``x`` (n,).

    Under ``dX = -X dt + sqrt(2) dB`` each component N(mu, s^2) becomes N(e^-t mu, e^-2t s^2 + 1 - e^-2t).
    Returns ``(density (n,), score (n,))``.
    """
    x = check_array("x", x, ndim=1, dtype=float)
    w, mu, s = check_mixture(weights, means, stds)
    t = check_number("t", t)
    if t < 0:
        raise fail("t", t, "a time >= 0")
    m = np.exp(-t)
    var = m**2 * s**2 + 1 - m**2
    z = x[:, None] - m * mu[None, :]
    log_comp = np.log(w + 1e-300) - 0.5 * z**2 / var - 0.5 * np.log(2 * np.pi * var)
    top = log_comp.max(axis=1, keepdims=True)
    resp = np.exp(log_comp - top)
    density = resp.sum(axis=1) * np.exp(top[:, 0])
    score = (resp * (-z / var)).sum(axis=1) / resp.sum(axis=1)
    return density, score


def grid_density(x, weights=TARGET_WEIGHTS, means=TARGET_MEANS, stds=TARGET_STDS) -> np.ndarray:
    """The mixture on the grid ``x``, renormalised so that ``sum(p) * dx == 1`` exactly -> (n,)."""
    p, _ = mixture_density(x, weights, means, stds)
    return p / (p.sum() * (x[1] - x[0]))


def ring_sample(rng: np.random.Generator, n: int, modes: int = 8, radius: float = 2.0, std: float = 0.15):
    """``n`` points of the 2-D ring of ``modes`` equal Gaussians (radius, std) -> (n, 2)."""
    n = check_int("n", n, 1)
    modes = check_int("modes", modes, 1)
    radius = check_positive("radius", radius)
    std = check_positive("std", std)
    angle = 2 * np.pi * rng.integers(0, modes, size=n) / modes
    centres = radius * np.stack([np.cos(angle), np.sin(angle)], axis=1)
    return centres + std * rng.standard_normal((n, 2))
