"""The simulated observational design of the paper's motivating example, with confounding.

P_0 = law of m(X) + N(0, I_2) and P_1 = law of m(X) + 1/2 N(-theta 1_2, I_2) + 1/2 N(theta 1_2, I_2):
the mixture keeps the mean, so the average treatment effect is 0 for every theta while the
counterfactual laws differ for theta > 0. Treatment is confounded by X through the propensity.
"""

from __future__ import annotations

import numpy as np
from icml26_shared import check_int, check_number, fail

DIM = 2
OUTCOME_SLOPE = 0.5  # m(X) = 0.5 X
PROPENSITY_COEF = np.array([0.5, -0.5])  # pi(X) = sigmoid(0.5 X_1 - 0.5 X_2)
PROPENSITY_CLIP = (0.05, 0.95)


def true_propensity(X: np.ndarray) -> np.ndarray:
    """pi(X) = sigmoid(0.5 X_1 - 0.5 X_2), clipped to [0.05, 0.95] by design (positivity)."""
    return np.clip(1.0 / (1.0 + np.exp(-X @ PROPENSITY_COEF)), *PROPENSITY_CLIP)


def _check(n: int, theta: float, rng: np.random.Generator) -> tuple[int, float]:
    if not isinstance(rng, np.random.Generator):
        raise fail("rng", rng, "a numpy.random.Generator")
    n = check_int("n", n, 2)
    theta = check_number("theta", theta)
    return n, theta


def potential_outcomes(X: np.ndarray, theta: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Y(0) = m(X) + N(0, I) and Y(1) = m(X) + mixture noise 1/2 N(-theta 1, I) + 1/2 N(theta 1, I)."""
    n = len(X)
    y0 = OUTCOME_SLOPE * X + rng.normal(size=(n, DIM))
    sign = rng.choice([-1.0, 1.0], size=(n, 1))
    y1 = OUTCOME_SLOPE * X + theta * sign + rng.normal(size=(n, DIM))
    return y1, y0


def simulate(n: int, theta: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n observations (Y (n, 2), A (n,), X (n, 2)) of the confounded design with effect size theta."""
    n, theta = _check(n, theta, rng)
    X = rng.normal(size=(n, DIM))
    A = (rng.random(n) < true_propensity(X)).astype(int)
    y1, y0 = potential_outcomes(X, theta, rng)
    return np.where(A[:, None] == 1, y1, y0), A, X


def sample_counterfactuals(n: int, theta: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n independent draws from each counterfactual law (P_1, P_0), for the ground-truth STE."""
    n, theta = _check(n, theta, rng)
    y1, _ = potential_outcomes(rng.normal(size=(n, DIM)), theta, rng)
    _, y0 = potential_outcomes(rng.normal(size=(n, DIM)), theta, rng)
    return y1, y0
