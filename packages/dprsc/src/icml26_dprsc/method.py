"""DPRSC: subgraph projection -> weighted dominance counting -> one noisy range-tree release.

Privacy model (ours, [INF]): edge-level (eps, delta)-DP; graphs G ~ G' differ in one edge; the vertex
attributes X in [0, U)^d are public. A query is a box R = [lo, hi] (inclusive); its answer is the
number of occurrences of H in the induced subgraph G[{v : X_v in R}].

1. Subgraph projection: occurrence S -> p(S) = (min_{v in S} X_v, U-1 - max_{v in S} X_v) in [0, U)^{2d}.
   S lies in G[R] iff every vertex is in R iff p(S) >= (lo, U-1-hi) coordinatewise (eq. P1), so a box
   query is a 2d-dimensional dominance query; equal points merge into one weighted point.
2. Local-sensitivity estimation (eps1 = eps_split * eps): s(G) has global sensitivity 1 (patterns.py);
   s_hat = s(G) + Lap(1/eps1) + 1 + ln(1/(2 delta))/eps1 (eq. L1); tau_hat = tau(s_hat) bounds the
   local sensitivity LS_H of G and of every neighbour G' except with probability <= delta.
3. Truncation: occurrences that use a host edge shared by more than tau_hat occurrences are dropped
   (eq. T1), so no present edge ever contributes more than tau_hat to the released weights.
4. Range tree (eps2 = eps - eps1): each point lies in L^{2d} nodes (L = log2 U + 1), so the node vector
   has L1 sensitivity <= tau_hat * L^{2d}; every node gets Lap(tau_hat * L^{2d} / eps2) (eq. R1), drawn
   lazily from a counter-based generator. All queries are post-processing of this one release.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import networkx as nx
import numpy as np
from icml26_shared import check_array, check_int, check_open_interval, check_positive, derive, fail

from .patterns import (
    Pattern,
    check_host_graph,
    occurrences,
    pair_counts,
    pair_keys,
    sensitivity_bound,
    sensitivity_statistic,
    triangle,
)
from .rangetree import DyadicTree, counter_laplace


def check_attributes(X, n: int, U: int) -> np.ndarray:
    """Integer attributes (n, d) inside [0, U): the public coordinates of the vertices."""
    check_int("U", U, 2)
    if U & (U - 1):
        raise fail("U", U, "a power of two (the dyadic tree halves every axis)")
    X = check_array("X", X, ndim=2)
    if X.shape[0] != n:
        raise fail("X", X, f"one row per vertex of G ({n} rows)")
    if not np.array_equal(X, np.round(X)) or X.min() < 0 or X.max() >= U:
        raise fail("X", X, f"integer attributes in [0, {U}) (found range [{X.min()}, {X.max()}])")
    return X.astype(np.int64)


def check_boxes(lo, hi, d: int, U: int) -> tuple[np.ndarray, np.ndarray]:
    """Query boxes as (Q, d) inclusive integer corners with 0 <= lo <= hi < U."""
    lo = check_array("lo", np.atleast_2d(lo), ndim=2)
    hi = check_array("hi", np.atleast_2d(hi), ndim=2)
    for name, arr in (("lo", lo), ("hi", hi)):
        if arr.shape[1] != d or not np.array_equal(arr, np.round(arr)) or arr.min() < 0 or arr.max() >= U:
            raise fail(name, arr, f"integer box corners of dimension d={d} inside [0, {U})")
    if lo.shape != hi.shape:
        raise fail("hi", hi, f"the shape of lo {lo.shape}")
    if (lo > hi).any():
        raise fail("box", (lo[(lo > hi).any(1)][0].tolist(), hi[(lo > hi).any(1)][0].tolist()), "lo <= hi")
    return lo.astype(np.int64), hi.astype(np.int64)


def project(occ: np.ndarray, X: np.ndarray, U: int) -> tuple[np.ndarray, np.ndarray]:
    """Subgraph projection (eq. P1): occurrences (m, k) -> unique points (m', 2d) and their weights (m',)."""
    if len(occ) == 0:
        return np.zeros((0, 2 * X.shape[1]), np.int64), np.zeros(0)
    coords = X[occ]  # (m, k, d)
    points = np.concatenate([coords.min(axis=1), U - 1 - coords.max(axis=1)], axis=1)
    unique, counts = np.unique(points, axis=0, return_counts=True)
    return unique, counts.astype(np.float64)


def dominance_thresholds(lo: np.ndarray, hi: np.ndarray, U: int) -> np.ndarray:
    """Boxes (Q, d) -> lifted thresholds t (Q, 2d): the box holds S iff p(S) >= t (eq. P1)."""
    return np.concatenate([lo, U - 1 - hi], axis=1)


def exact_answers(points: np.ndarray, weights: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Exact weighted dominance counts sum_{p >= t} w, by brute force over the points (Q,)."""
    return np.array([weights[(points >= row).all(axis=1)].sum() for row in t])


