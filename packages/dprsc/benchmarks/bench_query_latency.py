"""Query latency: answering boxes from one release vs recounting triangles on each induced subgraph.

The paper claims DPRSC is faster than the baselines; the recount is what every per-query mechanism
(global or local sensitivity) must do for each query. Prints, per n, the one-off release time, the
per-query latency of both paths and their ratio, all measured in this run.

    python packages/dprsc/benchmarks/bench_query_latency.py [--sizes 1000 2000 4000 8000] [--queries 50]
"""

import argparse
import time

import networkx as nx
import numpy as np
from icml26_dprsc import occurrences, random_boxes, release, sbm_graph, triangle

BLOCK = 200  # vertices per SBM block; the graph grows by adding blocks


def recount(G, X, lo, hi) -> float:
    """Exact count on the induced subgraph of one box (what a per-query mechanism must compute)."""
    inside = np.flatnonzero(((X >= lo) & (X <= hi)).all(axis=1))
    if len(inside) < 3:
        return 0.0
    sub = nx.convert_node_labels_to_integers(G.subgraph(inside.tolist()))
    return float(len(occurrences(sub, triangle())))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--d", type=int, default=1)
    args = parser.parse_args()
    print(f"{'n':>6} {'triangles':>10} {'release s':>10} {'tree ms/q':>10} {'recount ms/q':>13} {'ratio':>8}")
    for n in args.sizes:
        G, X = sbm_graph(n, n // BLOCK, 0.1, 4.0 / n, args.d, 16, seed=0)
        lo, hi = random_boxes(X, 16, args.queries, 0.05, np.random.default_rng(0))
        start = time.perf_counter()
        private = release(G, X, eps=1.0, U=16, seed=0)
        built = time.perf_counter() - start
        start = time.perf_counter()
        private.answer(lo, hi)
        tree = (time.perf_counter() - start) / len(lo)
        start = time.perf_counter()
        for i in range(len(lo)):
            recount(G, X, lo[i], hi[i])
        exact = (time.perf_counter() - start) / len(lo)
        timings = f"{built:>10.2f} {1e3 * tree:>10.3f} {1e3 * exact:>13.2f} {exact / tree:>7.0f}x"
        print(f"{n:>6} {private.n_occurrences:>10} {timings}")


if __name__ == "__main__":
    main()
