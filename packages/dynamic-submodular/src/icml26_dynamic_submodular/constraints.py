"""Feasibility constraints: a cardinality constraint (uniform matroid) and a partition matroid.

Both expose ``rank`` (the k of the paper), ``independent(S)`` and the batched
``feasible_mask(S, candidates)`` (which candidates e keep ``S + e`` independent).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
from icml26_shared import check_array, check_int, fail


class Cardinality:
    """|S| <= k."""

    def __init__(self, k: int) -> None:
        self.k = self.rank = check_int("k", k, 1)

    def independent(self, S: Collection[int]) -> bool:
        return len(S) <= self.k

    def feasible_mask(self, S: Collection[int], candidates: Sequence[int] | np.ndarray) -> np.ndarray:
        return np.full(len(candidates), len(S) < self.k)

    def check_ground_set(self, n: int) -> None:
        """Every ground set fits a cardinality constraint."""


class PartitionMatroid:
    """At most ``capacities[c]`` elements of each class c; ``labels[e]`` is the class of element e.

    The rank is k = sum_c min(capacities[c], |class c|).
    """

    def __init__(self, labels: np.ndarray, capacities: Sequence[int] | np.ndarray) -> None:
        labels = check_array("labels", labels, ndim=1)
        if not np.issubdtype(labels.dtype, np.integer) or (labels < 0).any():
            raise fail("labels", labels, "non-negative integer class labels, one per element")
        caps = check_array("capacities", capacities, ndim=1)
        if not np.issubdtype(caps.dtype, np.integer) or (caps < 0).any():
            raise fail("capacities", caps, "non-negative integer capacities, one per class")
        if labels.max() >= caps.size:
            raise fail("labels", labels, f"labels in [0, {caps.size}) (one capacity per class)")
        self.labels, self.capacities = labels.astype(np.intp), caps.astype(np.intp)
        sizes = np.bincount(self.labels, minlength=caps.size)
        self.rank = check_int("capacities", int(np.minimum(sizes, caps).sum()), 1)

    def _counts(self, S: Collection[int]) -> np.ndarray:
        return np.bincount(self.labels[np.fromiter(S, np.intp, len(S))], minlength=self.capacities.size)

    def independent(self, S: Collection[int]) -> bool:
        return bool((self._counts(S) <= self.capacities).all())

    def feasible_mask(self, S: Collection[int], candidates: Sequence[int] | np.ndarray) -> np.ndarray:
        room = self.capacities - self._counts(S)
        return room[self.labels[np.asarray(candidates, dtype=np.intp)]] > 0

    def check_ground_set(self, n: int) -> None:
        """The labels must cover the oracle's ground set 0..n-1."""
        if self.labels.size != n:
            raise fail("labels", self.labels, f"one label per element of the ground set (n={n})")
