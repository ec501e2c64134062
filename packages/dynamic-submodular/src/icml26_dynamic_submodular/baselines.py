"""What the paper compares against: recompute-greedy, lazy repair, swap streaming, brute-force OPT."""

from __future__ import annotations

from itertools import combinations

from icml26_shared import fail

from .constraints import Cardinality, PartitionMatroid
from .method import DynamicAlgorithm, greedy
from .oracles import Oracle

BRUTE_FORCE_MAX = 22  # ground sets above this size make enumeration impractical


class RecomputeGreedy(DynamicAlgorithm):
    """Offline greedy on V_t after every operation: the best value, recourse up to 2k per step."""

    def _on_insert(self, e: int) -> None:
        self.solution = greedy(self.f, self.constraint, sorted(self.active))

    _on_delete = _on_insert


class LazyRepair(DynamicAlgorithm):
    """Keep the output; add an inserted element while there is room; refill a deleted slot greedily.

    Recourse <= 2 per step, but it never swaps in better newcomers once the output is full.
    """

    def _on_insert(self, e: int) -> None:
        if self._best_addition([e]) is not None:
            self.solution.append(e)

    def _on_delete(self, e: int) -> None:
        y = self._best_addition(self.active)
        if y is not None:
            self.solution.append(y)


class SwapStreaming(DynamicAlgorithm):
    """Preemption streaming (Chakrabarti-Kale; Buchbinder-Feldman-Schwartz): an arriving element with
    gain at least twice the weight of the cheapest exchangeable output element replaces it.

    The weight of an element is its marginal gain when it entered. Insertion-only 1/4 guarantee under a
    matroid; deletions just remove. Recourse <= 2 per step.
    """

    def __init__(self, f: Oracle, constraint: Cardinality | PartitionMatroid) -> None:
        super().__init__(f, constraint)
        self.weight: dict[int, float] = {}

    def _on_insert(self, e: int) -> None:
        g = float(self.f.gains(self.solution, [e])[0])
        if g <= 0:
            return
        S = self.solution
        if not self.constraint.independent([*S, e]):
            swaps = [x for x in S if self.constraint.independent([s for s in S if s != x] + [e])]
            if not swaps:  # e fits in no exchange (e.g. its class has capacity 0): reject the arrival
                return
            x = min(swaps, key=self.weight.__getitem__)
            if g < 2 * self.weight[x]:
                return
            S.remove(x)
            del self.weight[x]
        S.append(e)
        self.weight[e] = g

    def _on_delete(self, e: int) -> None:
        self.weight.pop(e, None)


def brute_force_opt(f: Oracle, constraint: Cardinality | PartitionMatroid, active) -> tuple[float, list[int]]:
    """max f(S) over independent S within ``active`` by enumeration (monotone f: maximal sets suffice)."""
    active = sorted(int(a) for a in active)
    if len(active) > BRUTE_FORCE_MAX:
        raise fail("active", len(active), f"at most {BRUTE_FORCE_MAX} elements for brute force")
    best, best_set = f.value([]), []
    for size in range(1, min(constraint.rank, len(active)) + 1):
        for S in combinations(active, size):
            if constraint.independent(S):
                v = f.value(S)
                if v > best:
                    best, best_set = v, list(S)
    return float(best), best_set


__all__ = ["BRUTE_FORCE_MAX", "LazyRepair", "RecomputeGreedy", "SwapStreaming", "brute_force_opt"]
