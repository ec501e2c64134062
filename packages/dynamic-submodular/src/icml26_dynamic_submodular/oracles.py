"""Monotone submodular objectives as pluggable value oracles, and a spot check of the two properties.

Every oracle maps a set ``S`` of element ids in ``[0, n)`` to ``f(S) >= 0`` and answers batched
marginal gains ``f(S + e) - f(S)``. ``calls`` counts oracle queries (one per value, one per gain), the
cost measure of the benchmark. The guarantees of the paper need ``f`` monotone and submodular;
``check_submodular`` looks for a violation on random samples (a spot check, not a proof).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np
from icml26_shared import check_array, check_closed_interval, check_int, fail

TOLERANCE = 1e-6  # relative slack of the monotone/submodular spot checks (float32 round-off)


class Oracle:
    """Base class: ``value(S)`` and ``gains(S, candidates)`` with a query counter ``calls``."""

    n: int

    def __init__(self, n: int) -> None:
        self.n = check_int("n", n, 1)
        self.calls = 0

    def value(self, S: Collection[int]) -> float:
        """f(S)."""
        self.calls += 1
        return float(self._value(_ids(S)))

    def state(self, S: Collection[int]) -> Any:
        """A summary of S from which gains are cheap (e.g. each client's best similarity)."""
        return self._state(_ids(S))

    def extend(self, state: Any, e: int) -> Any:
        """The state of S + e from the state of S (greedy adds one element at a time)."""
        return self._extend(state, int(e))

    def gains_at(self, state: Any, candidates: Sequence[int] | np.ndarray) -> np.ndarray:
        """Marginal gains f(S + e) - f(S) of ``candidates`` (not in S) given ``state(S)``: (c,) floats."""
        candidates = np.asarray(candidates, dtype=np.intp)
        self.calls += int(candidates.size)
        if candidates.size == 0:
            return np.zeros(0)
        return np.asarray(self._gains(state, candidates), dtype=float)

    def gains(self, S: Collection[int], candidates: Sequence[int] | np.ndarray) -> np.ndarray:
        """Marginal gains f(S + e) - f(S) for every e in ``candidates`` (not in S): (c,) floats."""
        return self.gains_at(self.state(S), candidates)

    def losses(self, S: Collection[int], members: Sequence[int]) -> np.ndarray:
        """Marginal losses f(S) - f(S - x) for every x in ``members`` (all in S): (m,) floats."""
        return np.array([self.gains([s for s in S if s != x], [x])[0] for x in members], dtype=float)

    # Subclasses define _value and, for speed, a vector state; the default state is the set itself.
    def _value(self, S: np.ndarray) -> float:
        raise NotImplementedError

    def _state(self, S: np.ndarray) -> Any:
        return S

    def _extend(self, state: Any, e: int) -> Any:
        return np.append(state, e)

    def _gains(self, state: Any, candidates: np.ndarray) -> np.ndarray:
        base = self._value(state)
        return np.array([self._value(np.append(state, c)) - base for c in candidates])


def _ids(S: Collection[int]) -> np.ndarray:
    return np.fromiter(S, dtype=np.intp, count=len(S))


class Coverage(Oracle):
    """Weighted coverage f(S) = sum of w_u over universe items u covered by some set in S.

    ``incidence``: (n, m) 0/1 matrix, row e is the set of element e; ``weights``: (m,) >= 0 (default 1).
    """

    def __init__(self, incidence: np.ndarray, weights: np.ndarray | None = None) -> None:
        incidence = check_array("incidence", incidence, ndim=2)
        if not np.isin(incidence, (0, 1)).all():
            raise fail("incidence", incidence, "a 0/1 matrix (n sets, m universe items)")
        super().__init__(incidence.shape[0])
        self.A = incidence.astype(np.float32)  # float32 halves the memory traffic of batched gains
        w = np.ones(incidence.shape[1]) if weights is None else check_array("weights", weights, ndim=1, dtype=float)
        if w.shape != (incidence.shape[1],) or (w < 0).any():
            raise fail("weights", w, f"{incidence.shape[1]} non-negative weights, one per universe item")
        self.w = w

    def _state(self, S: np.ndarray) -> np.ndarray:
        return self.w * (self.A[S].sum(0) == 0)  # weight still uncovered, per universe item

    def _extend(self, state: np.ndarray, e: int) -> np.ndarray:
        return state * (1.0 - self.A[e])

    def _value(self, S: np.ndarray) -> float:
        return float(self.w.sum() - self._state(S).sum())

    def _gains(self, state: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        return self.A[candidates] @ state


class FacilityLocation(Oracle):
    """Facility location f(S) = sum_i max_{j in S} sim(i, j) (0 for the empty set).

    ``similarity``: (m clients, n elements), entries >= 0.
    """

    def __init__(self, similarity: np.ndarray) -> None:
        sim = check_array("similarity", similarity, ndim=2, dtype=float)
        if (sim < 0).any():
            raise fail("similarity", sim, "non-negative similarities (negative weights break monotonicity)")
        super().__init__(sim.shape[1])
        self.simT = np.ascontiguousarray(sim.T, dtype=np.float32)  # (n, m): row j serves each client

    def _state(self, S: np.ndarray) -> np.ndarray:
        return self.simT[S].max(0) if S.size else np.zeros(self.simT.shape[1])  # best similarity per client

    def _extend(self, state: np.ndarray, e: int) -> np.ndarray:
        return np.maximum(state, self.simT[e])

    def _value(self, S: np.ndarray) -> float:
        return float(self._state(S).sum())

    def _gains(self, state: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        return np.maximum(self.simT[candidates] - state, 0.0).sum(1)


class GraphCut(Oracle):
    """The summarisation graph cut f(S) = sum_{i in V, j in S} w_ij - lam * sum_{i, j in S} w_ij.

    Monotone submodular for non-negative weights, no self-loops and 0 <= lam <= 1/2. ``graph`` is an
    undirected ``networkx.Graph`` on nodes 0..n-1 with optional ``weight`` edge attributes (default 1).
    """

    def __init__(self, graph, lam: float = 0.5) -> None:
        import networkx as nx

        if not isinstance(graph, nx.Graph):
            raise fail("graph", graph, "a networkx.Graph")
        if graph.is_directed():
            raise fail("graph", graph, "an undirected graph (got a directed one)")
        if graph.is_multigraph():
            raise fail("graph", graph, "a simple graph (got a multigraph with possible multi-edges)")
        if nx.number_of_selfloops(graph):
            raise fail("graph", graph, f"no self-loops (found {nx.number_of_selfloops(graph)})")
        n = graph.number_of_nodes()
        if set(graph.nodes) != set(range(n)):
            raise fail("graph", graph, "nodes labelled 0..n-1")
        self.lam = check_closed_interval("lam", lam, 0.0, 0.5)
        super().__init__(n)
        W = np.zeros((n, n))
        for u, v, w in graph.edges(data="weight", default=1.0):
            if not np.isfinite(w) or w < 0:
                raise fail("graph", graph, f"finite non-negative edge weights (edge {u}-{v} has {w})")
            W[u, v] = W[v, u] = w
        self.W, self.degree = W, W.sum(1)

    def _state(self, S: np.ndarray) -> np.ndarray:
        return self.W[:, S].sum(1)  # total weight from each node into S

    def _extend(self, state: np.ndarray, e: int) -> np.ndarray:
        return state + self.W[:, e]

    def _value(self, S: np.ndarray) -> float:
        return float(self.degree[S].sum() - self.lam * self._state(S)[S].sum())

    def _gains(self, state: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        return self.degree[candidates] - 2.0 * self.lam * state[candidates]


class SetFunction(Oracle):
    """Any set function ``fn(frozenset) -> float`` on ground set 0..n-1 (gains by two value queries)."""

    def __init__(self, n: int, fn: Callable[[frozenset[int]], float]) -> None:
        super().__init__(n)
        if not callable(fn):
            raise fail("fn", fn, "a callable frozenset -> float")
        self.fn = fn

    def _value(self, S: np.ndarray) -> float:
        return float(self.fn(frozenset(int(s) for s in S)))


def check_submodular(f: Oracle, samples: int = 64, seed: int = 0) -> None:
    """Spot-check that ``f`` is non-negative, monotone and submodular on random ``A <= B``, ``e not in B``.

    Raises ValueError naming ``f`` and the violating sets. Oracle queries made here are not counted.
    """
    check_int("samples", samples, 1)
    rng = np.random.default_rng(seed)
    calls = f.calls
    scale = max(1.0, abs(f.value([])))
    for _ in range(samples):
        perm = rng.permutation(f.n)
        b = int(rng.integers(0, f.n))  # |B| < n leaves room for e
        a = int(rng.integers(0, b + 1))
        A, B, e = perm[:a].tolist(), perm[:b].tolist(), int(perm[b])
        fB = f.value(B)
        if not np.isfinite(fB) or fB < -TOLERANCE * scale:
            raise fail("f", f, f"finite values >= 0; f({sorted(B)}) = {fB}")
        scale = max(scale, abs(fB))
        gain_A, gain_B = f.gains(A, [e])[0], f.gains(B, [e])[0]
        if gain_B < -TOLERANCE * scale:
            raise fail("f", f, f"a monotone function; adding {e} to {sorted(B)} changes f by {gain_B:.3g}")
        if gain_A < gain_B - TOLERANCE * scale:
            raise fail("f", f, f"a submodular function; gain of {e} on {sorted(A)} < on its superset {sorted(B)}")
    f.calls = calls
