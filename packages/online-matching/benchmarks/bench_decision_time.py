"""Fluid-LP solve time and decision time per arrival: coarsened policy vs the uncoarsened LP policy.

The paper reports less computation for the coarsened policy; this times both, best of 5, in one run on the
quick config's instance size (n = 300 patients, T = 250 arrivals, K = 50 donor types), at cluster sizes
b = 20 and 60 against b = 1 (m = n clusters: the uncoarsened policy). The ratios are the uncoarsened time /
the coarsened time (> 1: the coarsened policy is faster).

Run: python packages/online-matching/benchmarks/bench_decision_time.py [--tiny] [--out results]
"""

from __future__ import annotations

import numpy as np
from icml26_online_matching import (
    CoarsenedPolicy,
    benefit,
    coarsen,
    learn_donor_types,
    sample_donors,
    sample_patients,
    simulate,
    solve_fluid_lp,
)
from icml26_online_matching.experiment import CONFIGS
from icml26_shared.bench import Benchmark, Case, bench_main, best_seconds

FULL = {"config": "quick", "cluster_sizes": (20, 60), "repeats": 5}
TINY = {"config": "smoke", "cluster_sizes": (4, 10), "repeats": 1}


def run(tiny: bool) -> Benchmark:
    """Per cluster size b (and b = 1): best-of LP solve time and simulated decision time per arrival."""
    size = TINY if tiny else FULL
    cfg, repeats = CONFIGS[size["config"]], size["repeats"]
    rng = np.random.default_rng(0)
    types = learn_donor_types(sample_donors(cfg.n_history, rng), cfg.K)
    patients, donors = sample_patients(cfg.n, rng), sample_donors(cfg.T, rng)
    W, t_of = benefit(patients, donors, rng=rng), types.assign(donors)
    profile = benefit(patients, types.centroids).T
    lam = cfg.T * types.p
    times = {}
    for b in (1, *size["cluster_sizes"]):
        c = coarsen(profile, m=round(cfg.n / b), p=types.p)
        policy = CoarsenedPolicy(c, types.p, cfg.T)
        lp = best_seconds(lambda c=c: solve_fluid_lp(c.w_bar, c.b, lam), repeats)
        decisions = best_seconds(lambda policy=policy: simulate(policy, W, t_of, np.random.default_rng(1)), repeats)
        times[b] = (c.m, lp, decisions / cfg.T)
    cases = []
    for b in size["cluster_sizes"]:
        m, lp, decision = times[b]
        cases.append(Case(f"LP solve, b={b} (m={m})", "uncoarsened LP solve (b=1)", lp, times[1][1]))
        cases.append(Case(f"decision per arrival, b={b}", "uncoarsened decision (b=1)", decision, times[1][2]))
    return Benchmark(
        f"coarsened LP policy vs the uncoarsened one (b=1), seconds per fluid-LP solve and per arrival's decision, "
        f"n={cfg.n} patients, T={cfg.T} arrivals, K={cfg.K} types, best of {repeats}",
        tuple(cases),
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("online-matching", run))
