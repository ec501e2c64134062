"""ZipMoE's hierarchical, compression-aware expert cache: full slots and sign-mantissa (SM) slots per layer.

The plan (``planning.plan_cache``) fixes how many slots of each type a layer has. While serving, every
requested expert that is not cached gets a placement from its popularity rank in the layer, counted in
tokens over the whole run (the official ``ProactiveDecision``): with ``up`` experts requested more often,

* ``up < n_full + margin * N``: a full slot (else a free SM slot, else a full slot by eviction);
* ``up < n_full + n_sm + 2 margin * N``: an SM slot (else a free full slot, else an SM slot by eviction);
* otherwise a free SM or full slot if there is one, else the expert is used once and not kept.

A pool evicts the slot with the fewest tokens served since it was filled (a new entry starts at 1), never
one requested by the current layer. An SM hit stays in its SM slot.
"""

from __future__ import annotations

from icml26_shared import check_closed_interval, check_int, fail


class HierarchicalCache:
    """Per layer ``n_full`` full slots and ``n_sm`` SM slots over ``num_experts`` experts."""

    def __init__(self, num_layers: int, num_experts: int, n_full: int, n_sm: int, margin: float = 0.0):
        check_int("num_layers", num_layers, 1)
        self.num_experts = check_int("num_experts", num_experts, 1)
        self.n_full = check_int("n_full", n_full, 0, num_experts)
        self.n_sm = check_int("n_sm", n_sm, 0, num_experts - n_full)
        if n_full + n_sm < 1:
            raise fail("n_full + n_sm", n_full + n_sm, "at least one slot (a budget of one expert or more)")
        self.margin = check_closed_interval("margin", margin, 0.0, 1.0)
        self.popularity = [[0] * num_experts for _ in range(num_layers)]  # tokens per expert, whole run
        self.full: list[dict[int, int]] = [{} for _ in range(num_layers)]  # expert -> tokens since filled
        self.sm: list[dict[int, int]] = [{} for _ in range(num_layers)]

    def state(self, layer: int, expert: int) -> str | None:
        """ "full", "sm" or None (not cached)."""
        if expert in self.full[layer]:
            return "full"
        return "sm" if expert in self.sm[layer] else None

    def _place(self, pool: dict[int, int], size: int, expert: int, protected) -> None:
        if len(pool) >= size:
            victims = [e for e in pool if e not in protected]
            if not victims:
                return
            del pool[min(victims, key=lambda e: pool[e])]
        pool[expert] = 1

    def decide(self, layer: int, expert: int) -> str | None:
        """Where a requested, uncached expert goes: "full", "sm" or None, from its popularity rank."""
        counts = self.popularity[layer]
        up = sum(c > counts[expert] for c in counts)
        normal = self.n_full + self.margin * self.num_experts
        smcache = normal + self.n_sm + self.margin * self.num_experts
        full_free, sm_free = len(self.full[layer]) < self.n_full, len(self.sm[layer]) < self.n_sm
        if up < normal:
            return "full" if full_free or not sm_free else "sm"
        if up < smcache:
            return "sm" if sm_free or not full_free else "full"
        if sm_free:
            return "sm"
        return "full" if full_free else None

    def access(self, layer: int, need: dict[int, int]) -> None:
        """Count the tokens of this layer's requested experts (``{expert: tokens}``) and update the slots."""
        for expert, tokens in need.items():
            self.popularity[layer][expert] += tokens
        for expert, tokens in need.items():
            state = self.state(layer, expert)
            if state is not None:
                (self.full if state == "full" else self.sm)[layer][expert] += tokens
                continue
            target = self.decide(layer, expert)
            if target is not None and (self.n_sm == 0 or self.n_full == 0):
                target = "full" if self.n_full else "sm"  # only one slot type exists
            if target == "full":
                self._place(self.full[layer], self.n_full, expert, need)
            elif target == "sm":
                self._place(self.sm[layer], self.n_sm, expert, need)
