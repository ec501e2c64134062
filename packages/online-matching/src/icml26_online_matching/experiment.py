"""Miniature reproduction: configs, claims and the measurement.

One seed = one simulated world: historical donors (-> k-means donor types), a waitlist, one horizon of donor
arrivals with revealed benefits. Every policy faces the same arrivals; its competitive ratio is ALG / OPT against
the omniscient optimum of that same horizon.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from icml26_shared import Claim, Experiment, derive, get_logger, new_figure, save_figure
from icml26_shared import Config as BaseConfig
from icml26_shared.records import DryRun

from .baselines import GreedyPolicy, StatusQuoPolicy, omniscient_optimum, simulate
from .data import SimulatorParams, benefit, learn_donor_types, sample_departures, sample_donors, sample_patients
from .method import CoarsenedPolicy, coarsen, lower_bound, solve_fluid_lp

log = get_logger("online-matching")


@dataclass(frozen=True)
class Config(BaseConfig):
    """n patients on the waitlist, T donor arrivals per horizon, K donor types learned from n_history donors,
    the swept cluster sizes b (m = n / b clusters; b = 1 is the uncoarsened instance, b = n one single cluster)."""

    n: int = 300
    T: int = 250
    K: int = 50
    n_history: int = 5000
    cluster_sizes: tuple[int, ...] = (1, 5, 20, 60, 300)


CONFIGS = {
    "smoke": Config(seeds=(0, 1), n=40, T=30, K=8, n_history=400, cluster_sizes=(1, 4, 10, 40)),
    "quick": Config(seeds=tuple(range(12)), n=300, T=250, K=50, n_history=5000, cluster_sizes=(1, 5, 20, 60, 300)),
    # The budget the README names as missing: the paper's 1,000 donor types (learned from 50,000 historical donors,
    # as in `paper`) instead of 50, so that the types explain the weights the fluid LP plans with; the world doubled
    # (n = 600, T = 500; the paper's 3,000 x 2,500 takes hours) and the sweep gains b = 200 as in `paper`. The same
    # 12 seeds: both failing quick claims are decided (0.754 vs 0.85 and -0.114 vs 0 with sems of 0.005 and 0.006),
    # so more seeds cannot change them. Cost: ~35 CPU s per seed (13 s at n = 300, 70 s at n = 1000 with K = 1000,
    # one seed each, measured under load), ~7 min on one core for the 12 seeds.
    "medium": Config(
        seeds=tuple(range(12)), n=600, T=500, K=1000, n_history=50000, cluster_sizes=(1, 5, 20, 60, 200, 600)
    ),
    # [INF] the paper's scale as far as the abstract tells: 1,000 donor types; a US-sized yearly waitlist.
    "paper": Config(
        seeds=tuple(range(20)), n=3000, T=2500, K=1000, n_history=50000, cluster_sizes=(1, 5, 20, 60, 200, 3000)
    ),
}

CLAIMS = [
    Claim(
        "coarsened_near_optimal",
        "The coarsened LP policy's competitive ratio against the omniscient optimum is at least 0.85.",
        "0.91 in simulations on UNOS data (abstract)",
        "ratio_coarsened",
        ">=",
        0.85,
    ),
    Claim(
        "status_quo_at_most_065",
        "The status-quo priority rule (urgency, then waiting time) reaches a ratio of at most 0.65.",
        "0.51 (abstract)",
        "ratio_status_quo",
        "<=",
        0.65,
    ),
    Claim(
        "status_quo_at_least_050",
        "The status-quo priority rule's ratio is near the paper's, i.e. at least 0.50.",
        "0.51 (abstract)",
        "ratio_status_quo",
        ">=",
        0.50,
    ),
    Claim(
        "delta_grows_with_b",
        "The intra-cluster error grows with the cluster size: every step up the sweep increases it.",
        "guarantee degrades with δ(b), which grows with b (main theorem)",
        "delta_min_step",
        ">",
        0.0,
    ),
    Claim(
        "ratio_drops_when_too_coarse",
        "The ratio first holds, then drops: the chosen cluster size beats the coarsest one (paired per seed).",
        "trade-off in b between 1 - O(1/sqrt(b)) and δ(b) (main theorem)",
        "ratio_drop_at_coarsest",
        ">",
        0.0,
    ),
]


def departures_mask(patients, T: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Dynamic extension: (present (T, n), availability a (n,)). Arrivals are uniform over the horizon (sorted);
    patient u is present at arrival i iff its departure time exceeds the arrival's time. a_u = E[min(D_u, H)] / H
    is the fraction of the horizon u is expected to stay, used to cap the LP (upper_jt = λ_t sum_{u in C_j} a_u)."""
    params = SimulatorParams()
    H = params.horizon_years
    times = np.sort(rng.uniform(0.0, H, T))
    leave = sample_departures(patients, rng, params)
    mu = np.asarray(params.wait_survival)[patients.tier - 1]
    return leave[None, :] > times[:, None], mu / H * (1.0 - np.exp(-H / mu))


