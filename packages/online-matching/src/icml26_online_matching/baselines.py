"""What the paper compares against: the omniscient offline optimum, greedy, and the status-quo priority rule.

The uncoarsened LP policy is ``CoarsenedPolicy`` on singleton clusters (``coarsen(w, m=n, ...)``), so it lives in
method.py. ``simulate`` runs any policy over one horizon of arrivals.
"""

from __future__ import annotations

import numpy as np
from icml26_shared import check_array, fail
from scipy.optimize import linear_sum_assignment

from .method import check_weights


def omniscient_optimum(W: np.ndarray) -> tuple[float, np.ndarray]:
    """Perfect-foresight benchmark: a max-weight matching of all T arrivals to the n offline nodes.

    W (T, n) >= 0 (0 = no edge). Returns (value, match) with match[i] the node of arrival i or -1.
    """
    W = check_weights("W", W)
    rows, cols = linear_sum_assignment(W, maximize=True)
    match = np.full(W.shape[0], -1)
    keep = W[rows, cols] > 0
    match[rows[keep]] = cols[keep]
    return float(W[rows, cols].sum()), match


class GreedyPolicy:
    """Give each arrival to the available node of largest weight (1/2-competitive in the worst case)."""

    def reset(self) -> None:
        """Greedy keeps no state."""

    def decide(self, i: int, t: int, w_row: np.ndarray, available: np.ndarray, rng: np.random.Generator) -> int:
        gains = np.where(available, w_row, 0.0)
        u = int(gains.argmax())
        return u if gains[u] > 0 else -1


class StatusQuoPolicy:
    """US-style priority rule: among compatible available patients, the most urgent status (1 before 6),
    ties broken by the longest waiting time; the size of the benefit is ignored beyond compatibility."""

    def __init__(self, tier: np.ndarray, waited: np.ndarray):
        tier = check_array("tier", tier, ndim=1)
        waited = check_array("waited", waited, ndim=1)
        if tier.shape != waited.shape:
            raise fail("waited", waited, f"one waiting time per patient ({tier.shape[0]})")
        self.rank = np.lexsort((-waited, tier))  # priority order: tier ascending, then waiting time descending

    def reset(self) -> None:
        """The priority order is fixed; no state."""

    def decide(self, i: int, t: int, w_row: np.ndarray, available: np.ndarray, rng: np.random.Generator) -> int:
        ok = available[self.rank] & (w_row[self.rank] > 0)
        return int(self.rank[ok.argmax()]) if ok.any() else -1


def simulate(
    policy,
    W: np.ndarray,
    types: np.ndarray,
    rng: np.random.Generator,
    present: np.ndarray | None = None,
) -> tuple[float, np.ndarray]:
    """Run ``policy`` over the arrivals in order; returns (total weight, match (T,) with -1 for unmatched).

    W (T, n): revealed weights; types (T,): each arrival's type; present (T, n) bool: who is still on the waitlist
    at each arrival (dynamic extension; None = everyone stays).
    """
    W = check_weights("W", W)
    T, n = W.shape
    types = check_array("types", types, ndim=1)
    if types.shape != (T,):
        raise fail("types", types, f"one type per arrival ({T})")
    policy.reset()
    available = np.ones(n, dtype=bool)
    match = np.full(T, -1)
    total = 0.0
    for i in range(T):
        avail_i = available if present is None else available & present[i]
        u = policy.decide(i, int(types[i]), W[i], avail_i, rng)
        if u >= 0:
            if not avail_i[u] or W[i, u] <= 0:
                raise RuntimeError(f"policy {type(policy).__name__} chose unavailable node {u} at arrival {i}")
            available[u] = False
            match[i] = u
            total += W[i, u]
    return total, match