@dataclass(frozen=True)
class Budget:
    """The split eps = eps1 + eps2 and the failure probability delta."""

    eps1: float
    eps2: float
    delta: float


def split_budget(eps: float, delta: float, eps_split: float) -> Budget:
    """eps1 = eps_split * eps for the sensitivity estimate, eps2 = the rest for the tree."""
    eps = check_positive("eps", eps)
    delta = check_open_interval("delta", delta, 0.0, 1.0)
    eps_split = check_open_interval("eps_split", eps_split, 0.0, 1.0)
    return Budget(eps_split * eps, (1.0 - eps_split) * eps, delta)


def noisy_sensitivity(s: float, pattern: Pattern, eps1: float, delta: float, rng: np.random.Generator) -> float:
    """tau_hat = tau(s + Lap(1/eps1) + 1 + ln(1/(2 delta))/eps1) (eq. L1): >= LS of G and G' w.p. >= 1-delta."""
    s_hat = s + rng.laplace(0.0, 1.0 / eps1) + 1.0 + math.log(1.0 / (2.0 * delta)) / eps1
    return sensitivity_bound(pattern, s_hat)


def truncate(occ: np.ndarray, pattern: Pattern, n: int, tau: float) -> np.ndarray:
    """Keep the occurrences all of whose host edges are used by <= tau occurrences (eq. T1)."""
    if len(occ) == 0:
        return occ
    keys, counts = pair_counts(occ, pattern, n)
    heavy = keys[counts > tau]
    return occ[~np.isin(pair_keys(occ, pattern, n), heavy).any(axis=1)]


@dataclass(frozen=True)
class Release:
    """One (eps, delta)-DP release: a noisy range tree answering any number of box queries."""

    tree: DyadicTree
    noise_scale: float  # Laplace scale b of every node (eq. R1)
    noise_key: int  # key of the counter-based generator
    tau: float  # released sensitivity bound tau_hat
    budget: Budget
    d: int
    n_occurrences: int
    n_truncated: int

    def node_values(self, nodes: np.ndarray) -> np.ndarray:
        """Noisy node counts: exact weight + the node's fixed Lap(b) noise."""
        return self.tree.exact(nodes) + counter_laplace(self.noise_key, nodes, self.noise_scale)

    def answer(self, lo, hi) -> np.ndarray:
        """Private counts for boxes lo, hi of shape (Q, d) or (d,) -> (Q,)."""
        lo, hi = check_boxes(lo, hi, self.d, self.tree.U)
        t = dominance_thresholds(lo, hi, self.tree.U)
        return np.array([self.node_values(self.tree.query_nodes(row)).sum() for row in t])


def release(
    G: nx.Graph,
    X,
    pattern: Pattern | None = None,
    eps: float = 1.0,
    delta: float = 1e-6,
    U: int = 16,
    eps_split: float = 0.3,
    seed: int = 0,
    hierarchical: bool = True,
    noise: bool = True,
) -> Release:
    """Release the noisy range tree of ``pattern`` occurrences in ``G`` with attributes ``X`` (n, d).

    ``hierarchical=False`` keeps only the unit cells (the flat-grid baseline, same privacy argument).
    ``noise=False`` is NOT private, for testing and debugging: no sensitivity noise and no truncation
    (tau = inf), no node noise (scale 0), so every answer is the exact range count.
    """
    pattern = pattern or triangle()
    n = check_host_graph(G)
    X = check_attributes(X, n, U)
    budget = split_budget(eps, delta, eps_split)
    check_int("seed", seed, 0)
    if not isinstance(noise, bool):
        raise fail("noise", noise, "a bool (False: the exact, non-private tree, for testing)")
    rng = np.random.default_rng(derive(seed, "tau"))
    if noise:
        tau = noisy_sensitivity(sensitivity_statistic(G, pattern), pattern, budget.eps1, budget.delta, rng)
    else:
        tau = math.inf
    occ = occurrences(G, pattern)
    kept = truncate(occ, pattern, n, tau)
    points, weights = project(kept, X, U)
    tree = DyadicTree(points, weights, U, hierarchical=hierarchical)
    scale = max(tau, 0.0) * tree.nodes_per_point / budget.eps2 if noise else 0.0  # eq. (R1)
    return Release(tree, scale, derive(seed, "nodes"), tau, budget, X.shape[1], len(occ), len(occ) - len(kept))