def measure_seed(config: Config, seed: int) -> dict[str, float]:
    """All metrics of one simulated world."""
    rng = np.random.default_rng(derive(seed, "world"))
    types = learn_donor_types(sample_donors(config.n_history, rng), config.K, seed=derive(seed, "kmeans"))
    patients = sample_patients(config.n, rng)
    donors = sample_donors(config.T, rng)
    W = benefit(patients, donors, rng=rng)  # (T, n) revealed life-years gained
    t_of = types.assign(donors)  # (T,) each arrival's type
    profile = benefit(patients, types.centroids).T  # (n, K) w(u, t) against the representative donors
    p = types.p
    x_fine = solve_fluid_lp(profile, np.ones(config.n), config.T * p)  # the uncoarsened fluid plan
    w_scale = float((profile * x_fine).sum() / x_fine.sum())  # mean planned weight per match: the scale of δ
    opt, _ = omniscient_optimum(W)
    policy_rng = np.random.default_rng(derive(seed, "policy"))

    out: dict[str, float] = {}
    bounds, policies = {}, {}
    for b in config.cluster_sizes:
        c = coarsen(profile, m=max(1, round(config.n / b)), p=p, seed=derive(seed, "coarsen", b))
        policies[b] = CoarsenedPolicy(c, p, config.T)
        out[f"ratio_b{b}"] = simulate(policies[b], W, t_of, policy_rng)[0] / opt
        out[f"delta_rel_b{b}"] = c.delta_mean / w_scale
        bounds[b] = lower_bound(float(c.b.mean()), c.delta_mean, w_scale)
    b_star = max(bounds, key=bounds.get)  # chosen from the offline data (waitlist + donor types), before evaluation
    sizes = config.cluster_sizes
    out["chosen_b"] = float(b_star)
    out["ratio_coarsened"] = out[f"ratio_b{b_star}"]
    out["ratio_uncoarsened"] = out[f"ratio_b{min(sizes)}"]
    out["ratio_drop_at_coarsest"] = out["ratio_coarsened"] - out[f"ratio_b{max(sizes)}"]
    out["delta_min_step"] = float(np.diff([out[f"delta_rel_b{b}"] for b in sorted(sizes)]).min())
    out["ratio_greedy"] = simulate(GreedyPolicy(), W, t_of, policy_rng)[0] / opt
    status_quo = StatusQuoPolicy(patients.tier, patients.waited)
    out["ratio_status_quo"] = simulate(status_quo, W, t_of, policy_rng)[0] / opt
    chosen = policies[b_star].c
    out["ratio_no_threshold"] = (
        simulate(CoarsenedPolicy(chosen, p, config.T, thresholds=False), W, t_of, policy_rng)[0] / opt
    )

    present, a = departures_mask(patients, config.T, rng)
    opt_dyn, _ = omniscient_optimum(W * present)
    a_cluster = np.bincount(chosen.labels, weights=a)  # expected presence summed per cluster
    upper = a_cluster[:, None] * (config.T * p)[None, :]
    dynamic = CoarsenedPolicy(chosen, p, config.T, upper=upper)
    out["dyn_ratio_coarsened"] = simulate(dynamic, W, t_of, policy_rng, present)[0] / opt_dyn
    out["dyn_ratio_greedy"] = simulate(GreedyPolicy(), W, t_of, policy_rng, present)[0] / opt_dyn
    out["dyn_ratio_status_quo"] = simulate(status_quo, W, t_of, policy_rng, present)[0] / opt_dyn
    log.info(
        "seed %d: b*=%d coarsened %.3f status quo %.3f", seed, b_star, out["ratio_coarsened"], out["ratio_status_quo"]
    )
    return out


