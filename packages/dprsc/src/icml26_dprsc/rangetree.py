"""A sparse dyadic range tree over [0, U)^D with lazily drawn, counter-based Laplace noise per node.

Every axis has the dyadic intervals of ``levels`` (0 = the root [0, U), h = log2 U = the unit cells);
a node of the D-dimensional tree is one dyadic interval per axis, identified by an integer (its heap
index per axis, mixed radix 2U-1). The full tree has (2U-1)^D nodes and is never materialised:

* exact node weights are stored sparsely (only nodes holding a point), sorted by node id;
* the noise of node v is Lap(b) computed from a counter-based hash of (key, v): the same node always
  gets the same noise, so every answer is post-processing of one fixed noisy tree, distributed exactly
  as if all (2U-1)^D noisy counts had been drawn up front.

Queries here are dominance (suffix) boxes prod_j [t_j, U); each axis splits into <= h dyadic nodes.
A flat grid is the same structure with only the leaf level (the baseline without hierarchy).
"""

from __future__ import annotations

import numpy as np
from icml26_shared import check_int, fail

CHUNK = 4096  # points expanded to their L^D nodes at a time (bounds memory)


def splitmix64(x: np.ndarray) -> np.ndarray:
    """The SplitMix64 finaliser, elementwise on uint64 (wrapping arithmetic): a bijective 64-bit mixer."""
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def counter_uniform(key: int, counters: np.ndarray) -> np.ndarray:
    """Uniforms in (0, 1) that depend only on (key, counter): u = (mix(mix(key) ^ counter) >> 11 + 0.5) / 2^53."""
    stream = splitmix64(np.asarray([key], dtype=np.uint64))
    bits = splitmix64(stream ^ np.asarray(counters, dtype=np.int64).astype(np.uint64)) >> np.uint64(11)
    return (bits.astype(np.float64) + 0.5) / float(1 << 53)


def counter_laplace(key: int, counters: np.ndarray, scale: float) -> np.ndarray:
    """Lap(scale) by inversion of counter_uniform: -b sign(u - 1/2) ln(1 - 2|u - 1/2|)."""
    centred = counter_uniform(key, counters) - 0.5
    return -scale * np.sign(centred) * np.log1p(-2.0 * np.abs(centred))


class DyadicTree:
    """Exact weights of a point set on the nodes of a dyadic tree over [0, U)^D (sparse)."""

    def __init__(self, points: np.ndarray, weights: np.ndarray, U: int, hierarchical: bool = True):
        self.U = check_int("U", U, 2)
        if U & (U - 1):
            raise fail("U", U, "a power of two (the dyadic tree halves every axis)")
        self.h = U.bit_length() - 1
        self.D = points.shape[1]
        self.base = 2 * U - 1
        if self.base**self.D >= 2**62:
            raise fail("U", U, f"(2U-1)^D < 2^62 node ids for D={self.D}")
        self.levels = np.arange(self.h + 1) if hierarchical else np.array([self.h])
        self.ids, self.weight = self._aggregate(np.asarray(points, np.int64), np.asarray(weights, np.float64))

    @property
    def nodes_per_point(self) -> int:
        """How many nodes contain one point: L^D, the factor in the L1 sensitivity of the node vector."""
        return len(self.levels) ** self.D

    def _heap_ids(self, coords: np.ndarray) -> np.ndarray:
        """(m,) coordinates on one axis -> (m, L) heap ids of the dyadic intervals holding them."""
        lv = self.levels[None, :]
        return (1 << lv) - 1 + (coords[:, None] >> (self.h - lv))

    def _node_ids(self, points: np.ndarray) -> np.ndarray:
        """(m, D) points -> (m, L^D) ids of every node containing each point."""
        ids = np.zeros((len(points), 1), dtype=np.int64)
        for j in range(self.D):
            ids = (ids[:, :, None] * self.base + self._heap_ids(points[:, j])[:, None, :]).reshape(len(points), -1)
        return ids

    def _aggregate(self, points: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Sum the weights of the points into their nodes; returns sorted (ids, weights) of non-empty nodes."""
        parts_ids, parts_w = [], []
        for start in range(0, len(points), CHUNK):
            ids = self._node_ids(points[start : start + CHUNK])
            parts_ids.append(ids.ravel())
            parts_w.append(np.repeat(weights[start : start + CHUNK], ids.shape[1]))
        if not parts_ids:
            return np.zeros(0, np.int64), np.zeros(0)
        ids, inverse = np.unique(np.concatenate(parts_ids), return_inverse=True)
        return ids, np.bincount(inverse, weights=np.concatenate(parts_w), minlength=len(ids))

    def suffix_nodes(self, t: int) -> np.ndarray:
        """Heap ids of the canonical decomposition of [t, U) on one axis (dyadic, or unit cells if flat)."""
        if len(self.levels) == 1:
            return self.U - 1 + np.arange(t, self.U)
        out, lo = [], t
        while lo < self.U:  # the largest aligned block starting at lo: its lowest set bit (or the root)
            size = lo & -lo if lo else self.U
            level = self.h - (size.bit_length() - 1)
            out.append((1 << level) - 1 + (lo >> (self.h - level)))
            lo += size
        return np.asarray(out, dtype=np.int64)

    def query_nodes(self, t: np.ndarray) -> np.ndarray:
        """Node ids whose union is the dominance box prod_j [t_j, U)."""
        ids = np.zeros(1, dtype=np.int64)
        for j in range(self.D):
            ids = (ids[:, None] * self.base + self.suffix_nodes(int(t[j]))[None, :]).ravel()
        return ids

    def exact(self, nodes: np.ndarray) -> np.ndarray:
        """Exact weights of the given node ids (0 for empty nodes)."""
        pos = np.searchsorted(self.ids, nodes)
        pos = np.minimum(pos, max(len(self.ids) - 1, 0))
        hit = (self.ids[pos] == nodes) if len(self.ids) else np.zeros(len(nodes), bool)
        return np.where(hit, self.weight[pos] if len(self.ids) else 0.0, 0.0)
