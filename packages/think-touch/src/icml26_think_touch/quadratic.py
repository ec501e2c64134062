"""The convergence theory on a convex quadratic ``f(theta) = 1/2 theta^T A theta - b^T theta``.

Block coordinate gradient descent with step 1/L touches the k selected blocks of G. By the descent lemma
``f(theta_{t+1}) <= f(theta_t) - 1/(2L) sum_{g in S_t} ||grad_g f(theta_t)||^2``, so any strategy whose
cumulative coverage of the gradient norm diverges drives ``||grad f||`` to 0 (the paper's sufficient
condition), the greedy Gauss-Southwell rule maximises the per-step bound, and a strategy that never
selects some block stalls where that block's gradient is non-zero.
"""

from __future__ import annotations

import numpy as np
from icml26_shared import check_int, check_number, fail

from .selection import RunningMax, Strategy


def block_quadratic(G: int, block_size: int, condition: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A random SPD ``A`` (n, n) with eigenvalues log-spaced in [1, condition] in a random orthogonal basis
    (so every block is coupled to every other) and ``b`` (n,) ~ N(0, I), n = G * block_size."""
    n = check_int("G", G, 1) * check_int("block_size", block_size, 1)
    if check_number("condition", condition) < 1:
        raise fail("condition", condition, "a condition number >= 1")
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    A = (Q * np.geomspace(1.0, condition, n)) @ Q.T
    return (A + A.T) / 2, rng.normal(size=n)


def block_coordinate_descent(
    A: np.ndarray, b: np.ndarray, G: int, strategy: Strategy, steps: int, seed: int = 0
) -> dict[str, np.ndarray]:
    """Run ``steps`` rounds of ``theta_g <- theta_g - grad_g f / L`` for g in S_t from theta = 0.

    Returns ``grad_norm`` and ``gap`` (f - f*) at every iterate (steps + 1,), ``selected`` (steps, k): the
    blocks touched at each step, and ``counts`` (G,): how often each block was touched. The bandit is
    rewarded with the normalised ``||grad_g f||^2``.
    """
    A, b = np.asarray(A, dtype=float), np.asarray(b, dtype=float)
    n = b.shape[0]
    if A.shape != (n, n):
        raise fail("A", A, f"a square matrix matching b, shape ({n}, {n})")
    if check_int("G", G, 1) != strategy.G or n % G:
        raise fail("G", G, f"the strategy's G={strategy.G}, dividing n={n}")
    steps = check_int("steps", steps, 1)
    blocks = np.arange(n).reshape(G, n // G)
    L = float(np.linalg.eigvalsh(A)[-1])
    f_star = -0.5 * b @ np.linalg.solve(A, b)
    rng, normalise = np.random.default_rng(seed), RunningMax()
    theta = np.zeros(n)
    grad_norm, gap, counts = np.empty(steps + 1), np.empty(steps + 1), np.zeros(G, dtype=int)
    history = np.empty((steps, strategy.k), dtype=int)
    for t in range(steps + 1):
        grad = A @ theta - b
        grad_norm[t], gap[t] = np.linalg.norm(grad), 0.5 * theta @ A @ theta - b @ theta - f_star
        if t == steps:
            break
        sq_norms = (grad[blocks] ** 2).sum(axis=1)
        selected = strategy.choose(rng, sq_norms)
        idx = blocks[selected].ravel()
        theta[idx] -= grad[idx] / L
        counts[selected] += 1
        history[t] = selected
        strategy.observe(selected, normalise(sq_norms[selected]))
    return {"grad_norm": grad_norm, "gap": np.maximum(gap, 0.0), "selected": history, "counts": counts}
