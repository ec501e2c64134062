"""What DPRSC is compared against, all at edge-level DP with the same total budget.

* ``global_laplace_answers``: each query gets its exact count + Lap(GS * Q / eps), GS the pattern's
  global sensitivity on n vertices (basic composition over the Q queries).
* ``local_laplace_answers``: each query privately estimates the local sensitivity of its own induced
  subgraph (as in the release, eq. L1) and adds Lap(tau_hat_q / eps2_q); budget eps/Q, delta/Q each.
* ``randomized_response_answers``: publish the graph with every vertex pair flipped w.p. 1/(1+e^eps),
  then answer each box by the unbiased triangle estimator on the noisy induced subgraph.
* ``flat_grid_release``: the projected points in a flat grid of unit cells (no hierarchy).
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
from icml26_shared import check_positive, derive, fail

from .method import (
    Budget,
    Release,
    check_attributes,
    check_boxes,
    dominance_thresholds,
    exact_answers,
    noisy_sensitivity,
    project,
    release,
    split_budget,
)
from .patterns import Pattern, adjacency_statistic, check_host_graph, global_sensitivity, occurrences, triangle


def exact_box_counts(G: nx.Graph, X, lo, hi, pattern: Pattern | None = None, U: int = 16) -> np.ndarray:
    """Non-private counts of ``pattern`` in G[box] for boxes (Q, d) (ground truth)."""
    pattern = pattern or triangle()
    n = check_host_graph(G)
    X = check_attributes(X, n, U)
    lo, hi = check_boxes(lo, hi, X.shape[1], U)
    points, weights = project(occurrences(G, pattern), X, U)
    return exact_answers(points, weights, dominance_thresholds(lo, hi, U))


def global_laplace_answers(
    G: nx.Graph, X, lo, hi, pattern: Pattern | None = None, eps: float = 1.0, U: int = 16, seed: int = 0
) -> np.ndarray:
    """Exact count + Lap(GS * Q / eps) per query: eps-DP for all Q queries by basic composition."""
    pattern = pattern or triangle()
    exact = exact_box_counts(G, X, lo, hi, pattern, U)
    scale = global_sensitivity(pattern, G.number_of_nodes()) * len(exact) / check_positive("eps", eps)
    return exact + np.random.default_rng(derive(seed, "global")).laplace(0.0, scale, len(exact))


def local_laplace_answers(
    G: nx.Graph,
    X,
    lo,
    hi,
    pattern: Pattern | None = None,
    eps: float = 1.0,
    delta: float = 1e-6,
    U: int = 16,
    eps_split: float = 0.3,
    seed: int = 0,
) -> np.ndarray:
    """Per-query local sensitivity: (eps/Q, delta/Q) each, (eps, delta)-DP overall by composition."""
    pattern = pattern or triangle()
    n = check_host_graph(G)
    X = check_attributes(X, n, U)
    lo, hi = check_boxes(lo, hi, X.shape[1], U)
    total = split_budget(eps, delta, eps_split)
    Q = len(lo)
    budget = Budget(total.eps1 / Q, total.eps2 / Q, total.delta / Q)  # basic composition over the Q queries
    rng = np.random.default_rng(derive(seed, "local"))
    points, weights = project(occurrences(G, pattern), X, U)
    counts = exact_answers(points, weights, dominance_thresholds(lo, hi, U))
    A = nx.to_scipy_sparse_array(G, nodelist=range(n), format="csr", dtype=np.int64)
    out = np.empty(len(lo))
    for q in range(len(lo)):
        inside = np.flatnonzero(((X >= lo[q]) & (X <= hi[q])).all(axis=1))
        s = adjacency_statistic(A[inside][:, inside], pattern)
        tau = noisy_sensitivity(s, pattern, budget.eps1, budget.delta, rng)
        out[q] = counts[q] + rng.laplace(0.0, max(tau, 0.0) / budget.eps2)
    return out


def randomized_response_graph(G: nx.Graph, eps: float, seed: int = 0) -> np.ndarray:
    """Dense 0/1 adjacency (n, n) of G with every vertex pair flipped w.p. q = 1/(1+e^eps): eps-edge-DP."""
    n = check_host_graph(G)
    q = 1.0 / (1.0 + math.exp(check_positive("eps", eps)))
    A = nx.to_numpy_array(G, nodelist=range(n), dtype=np.float32)
    flips = np.triu(np.random.default_rng(derive(seed, "rr")).random((n, n)) < q, k=1)
    noisy = np.abs(A - (flips | flips.T))
    np.fill_diagonal(noisy, 0.0)
    return noisy


def randomized_response_answers(
    G: nx.Graph, X, lo, hi, pattern: Pattern | None = None, eps: float = 1.0, U: int = 16, seed: int = 0
) -> np.ndarray:
    """Unbiased triangle counts on the RR graph restricted to each box.

    With x_e = (a_e - q)/(1 - 2q) = alpha a_e + beta, E[x_e] is the true edge indicator and pairs are
    independent, so sum_{triples} prod x_e is unbiased; expanded by how many noisy edges a triple has:
    alpha^3 T + alpha^2 beta P2 + alpha beta^2 (n_R - 2) E + beta^3 C(n_R, 3).
    """
    pattern = pattern or triangle()
    if pattern.kind != "triangle":
        raise fail("pattern", pattern.name, "triangle (the randomised-response estimator here counts triangles)")
    n = check_host_graph(G)
    X = check_attributes(X, n, U)
    lo, hi = check_boxes(lo, hi, X.shape[1], U)
    noisy = randomized_response_graph(G, eps, seed)
    q = 1.0 / (1.0 + math.exp(eps))
    alpha, beta = 1.0 / (1.0 - 2.0 * q), -q / (1.0 - 2.0 * q)
    cells, cell_of = np.unique(X, axis=0, return_inverse=True)
    T, to_cell = _cell_triangles(noisy, cell_of.ravel(), len(cells))
    out = np.empty(len(lo))
    for i in range(len(lo)):
        box = ((cells >= lo[i]) & (cells <= hi[i])).all(axis=1)
        inside = box[cell_of.ravel()]
        deg = to_cell[inside][:, box].sum(axis=1)  # noisy degrees inside the box
        tri = T[np.ix_(box, box, box)].sum() / 6.0
        P2, E, m = (deg * (deg - 1) / 2).sum(), deg.sum() / 2, int(inside.sum())
        out[i] = alpha**3 * tri + alpha**2 * beta * P2 + alpha * beta**2 * (m - 2) * E + beta**3 * math.comb(m, 3)
    return out


def _cell_triangles(A: np.ndarray, cell_of: np.ndarray, C: int) -> tuple[np.ndarray, np.ndarray]:
    """T[a, b, c] = sum_{i in a, j in b, k in c} A_ij A_jk A_ki over attribute cells, and edges vertex -> cell.

    Any box is a union of cells, so its (ordered) closed-walk count is a sum of T entries: one n^3 pass
    answers every query instead of one dense product per query.
    """
    onehot = np.zeros((len(cell_of), C), dtype=A.dtype)
    onehot[np.arange(len(cell_of)), cell_of] = 1.0
    T = np.empty((C, C, C))
    for b in range(C):
        Ab = A[:, cell_of == b]
        T[:, b, :] = onehot.T @ ((Ab @ Ab.T) * A) @ onehot
    return T, (A @ onehot).astype(np.float64)


def flat_grid_release(
    G: nx.Graph,
    X,
    pattern: Pattern | None = None,
    eps: float = 1.0,
    delta: float = 1e-6,
    U: int = 16,
    eps_split: float = 0.3,
    seed: int = 0,
) -> Release:
    """A flat histogram of the projected points (unit cells only): node sensitivity tau_hat, no hierarchy."""
    return release(G, X, pattern, eps, delta, U, eps_split, seed, hierarchical=False)