def plot(values: dict[str, list[float]], sizes: tuple[int, ...], out_dir: Path) -> None:
    """Ratio and intra-cluster error against the cluster size b, with the baselines as horizontal lines."""
    fig, axes = new_figure(ncols=2)
    ax1, ax2 = axes[0]
    bs = np.array(sorted(sizes))
    for key, label in (("ratio", "coarsened LP policy"), ("delta_rel", "intra-cluster error δ̄(b) / w")):
        ax = ax1 if key == "ratio" else ax2
        arr = np.array([values[f"{key}_b{b}"] for b in bs])
        ax.errorbar(bs, arr.mean(1), yerr=arr.std(1, ddof=1) if arr.shape[1] > 1 else None, marker="o", label=label)
        ax.set_xscale("log")
        ax.set_xlabel("cluster size b = n / m")
    for key, style in (("ratio_greedy", "--"), ("ratio_status_quo", ":")):
        ax1.axhline(np.mean(values[key]), ls=style, color="grey", label=key.removeprefix("ratio_").replace("_", " "))
    ax1.set_ylabel("competitive ratio ALG / OPT")
    ax2.set_ylabel("relative intra-cluster error")
    ax1.legend(fontsize=7)
    ax2.legend(fontsize=7)
    save_figure(fig, out_dir / "ratio_vs_cluster_size.png")


def measure(config: Config, out_dir: Path) -> dict[str, list[float]]:
    """Per-seed metrics over ``config.seeds`` and the figure."""
    rows = [measure_seed(config, seed) for seed in config.seeds]
    values = {k: [float(row[k]) for row in rows] for k in rows[0]}
    plot(values, config.cluster_sizes, Path(out_dir))
    return values


def build(config: Config) -> DryRun:
    """The dry run: no model is trained; the step builds one world's offline side at full size (k-means donor
    types from n_history donors, the waitlist, the (n, K) weight profile) and solves the fluid LP of the
    coarsest clustering. Estimates: the uncoarsened LP has n K variables (HiGHS, ~200 bytes and ~1e4 flops
    per variable [INF]); the (T, n) benefits and the omniscient matching."""
    n_lp = config.n * config.K
    per_world = 1e4 * n_lp + 100.0 * config.n_history * config.K * 2 + 10.0 * config.T * config.n**2

    def step(device: str) -> None:
        rng = np.random.default_rng(derive(config.seeds[0], "world"))
        types = learn_donor_types(sample_donors(config.n_history, rng), config.K, seed=0)
        profile = benefit(sample_patients(config.n, rng), types.centroids).T
        c = coarsen(profile, m=max(1, round(config.n / max(config.cluster_sizes))), p=types.p, seed=0)
        solve_fluid_lp(c.w_bar, c.b, config.T * types.p)

    return DryRun(
        summary=f"{len(config.seeds)} worlds: n={config.n} patients, T={config.T} arrivals, K={config.K} donor types "
        f"from {config.n_history} donors; cluster sizes {config.cluster_sizes}",
        parameters=0,
        memory_bytes=200.0 * n_lp + 8.0 * 3 * config.T * config.n,
        flops=per_world * len(config.seeds),
        step=step,
        devices=("cpu",),  # numpy on the CPU
        step_memory_bytes=8.0 * 3 * config.n * config.K + 8.0 * config.n_history * 4,
        step_cpu_seconds=100.0 * config.n_history * config.K * 2 / 1e9,
    )


EXPERIMENT = Experiment(name="online-matching", configs=CONFIGS, claims=CLAIMS, measure=measure, build=build)


def run(config: Config | str = "quick", out_dir: Path | None = None):
    """Measure, decide the claims and write ``results.json`` (see ``icml26_shared.Experiment.run``)."""
    return EXPERIMENT.run(config, out_dir)
