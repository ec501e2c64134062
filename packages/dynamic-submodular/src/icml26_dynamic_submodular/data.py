"""Instances and update streams: random set systems, facility location on scikit-learn's digits, a
partition matroid by digit class, a random insert/delete stream and an oblivious adversarial stream.

A stream is a pair of arrays ``(ops, elements)`` with ops +1 (insert) / -1 (delete). The digits ship
inside scikit-learn (no download).
"""

from __future__ import annotations

import functools

import numpy as np
from icml26_shared import check_int, check_open_interval

from .constraints import Cardinality, PartitionMatroid
from .method import DELETE, INSERT, greedy
from .oracles import Oracle


def random_set_system(n: int, universe: int, mean_size: float, rng: np.random.Generator) -> np.ndarray:
    """(n, universe) 0/1 incidence of n random sets with sizes ~ 1 + Poisson(mean_size - 1)."""
    check_int("n", n, 1)
    check_int("universe", universe, 1)
    check_open_interval("mean_size", mean_size, 1.0 - 1e-12, universe + 1e-12)
    sizes = np.minimum(1 + rng.poisson(mean_size - 1, size=n), universe)
    incidence = np.zeros((n, universe), dtype=np.int8)
    for e, size in enumerate(sizes):
        incidence[e, rng.choice(universe, size=size, replace=False)] = 1
    return incidence


def digits_facility_location(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """RBF similarity (n, n) of n random scikit-learn digits and their class labels (n,).

    sim(i, j) = exp(-||x_i - x_j||^2 / median squared distance) ([INF] bandwidth: the median heuristic),
    through scikit-learn's pairwise kernels ((n, n) memory, not an (n, n, 64) broadcast).
    """
    from sklearn.metrics.pairwise import euclidean_distances, rbf_kernel

    X, y = _digits()
    check_int("n", n, 2, len(X))
    pick = rng.choice(len(X), size=n, replace=False)
    X, y = X[pick], y[pick]
    sq = euclidean_distances(X, squared=True)  # exact here: the digits are small integers
    return rbf_kernel(X, gamma=1.0 / np.median(sq[np.triu_indices(n, 1)])), y.astype(np.intp)


@functools.cache
def _digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled 8x8 digits (1797, 64) and labels, loaded once per process."""
    from sklearn.datasets import load_digits

    return load_digits(return_X_y=True)


def _choose_op(active: int, target: int, p_del: float, rng: np.random.Generator) -> int:
    """Insert first until ``target`` elements are active, then delete w.p. p_del below and 1 - p_del
    above the target, so the active set churns around ``target`` ([INF] stream shape)."""
    p = p_del if active < target else 1.0 - p_del
    return DELETE if active and rng.random() < p else INSERT


def random_stream(n: int, steps: int, p_del: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random insertions (a uniform absent element) and deletions (a uniform present one)."""
    check_int("steps", steps, 1)
    check_open_interval("p_del", p_del, 0.0, 0.5)
    target = check_int("n", n, 2) // 2
    ops, elements, active, absent = [], [], [], list(range(n))
    for t in range(steps):
        op = INSERT if t < target else _choose_op(len(active), target, p_del, rng)
        pool, other = (absent, active) if op == INSERT else (active, absent)
        e = pool.pop(int(rng.integers(len(pool))))
        other.append(e)
        ops.append(op)
        elements.append(e)
    return np.array(ops, dtype=np.int8), np.array(elements, dtype=np.intp)


def adversarial_stream(
    f: Oracle,
    constraint: Cardinality | PartitionMatroid,
    steps: int,
    p_del: float,
    period: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """An oblivious adversary: like ``random_stream``, but every deletion removes the next element, in
    greedy order, of the offline greedy solution on V_t, recomputed every ``period`` steps.

    It never sees the algorithm's random bits, only the stream itself.
    """
    check_int("steps", steps, 1)
    check_int("period", period, 1)
    check_open_interval("p_del", p_del, 0.0, 0.5)
    n = f.n
    target = n // 2
    ops, elements, active, absent = [], [], set(), list(range(n))
    queue: list[int] = []
    for t in range(steps):
        op = INSERT if t < target else _choose_op(len(active), target, p_del, rng)
        if op == INSERT:
            e = absent.pop(int(rng.integers(len(absent))))
            active.add(e)
        else:
            queue = [q for q in queue if q in active]
            if t % period == 0 or not queue:
                queue = greedy(f, constraint, sorted(active)) or [sorted(active)[int(rng.integers(len(active)))]]
            e = queue.pop(0)
            active.remove(e)
            absent.append(e)
        ops.append(op)
        elements.append(e)
    return np.array(ops, dtype=np.int8), np.array(elements, dtype=np.intp)


def partition_by_class(labels: np.ndarray, capacity: int) -> PartitionMatroid:
    """The partition matroid allowing ``capacity`` elements of every class."""
    check_int("capacity", capacity, 1)
    return PartitionMatroid(labels, np.full(int(labels.max()) + 1, capacity))
