"""Oracle calls and wall time per update: ours vs recompute-greedy, on the same streams.

Run: python benchmarks/bench_update_cost.py [--steps 600] [--k 40] [--eps 0.5]
Prints per-update means and the ratio recompute-greedy / ours (higher = ours cheaper), all measured here.
"""

from __future__ import annotations

import argparse
import time

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


def cost(algorithm, stream) -> tuple[float, float]:
    """Mean oracle calls and mean wall seconds per update of ``algorithm`` on ``stream``."""
    calls = algorithm.f.calls
    start = time.perf_counter()
    for op, e in zip(*stream, strict=True):
        algorithm.update(int(op), int(e))
    wall = time.perf_counter() - start
    return (algorithm.f.calls - calls) / len(stream[0]), wall / len(stream[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--k", type=int, default=40)
    parser.add_argument("--eps", type=float, default=0.5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    sim, labels = digits_facility_location(300, rng)
    cases = {
        f"coverage, cardinality k={args.k}": (Coverage(random_set_system(200, 500, 15.0, rng)), Cardinality(args.k)),
        f"facility location, cardinality k={args.k}": (FacilityLocation(sim), Cardinality(args.k)),
        "facility location, partition matroid k=40": (FacilityLocation(sim), partition_by_class(labels, 4)),
    }
    header = ("case", "calls/update ours", "greedy", "ratio", "ms/update ours", "greedy", "ratio")
    print("{:45s} {:>18s} {:>9s} {:>6s} {:>15s} {:>8s} {:>6s}".format(*header))
    for name, (f, constraint) in cases.items():
        stream = random_stream(f.n, args.steps, 0.3, np.random.default_rng(1))
        ours_calls, ours_wall = cost(DynamicConsistent(f, constraint, args.eps, seed=0), stream)
        greedy_calls, greedy_wall = cost(RecomputeGreedy(f, constraint), stream)
        print(
            f"{name:45s} {ours_calls:18.0f} {greedy_calls:9.0f} {greedy_calls / ours_calls:6.1f}"
            f" {1e3 * ours_wall:15.2f} {1e3 * greedy_wall:8.2f} {greedy_wall / ours_wall:6.1f}"
        )


if __name__ == "__main__":
    main()
