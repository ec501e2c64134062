"""Wall time and oracle calls per update: ours vs recompute-greedy, on the same streams, measured in one run.

600 random-stream updates (30% deletions), eps = 0.5: coverage (200 random sets over 500 items) and
facility location (300 scikit-learn digits) under cardinality k = 40, and the digits under a partition
matroid of capacity 4 per class (rank 40). Each algorithm runs the stream once. The cases are seconds per
update (ratio recompute-greedy / ours, > 1: ours cheaper); the oracle calls per update, exact counts, are in
the notes with their ratios.

Run: python packages/dynamic-submodular/benchmarks/bench_update_cost.py [--tiny] [--out results]
"""

from __future__ import annotations

import numpy as np
from icml26_dynamic_submodular import (
    Cardinality,
    Coverage,
    DynamicConsistent,
    FacilityLocation,
    RecomputeGreedy,
    digits_facility_location,
    partition_by_class,
    random_set_system,
    random_stream,
)
from icml26_shared.bench import Benchmark, Case, bench_main, best_seconds

EPS = 0.5
FULL = {"steps": 600, "k": 40, "capacity": 4, "digits": 300, "sets": (200, 500, 15.0)}
TINY = {"steps": 30, "k": 5, "capacity": 1, "digits": 60, "sets": (40, 100, 5.0)}


def cost(algorithm, stream) -> tuple[float, float]:
    """Mean oracle calls and mean wall seconds per update of ``algorithm`` on one pass over ``stream``."""
    calls = algorithm.f.calls
    wall = best_seconds(lambda: [algorithm.update(int(op), int(e)) for op, e in zip(*stream, strict=True)], 1)
    return (algorithm.f.calls - calls) / len(stream[0]), wall / len(stream[0])


def run(tiny: bool) -> Benchmark:
    """Both algorithms on each (function, constraint) case; time per update as cases, oracle calls in notes."""
    size = TINY if tiny else FULL
    k, capacity = size["k"], size["capacity"]
    rng = np.random.default_rng(0)
    sim, labels = digits_facility_location(size["digits"], rng)
    problems = {
        f"coverage, cardinality k={k}": (Coverage(random_set_system(*size["sets"], rng)), Cardinality(k)),
        f"facility location, cardinality k={k}": (FacilityLocation(sim), Cardinality(k)),
        f"facility location, partition k={capacity * 10}": (
            FacilityLocation(sim),
            partition_by_class(labels, capacity),
        ),
    }
    cases, calls = [], []
    for name, (f, constraint) in problems.items():
        stream = random_stream(f.n, size["steps"], 0.3, np.random.default_rng(1))
        ours_calls, ours_wall = cost(DynamicConsistent(f, constraint, EPS, seed=0), stream)
        greedy_calls, greedy_wall = cost(RecomputeGreedy(f, constraint), stream)
        cases.append(Case(name, "recompute-greedy", ours_wall, greedy_wall))
        calls.append(f"{name}: {ours_calls:.0f} / {greedy_calls:.0f} ({greedy_calls / ours_calls:.1f}x)")
    return Benchmark(
        f"our dynamic consistent algorithm (eps={EPS}) vs recompute-greedy, wall seconds per update over "
        f"{size['steps']} random-stream updates",
        tuple(cases),
        notes="oracle calls per update, ours / recompute-greedy: " + "; ".join(calls),
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("dynamic-submodular", run))
