"""Query latency: answering boxes from one release vs recounting triangles on each induced subgraph.

The paper claims DPRSC is faster than the baselines; the recount is what every per-query mechanism
(global or local sensitivity) must do for each query. SBM graphs with 200-vertex blocks, n in {1000, 2000,
4000, 8000}, 50 random boxes; each path timed once per n in this run. The ratio is the recount's time per
query / the release's; the one-off release time and the triangle counts are in the notes.

Run: python packages/dprsc/benchmarks/bench_query_latency.py [--tiny] [--out results]
"""

from __future__ import annotations

import networkx as nx
import numpy as np
from icml26_dprsc import occurrences, random_boxes, release, sbm_graph, triangle
from icml26_shared.bench import Benchmark, Case, bench_main, best_seconds

BLOCK = 200  # vertices per SBM block; the graph grows by adding blocks
SIZES, QUERIES = (1000, 2000, 4000, 8000), 50
TINY_SIZES, TINY_QUERIES = (400,), 5
REPEATS = 1  # one timing per path, as measured since the first release: the recount dominates the run


def recount(G, X, lo, hi) -> float:
    """Exact count on the induced subgraph of one box (what a per-query mechanism must compute)."""
    inside = np.flatnonzero(((X >= lo) & (X <= hi)).all(axis=1))
    if len(inside) < 3:
        return 0.0
    sub = nx.convert_node_labels_to_integers(G.subgraph(inside.tolist()))
    return float(len(occurrences(sub, triangle())))


def run(tiny: bool) -> Benchmark:
    """Per n: seconds per query from the released tree vs from an exact recount of each box."""
    sizes, queries = (TINY_SIZES, TINY_QUERIES) if tiny else (SIZES, QUERIES)
    cases, built = [], []
    for n in sizes:
        G, X = sbm_graph(n, n // BLOCK, 0.1, 4.0 / n, 1, 16, seed=0)
        lo, hi = random_boxes(X, 16, queries, 0.05, np.random.default_rng(0))
        private = release(G, X, eps=1.0, U=16, seed=0)
        t_release = best_seconds(lambda G=G, X=X: release(G, X, eps=1.0, U=16, seed=0), REPEATS)
        tree = best_seconds(lambda private=private, lo=lo, hi=hi: private.answer(lo, hi), REPEATS) / queries
        exact = best_seconds(
            lambda G=G, X=X, lo=lo, hi=hi: [recount(G, X, lo[i], hi[i]) for i in range(queries)], REPEATS
        )
        cases.append(Case(f"n={n}", "recount induced subgraph", tree, exact / queries))
        built.append(f"n={n}: {private.n_occurrences} triangles, release {t_release:.2f} s")
    return Benchmark(
        f"DPRSC release's range tree vs an exact triangle recount per box, seconds per query ({queries} boxes, "
        "SBM, d=1, U=16, eps=1)",
        tuple(cases),
        notes="one-off release: " + "; ".join(built),
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("dprsc", run))
