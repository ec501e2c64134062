"""Our log-domain Sinkhorn against POT's ``ot.sinkhorn(method="sinkhorn_log")`` on the same problems.

Matched conventions: the same cost matrix c_ij = ||x_i - y_j||^2, weights and eps, and OT_eps is computed
from POT's plan as <c, pi> + eps KL(pi || a x b) (the entropic term included). POT's
``empirical_sinkhorn_divergence`` uses another convention (POT issues 255 and 383) and is not used.
Prints, per problem, |OT_eps(ours) - OT_eps(POT)| and the time ratio POT / ours measured in this run.

Run: python packages/sinkhorn-te/benchmarks/bench_solver.py
"""

from __future__ import annotations

import time

import numpy as np
import ot
from icml26_sinkhorn_te import sinkhorn_log, squared_distances
from threadpoolctl import threadpool_limits

SIZES = (100, 200, 400)
EPS_FACTORS = (0.1, 1.0, 10.0)  # eps as multiples of the median cost, as in the experiment's grid
TOL = 1e-8
REPEATS = 3
MAX_ITER = 100_000


def best_time(fn, *args, **kwargs) -> tuple[float, object]:
    """The fastest of REPEATS calls fn(*args, **kwargs) (seconds) and the last result."""
    times, out = [], None
    for _ in range(REPEATS):
        start = time.perf_counter()
        out = fn(*args, **kwargs)
        times.append(time.perf_counter() - start)
    return min(times), out


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"{'n':>5} {'eps/med':>8} {'|diff|':>10} {'ours ms':>9} {'POT ms':>9} {'POT/ours':>9}")
    ratios = []
    for n in SIZES:
        x, y = rng.normal(size=(n, 2)), rng.normal(size=(n + 7, 2)) * 1.3 + 0.5
        a = rng.random(n) + 0.2
        a /= a.sum()
        b = np.full(n + 7, 1.0 / (n + 7))
        cost = squared_distances(x, y)
        for factor in EPS_FACTORS:
            eps = factor * float(np.median(cost))
            t_ours, ours = best_time(sinkhorn_log, a, b, cost, eps, tol=TOL, max_iter=MAX_ITER)
            t_pot, plan = best_time(
                ot.sinkhorn, a, b, cost, eps, method="sinkhorn_log", stopThr=TOL, numItermax=MAX_ITER
            )
            pot_value = float((plan * cost).sum() + eps * (plan * np.log(plan / np.outer(a, b))).sum())
            ratios.append(t_pot / t_ours)
            print(
                f"{n:>5} {factor:>8g} {abs(ours.value - pot_value):>10.2e} "
                f"{1e3 * t_ours:>9.1f} {1e3 * t_pot:>9.1f} {t_pot / t_ours:>9.2f}"
            )
    print(f"geometric mean time ratio POT / ours: {np.exp(np.mean(np.log(ratios))):.2f}")


if __name__ == "__main__":
    with threadpool_limits(limits=1):
        main()
