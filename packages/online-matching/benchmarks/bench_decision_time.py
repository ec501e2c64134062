"""Decision time per arrival and fluid-LP solve time: coarsened policy vs the uncoarsened LP policy.

The paper reports less computation for the coarsened policy; this prints both times and their ratios, measured in
one run on the quick config's instance size (n = 300 patients, T = 250 arrivals, K = 50 donor types).
Run: python packages/online-matching/benchmarks/bench_decision_time.py
"""

import time

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

REPEATS = 5


def best_of(fn, repeats=REPEATS):
    """Minimum wall time of ``repeats`` calls (the least disturbed by other load on the machine)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    cfg = CONFIGS["quick"]
    rng = np.random.default_rng(0)
    types = learn_donor_types(sample_donors(cfg.n_history, rng), cfg.K)
    patients, donors = sample_patients(cfg.n, rng), sample_donors(cfg.T, rng)
    W, t_of = benefit(patients, donors, rng=rng), types.assign(donors)
    profile = benefit(patients, types.centroids).T
    lam = cfg.T * types.p
    rows = {}
    for b in (1, 20, 60):
        c = coarsen(profile, m=round(cfg.n / b), p=types.p)
        policy = CoarsenedPolicy(c, types.p, cfg.T)
        lp = best_of(lambda c=c: solve_fluid_lp(c.w_bar, c.b, lam))
        run = best_of(lambda policy=policy: simulate(policy, W, t_of, np.random.default_rng(1)))
        rows[b] = (c.m, lp, run / cfg.T)
    print(
        f"{'b':>4} {'m':>4} {'LP solve (ms)':>14} {'decision/arrival (us)':>22} {'LP ratio':>9} {'decision ratio':>15}"
    )
    for b, (m, lp, dec) in rows.items():
        print(f"{b:>4} {m:>4} {lp * 1e3:>14.2f} {dec * 1e6:>22.1f} {rows[1][1] / lp:>9.2f} {rows[1][2] / dec:>15.2f}")
    print("ratios = uncoarsened (b = 1) time / coarsened time; > 1 means the coarsened policy is faster")


if __name__ == "__main__":
    main()
