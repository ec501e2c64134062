"""Our log-domain Sinkhorn against POT's ``ot.sinkhorn(method="sinkhorn_log")`` on the same problems.

Matched conventions: the same cost matrix c_ij = ||x_i - y_j||^2, weights and eps, and OT_eps is computed
from POT's plan as <c, pi> + eps KL(pi || a x b) (the entropic term included). POT's
``empirical_sinkhorn_divergence`` uses another convention (POT issues 255 and 383) and is not used.
Prints, per problem, the time ratio POT / ours measured in this run, and the largest |OT_eps(ours) -
OT_eps(POT)| over the problems.

Run: python packages/sinkhorn-te/benchmarks/bench_solver.py [--tiny] [--out results]
"""

from __future__ import annotations

from functools import partial

import numpy as np
import ot
from icml26_shared.bench import Benchmark, Case, bench_main, best_seconds
from icml26_sinkhorn_te import sinkhorn_log, squared_distances
from threadpoolctl import threadpool_limits

SIZES = (100, 200, 400)
TINY_SIZES = (10,)
EPS_FACTORS = (0.1, 1.0, 10.0)  # eps as multiples of the median cost, as in the experiment's grid
TOL = 1e-8
REPEATS = 3
MAX_ITER = 100_000


def run(tiny: bool) -> Benchmark:
    """Time both solvers on each (n, eps) problem; the ratio is POT's time / ours. Also checks that the two
    agree on OT_eps (printed in the case name's row as |diff|)."""
    rng = np.random.default_rng(0)
    cases, worst = [], 0.0
    with threadpool_limits(limits=1):
        for n in TINY_SIZES if tiny else SIZES:
            x, y = rng.normal(size=(n, 2)), rng.normal(size=(n + 7, 2)) * 1.3 + 0.5
            a = rng.random(n) + 0.2
            a /= a.sum()
            b = np.full(n + 7, 1.0 / (n + 7))
            cost = squared_distances(x, y)
            for factor in EPS_FACTORS:
                eps = factor * float(np.median(cost))
                solve_ours = partial(sinkhorn_log, a, b, cost, eps, tol=TOL, max_iter=MAX_ITER)
                solve_pot = partial(
                    ot.sinkhorn, a, b, cost, eps, method="sinkhorn_log", stopThr=TOL, numItermax=MAX_ITER
                )
                ours, plan = solve_ours(), solve_pot()
                pot_value = float((plan * cost).sum() + eps * (plan * np.log(plan / np.outer(a, b))).sum())
                worst = max(worst, abs(ours.value - pot_value))
                t_ours, t_pot = best_seconds(solve_ours, REPEATS), best_seconds(solve_pot, REPEATS)
                cases.append(Case(f"n={n}, eps/median={factor:g}", "POT sinkhorn_log", t_ours, t_pot))
    return Benchmark(
        "our log-domain Sinkhorn vs POT ot.sinkhorn(method='sinkhorn_log'), time to tol 1e-8, one thread",
        tuple(cases),
        notes=f"largest |OT_eps(ours) - OT_eps(POT)| over the cases: {worst:.1e}",
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("sinkhorn-te", run))
