"""The paper's framework for consistent fully dynamic submodular maximisation, instantiated for a
cardinality constraint and for matroids.

Setting (paper, Sec. 1): a stream of insertions and deletions chosen by an oblivious adversary; at every
time t the algorithm outputs a feasible ALG_t within the active set V_t; its consistency is the
worst-case per-step symmetric difference |ALG_t (sym. diff.) ALG_{t-1}|.

Framework components named in the paper: a random rebuild schedule (Random-Scheduling), levels of
deletion robustness, a deletion-robust routine A_R and a non-robust routine A_N, and a gradual
transition from the old solution to each new one over a window of eps * d_i updates. The precise
routines are not public; this module is our reconstruction ([INF], see the README):

* level i owns the last b_i = ceil(k / 2^i) positions of the target order (i = 0 .. levels-1);
* level i rebuilds after epochs of random length in {e_i .. 2 e_i}, e_i = ceil(eps * b_i);
* a rebuild keeps the first k - b_i target elements and completes them with greedy (A_R), which also
  keeps a pool of r backups (best remaining marginal gains) to replace deleted target elements;
* each rebuild opens a window of w_i = ceil(eps^2 * b_i) steps, during which up to ceil(b_i / w_i)
  swaps per step move the output towards the target (add the next target element, drop the
  non-target element of least marginal value when the constraint requires it);
* A_N adds at most one element per step by one greedy step when the output has room;

so every step changes at most 2 + 2 * sum_i ceil(b_i / w_i) elements (``bound``): O(1/eps^2) for
cardinality (one level) and O(log k / eps^2) for a rank-k matroid (ceil(log2 k) + 1 levels).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
from icml26_shared import check_int, check_open_interval, fail

from .constraints import Cardinality, PartitionMatroid
from .oracles import Oracle, check_submodular

INSERT, DELETE = 1, -1
Constraint = Cardinality | PartitionMatroid


def greedy(f: Oracle, constraint: Constraint, candidates: Iterable[int], prefix: Iterable[int] = ()) -> list[int]:
    """Greedy completion of ``prefix`` within ``candidates`` (A_N / the core of A_R).

    Repeatedly adds the feasible candidate of largest positive marginal gain (a 1/2-approximation
    under a matroid, 1 - 1/e under cardinality). Returns the solution in pick order.
    """
    S = list(prefix)
    taken = set(S)
    pool = np.array([c for c in candidates if c not in taken], dtype=np.intp)
    state = f.state(S)
    while pool.size:
        pool = pool[constraint.feasible_mask(S, pool)]  # a matroid never re-admits what it refused
        if not pool.size:
            break
        g = f.gains_at(state, pool)
        j = int(np.argmax(g))
        if g[j] <= 0:
            break
        S.append(int(pool[j]))
        state = f.extend(state, S[-1])
        pool = np.delete(pool, j)
    return S


class DynamicAlgorithm:
    """Shared bookkeeping of every dynamic algorithm here: the active set V_t and the output ALG_t.

    ``update(op, e)`` applies one insertion (op=+1) or deletion (op=-1) and returns
    |ALG_t sym. diff. ALG_{t-1}|. Feasibility is a hard assertion after every step: the output is
    independent and contains no deleted element.
    """

    def __init__(self, f: Oracle, constraint: Constraint) -> None:
        if not isinstance(f, Oracle):
            raise fail("f", f, "an icml26_dynamic_submodular Oracle")
        if not isinstance(constraint, Cardinality | PartitionMatroid):
            raise fail("constraint", constraint, "a Cardinality or PartitionMatroid")
        constraint.check_ground_set(f.n)
        self.f, self.constraint = f, constraint
        self.active: set[int] = set()
        self.solution: list[int] = []

    def update(self, op: int, e: int) -> int:
        """Apply one stream operation and return the number of output elements it changed."""
        e = check_int("e", e, 0, self.f.n - 1)
        before = set(self.solution)
        if op == INSERT:
            if e in self.active:
                raise fail("e", e, "an element not already present (it was inserted and not deleted)")
            self.active.add(e)
            self._on_insert(e)
        elif op == DELETE:
            if e not in self.active:
                raise fail("e", e, "an element currently present (deleting an absent element)")
            self.active.remove(e)
            if e in before:
                self.solution.remove(e)
            self._on_delete(e)
        else:
            raise fail("op", op, f"{INSERT} (insert) or {DELETE} (delete)")
        self._check_feasible()
        return len(before.symmetric_difference(self.solution))

    def value(self) -> float:
        """f(ALG_t)."""
        return self.f.value(self.solution)

    def _on_insert(self, e: int) -> None:
        """Algorithm-specific reaction to inserting e."""

    def _on_delete(self, e: int) -> None:
        """Algorithm-specific reaction to deleting e (already removed from the output)."""

    def _check_feasible(self) -> None:
        S = self.solution
        if len(set(S)) != len(S) or not self.active.issuperset(S) or not self.constraint.independent(S):
            raise AssertionError(f"{type(self).__name__}: infeasible output {sorted(S)} at this step")

    def _best_addition(self, pool: Iterable[int]) -> int | None:
        """One greedy step: the feasible element of ``pool`` with the largest positive gain, or None."""
        taken = set(self.solution)
        pool = np.array([c for c in pool if c not in taken], dtype=np.intp)
        pool = pool[self.constraint.feasible_mask(self.solution, pool)] if pool.size else pool
        if not pool.size:
            return None
        g = self.f.gains(self.solution, pool)
        j = int(np.argmax(g))
        return int(pool[j]) if g[j] > 0 else None


class DynamicConsistent(DynamicAlgorithm):
    """The consistent fully dynamic algorithm (our reconstruction of the paper's framework).

    ``eps`` in (0, 1) trades value for consistency; ``levels`` defaults to 1 for a cardinality
    constraint and ceil(log2 k) + 1 for a matroid; ``seed`` drives the random rebuild schedule.
    ``bound`` is the per-step consistency this implementation guarantees (asserted every step).
    """

    def __init__(
        self,
        f: Oracle,
        constraint: Constraint,
        eps: float = 0.25,
        levels: int | None = None,
        seed: int = 0,
        validate: bool = True,
    ) -> None:
        super().__init__(f, constraint)
        self.eps = check_open_interval("eps", eps, 0.0, 1.0)
        k = constraint.rank
        if levels is None:
            levels = 1 if isinstance(constraint, Cardinality) else math.ceil(math.log2(k)) + 1
        levels = check_int("levels", levels, 1, max(1, math.ceil(math.log2(k)) + 1))
        if validate:
            check_submodular(f, seed=seed)
        self.k = k
        self.blocks = [math.ceil(k / 2**i) for i in range(levels)]  # b_i: target positions level i rebuilds
        self.epochs = [math.ceil(self.eps * b) for b in self.blocks]  # e_i: epoch length drawn in {e_i..2e_i}
        self.windows = [math.ceil(self.eps**2 * b) for b in self.blocks]  # w_i = eps * e_i: transition window
        self.rates = [math.ceil(b / w) for b, w in zip(self.blocks, self.windows, strict=True)]  # swaps per step
        # deletions the target must survive until the next top-level rebuild has been phased in
        self.robustness = 2 * self.epochs[0] + self.windows[0]
        self.bound = 2 + 2 * sum(self.rates)  # 1 deletion + 1 A_N addition + 2 changes per swap
        self.rng = np.random.default_rng(seed)
        self.t = 0
        self.next_rebuild = [self._epoch(i) for i in range(levels)]
        self.window_end = [-1] * levels
        self.target: list[int] = []
        self.backups: list[int] = []
        self.rebuilds = 0

    def _epoch(self, i: int) -> int:
        """Random-Scheduling: the length of level i's next epoch, uniform in {e_i, ..., 2 e_i}."""
        return int(self.rng.integers(self.epochs[i], 2 * self.epochs[i] + 1))

    def update(self, op: int, e: int) -> int:
        change = super().update(op, e)
        if change > self.bound:
            raise AssertionError(f"consistency {change} exceeds the stated bound {self.bound} at t={self.t}")
        return change

    def _on_insert(self, e: int) -> None:
        self._step()

    def _on_delete(self, e: int) -> None:
        if e in self.backups:
            self.backups.remove(e)
        if e in self.target:  # A_R's robustness: a backup takes the deleted element's place in the target
            pos = self.target.index(e)
            self.target.pop(pos)
            y = self._best_backup(self.target)
            if y is not None:
                self.target.insert(pos, y)
                self.backups.remove(y)
        self._step()

    def _best_backup(self, base: list[int]) -> int | None:
        pool = np.array([b for b in self.backups if b not in base], dtype=np.intp)
        pool = pool[self.constraint.feasible_mask(base, pool)] if pool.size else pool
        if not pool.size:
            return None
        g = self.f.gains(base, pool)
        j = int(np.argmax(g))
        return int(pool[j]) if g[j] > 0 else None

    def _step(self) -> None:
        """After the operation: scheduled rebuilds, the gradual transition, then one A_N step."""
        self.t += 1
        due = [i for i, when in enumerate(self.next_rebuild) if self.t >= when]
        if due:
            top = min(due)  # the largest due block subsumes the smaller ones
            self._rebuild(top)
            self.window_end[top] = self.t + self.windows[top] - 1
            for i in due:
                self.next_rebuild[i] = self.t + self._epoch(i)
        budget = sum(r for r, end in zip(self.rates, self.window_end, strict=True) if self.t <= end)
        self._transition(budget)
        y = self._best_addition(self.active)  # A_N: fill free room by one greedy step
        if y is not None:
            self.solution.append(y)

    def _rebuild(self, i: int) -> None:
        """A_R at level i: keep the first k - b_i target elements, greedily complete, keep backups."""
        self.rebuilds += 1
        keep = self.target[: max(0, self.k - self.blocks[i])]
        self.target = greedy(self.f, self.constraint, self.active, prefix=keep)
        rest = np.array(sorted(self.active.difference(self.target)), dtype=np.intp)
        g = self.f.gains(self.target, rest)
        order = np.argsort(-g, kind="stable")[: self.robustness]
        self.backups = [int(rest[j]) for j in order if g[j] > 0]

    def _transition(self, budget: int) -> None:
        """Move up to ``budget`` target elements into the output, each by an addition or a swap."""
        S = self.solution
        adds = [y for y in self.target if y not in set(S)]
        if budget <= 0 or not adds:
            return
        target = set(self.target)
        removable = [x for x in S if x not in target]
        loss = dict(zip(removable, self.f.losses(S, removable), strict=True)) if removable else {}
        for y in adds:
            if budget == 0:
                break
            if not self.constraint.independent([*S, y]):
                swaps = [x for x in removable if x in S and self.constraint.independent([s for s in S if s != x] + [y])]
                if not swaps:
                    continue
                S.remove(min(swaps, key=loss.__getitem__))  # drop the non-target element worth least
            S.append(y)
            budget -= 1
