"""Miniature reproduction: configs, claims and the measurement.

Per seed: a random set system (coverage) and 300 scikit-learn digits (facility location), each under a
cardinality constraint k on a random and an oblivious-adversarial insert/delete stream; then the digits
under a partition matroid by class with capacities 1, 2, 4 (rank k = 10, 20, 40). Every algorithm sees
the same stream; recompute-greedy's value on V_t is the reference of every ratio.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from icml26_shared import Claim, Experiment, derive, new_figure, save_figure
from icml26_shared import Config as BaseConfig
from icml26_shared.records import DryRun

from .baselines import LazyRepair, RecomputeGreedy, SwapStreaming
from .constraints import Cardinality
from .data import adversarial_stream, digits_facility_location, partition_by_class, random_set_system, random_stream
from .method import DynamicAlgorithm, DynamicConsistent
from .oracles import Coverage, FacilityLocation, Oracle


@dataclass(frozen=True)
class Config(BaseConfig):
    n_sets: int = 200  # coverage: ground set of random sets
    universe: int = 500
    mean_set_size: float = 15.0
    n_digits: int = 300  # facility location / matroid: ground set of digits
    k: int = 40  # cardinality constraint
    eps: float = 0.5
    steps: int = 500  # stream length (the first n/2 operations insert)
    p_del: float = 0.3
    capacities: tuple[int, ...] = (1, 2, 4)  # partition matroid capacity per digit class -> rank 10 * c


CONFIGS = {
    "smoke": Config(seeds=(0, 1), n_sets=30, universe=80, n_digits=40, k=8, steps=60, capacities=(1, 2)),
    "quick": Config(),
    # The budget the README names as missing: larger matroid ranks, where the level scheme's bound sits below 2k
    # and log k can separate from k: capacities up to 8 (rank 10 -> 80, as the paper config's first four), with
    # 500 digits (~50 per class, ~25 active: room for capacity 8) and 800-operation streams (the same churn after
    # the n/2 insert-only prefix). Seeds: the inconclusive matroid-log-growth slope is 0.534 with a per-seed std
    # of 0.258 against 0.66, so n = (2 x 0.258 / 0.126)^2 = 16.8 -> 17 seeds. The two failing cardinality claims
    # are decided (sems 0.008 and 0.003) and keep quick's k, eps and set system. Cost: ~14 CPU s per quick seed
    # (9.7 cardinality + 4.5 matroid, measured under load); x2.7 for |V| x steps, + rank 80 -> ~50 s per seed,
    # ~14 min for 17 seeds on one core (seeds run in sequence).
    "medium": Config(seeds=tuple(range(17)), n_digits=500, steps=800, capacities=(1, 2, 4, 8)),
    "paper": Config(seeds=tuple(range(10)), n_digits=1000, steps=5000, capacities=(1, 2, 4, 8, 16)),
}

CLAIMS = [
    Claim(
        "consistency-bound",
        "Our per-step change never exceeds the implementation's stated O(1/eps^2) bound (max over steps / bound).",
        "O(1/eps^2) consistency for cardinality (abstract, main theorem)",
        "ours_max_change_over_bound",
        "<=",
        1.0,
    ),
    Claim(
        "greedy-recourse-2k",
        "Recompute-greedy's maximum per-step change reaches about 2k (max change / 2k >= 0.5).",
        "recomputing from scratch can change up to 2k elements per step (Sec. 1)",
        "greedy_max_change_over_2k",
        ">=",
        0.5,
    ),
    Claim(
        "ours-below-greedy-recourse",
        "Our maximum per-step change is below recompute-greedy's (paired: greedy max - ours max > 0).",
        "sublinear vs. up to 2k changes per step (Sec. 1)",
        "greedy_minus_ours_max_change",
        ">",
        0.0,
    ),
    Claim(
        "value-vs-greedy",
        "Our value stays at least 0.8 of recompute-greedy's on average (cardinality, both streams).",
        "1/2 - O(eps) approximation in expectation (abstract)",
        "ours_ratio",
        ">=",
        0.8,
    ),
    Claim(
        "lazy-adversarial-below-0p6",
        "Lazy repair's value ratio drops below 0.6 of greedy on the adversarial stream.",
        "motivation: repairing locally fails under deletions of the solution (Sec. 1)",
        "lazy_ratio_adversarial",
        "<",
        0.6,
    ),
    Claim(
        "lazy-degrades",
        "Lazy repair does worse on the adversarial stream than on the random one (paired ratio difference > 0).",
        "motivation: repairing locally fails under deletions of the solution (Sec. 1)",
        "lazy_ratio_random_minus_adversarial",
        ">",
        0.0,
    ),
    Claim(
        "matroid-value",
        "Under a partition matroid our value stays at least 1/4 of greedy's on average.",
        "1/4 - O(eps) approximation for rank-k matroids (abstract)",
        "matroid_ratio",
        ">=",
        0.25,
    ),
    Claim(
        "matroid-log-growth",
        "Matroid consistency grows about like log k, not like k: the log-log slope of our max per-step change "
        "against the rank (smallest to largest capacity) is below 0.66 "
        "(log k from 10 to 40 predicts 0.34, k predicts 1).",
        "O(log k / eps^2) consistency for rank-k matroids (abstract)",
        "matroid_change_slope",
        "<",
        0.66,
    ),
]


def simulate(f: Oracle, stream: tuple[np.ndarray, np.ndarray], algorithms: dict[str, DynamicAlgorithm]) -> dict:
    """Run every algorithm on the stream; per step: value, change and oracle calls of each."""
    out = {name: {"value": [], "change": [], "calls": []} for name in algorithms}
    for op, e in zip(*stream, strict=True):
        for name, algorithm in algorithms.items():
            calls = f.calls
            out[name]["change"].append(algorithm.update(int(op), int(e)))
            out[name]["calls"].append(f.calls - calls)
            out[name]["value"].append(algorithm.value())
    return {name: {key: np.asarray(v, dtype=float) for key, v in rec.items()} for name, rec in out.items()}


def _ratio(run: dict, name: str, warmup: int) -> float:
    """Mean over the steps after warm-up of f(ALG_t) / f(GREEDY_t) (steps with f(GREEDY_t) = 0 skipped)."""
    ref = run["greedy"]["value"][warmup:]
    keep = ref > 0
    return float(np.mean(run[name]["value"][warmup:][keep] / ref[keep]))


def _cardinality_runs(config: Config, seed: int) -> dict[tuple[str, str], tuple[dict, DynamicConsistent]]:
    rng = np.random.default_rng(derive(seed, "instances"))
    sim, _ = digits_facility_location(config.n_digits, rng)
    oracles = {
        "coverage": Coverage(random_set_system(config.n_sets, config.universe, config.mean_set_size, rng)),
        "facility": FacilityLocation(sim),
    }
    constraint = Cardinality(config.k)
    runs = {}
    for objective, f in oracles.items():
        stream_rng = np.random.default_rng(derive(seed, "stream", objective))
        streams = {
            "random": random_stream(f.n, config.steps, config.p_del, stream_rng),
            "adversarial": adversarial_stream(
                f, constraint, config.steps, config.p_del, math.ceil(config.eps * config.k), stream_rng
            ),
        }
        for kind, stream in streams.items():
            ours = DynamicConsistent(f, constraint, config.eps, seed=derive(seed, "ours", objective, kind))
            algorithms = {
                "ours": ours,
                "greedy": RecomputeGreedy(f, constraint),
                "lazy": LazyRepair(f, constraint),
                "swap": SwapStreaming(f, constraint),
            }
            runs[objective, kind] = simulate(f, stream, algorithms), ours
    return runs


def _matroid_runs(config: Config, seed: int) -> dict[int, tuple[dict, DynamicConsistent]]:
    rng = np.random.default_rng(derive(seed, "instances"))
    sim, labels = digits_facility_location(config.n_digits, rng)
    f = FacilityLocation(sim)
    stream = random_stream(f.n, config.steps, config.p_del, np.random.default_rng(derive(seed, "matroid-stream")))
    runs = {}
    for capacity in config.capacities:
        matroid = partition_by_class(labels, capacity)
        ours = DynamicConsistent(f, matroid, config.eps, seed=derive(seed, "ours-matroid", capacity))
        runs[matroid.rank] = simulate(f, stream, {"ours": ours, "greedy": RecomputeGreedy(f, matroid)}), ours
    return runs


def measure(config: Config, out_dir: Path) -> dict[str, list[float]]:
    """Per-seed metrics of every claim, plus per-objective/stream ratios and mean changes."""
    values: dict[str, list[float]] = {}

    def put(name: str, value: float) -> None:
        values.setdefault(name, []).append(float(value))

    warmup = {"coverage": config.n_sets // 2, "facility": config.n_digits // 2}  # insert-only prefix
    for seed in config.seeds:
        card = _cardinality_runs(config, seed)
        ours_max = max(run["ours"]["change"].max() for run, _ in card.values())
        greedy_max = max(run["greedy"]["change"].max() for run, _ in card.values())
        put("ours_max_change_over_bound", max(run["ours"]["change"].max() / o.bound for run, o in card.values()))
        put("ours_bound", next(iter(card.values()))[1].bound)
        put("greedy_max_change_over_2k", greedy_max / (2 * config.k))
        put("greedy_minus_ours_max_change", greedy_max - ours_max)
        for name in ("ours", "lazy", "swap"):
            ratios = {key: _ratio(run, name, warmup[key[0]]) for key, (run, _) in card.items()}
            put(f"{name}_ratio", np.mean(list(ratios.values())))
            for kind in ("random", "adversarial"):
                put(f"{name}_ratio_{kind}", np.mean([r for key, r in ratios.items() if key[1] == kind]))
        put(
            "lazy_ratio_random_minus_adversarial",
            values["lazy_ratio_random"][-1] - values["lazy_ratio_adversarial"][-1],
        )
        for name in ("ours", "greedy", "lazy", "swap"):
            put(f"{name}_mean_change", np.mean([run[name]["change"].mean() for run, _ in card.values()]))

        mat = _matroid_runs(config, seed)
        put("matroid_ratio", np.mean([_ratio(run, "ours", warmup["facility"]) for run, _ in mat.values()]))
        for rank, (run, ours) in mat.items():
            put(f"matroid_max_change_k{rank}", run["ours"]["change"].max())
            put(f"matroid_bound_k{rank}", ours.bound)
            put(f"matroid_greedy_max_change_k{rank}", run["greedy"]["change"].max())
        small, big = min(mat), max(mat)
        growth = mat[big][0]["ours"]["change"].max() / max(1.0, mat[small][0]["ours"]["change"].max())
        put("matroid_change_slope", math.log(growth) / math.log(big / small))  # log-log slope vs k
        if seed == config.seeds[0]:
            _figures(card, mat, config, out_dir)
    return values


def _figures(card: dict, mat: dict, config: Config, out_dir: Path) -> None:
    fig, axes = new_figure(ncols=2)
    axes = axes[0]
    run, ours = card["facility", "adversarial"]
    for name, style in (("greedy", "C1-"), ("ours", "C0-"), ("lazy", "C2-")):
        axes[0].plot(run[name]["change"], style, lw=0.8, label=name)
    axes[0].axhline(ours.bound, color="k", ls="--", lw=0.8, label="our bound")
    axes[0].set(
        xlabel="step t", ylabel="|ALG_t sym.diff. ALG_t-1|", title=f"facility location, adversarial, k={config.k}"
    )
    axes[0].legend(fontsize=7)
    for name, style in (("ours", "C0-"), ("lazy", "C2-"), ("swap", "C3-")):
        axes[1].plot(run[name]["value"] / np.maximum(run["greedy"]["value"], 1e-12), style, lw=0.8, label=name)
    axes[1].set(xlabel="step t", ylabel="f(ALG_t) / f(greedy_t)", ylim=(0, 1.1), title="value ratio")
    axes[1].legend(fontsize=7)
    save_figure(fig, out_dir / "cardinality_stream.png")

    fig, ax = new_figure()
    ranks = sorted(mat)
    ax.plot(ranks, [mat[r][0]["ours"]["change"].max() for r in ranks], "C0o-", label="ours, observed max")
    ax.plot(ranks, [mat[r][1].bound for r in ranks], "k--", label="our stated bound")
    ax.plot(ranks, [mat[r][0]["greedy"]["change"].max() for r in ranks], "C1s-", label="recompute-greedy max")
    ax.plot(ranks, [2 * r for r in ranks], "C7:", label="2k")
    ax.set(xscale="log", xlabel="matroid rank k", ylabel="max per-step change", title="partition matroid (digits)")
    ax.legend(fontsize=7)
    save_figure(fig, out_dir / "matroid_consistency.png")


DRY_RUN_OPS = 50  # stream operations of the dry run's one evaluation batch


def build(config: Config) -> DryRun:
    """The dry run: nothing is trained; the step builds the digits facility-location instance at full size and
    runs ours and recompute-greedy (the costliest baseline) on the first operations of a random stream.
    Estimates: recompute-greedy does ~k |V_t| gains of n_digits flops per step, on 4 streams and one per capacity."""
    rank = max(config.k, 10 * max(config.capacities))
    per_step = 4.0 * rank * config.n_digits * config.n_digits / 2
    streams = 4 + len(config.capacities)

    def step(device: str) -> None:
        rng = np.random.default_rng(derive(config.seeds[0], "instances"))
        f = FacilityLocation(digits_facility_location(config.n_digits, rng)[0])
        stream = random_stream(f.n, config.steps, config.p_del, np.random.default_rng(0))
        constraint = Cardinality(config.k)
        algorithms = {
            "ours": DynamicConsistent(f, constraint, config.eps, seed=0),
            "greedy": RecomputeGreedy(f, constraint),
        }
        simulate(f, (stream[0][:DRY_RUN_OPS], stream[1][:DRY_RUN_OPS]), algorithms)

    return DryRun(
        summary=f"{len(config.seeds)} seeds: coverage ({config.n_sets} sets) and facility location ({config.n_digits} "
        f"digits), k={config.k}, {config.steps}-operation streams; partition matroids, capacities {config.capacities}",
        parameters=0,
        memory_bytes=8.0 * 3 * config.n_digits**2,
        flops=per_step * config.steps * streams * len(config.seeds),
        step=step,
        devices=("cpu",),  # numpy on the CPU
        step_memory_bytes=8.0 * 3 * config.n_digits**2,
        step_cpu_seconds=4.0 * config.k * config.n_digits * DRY_RUN_OPS**2 / 1e9,
    )


EXPERIMENT = Experiment(name="dynamic-submodular", configs=CONFIGS, claims=CLAIMS, measure=measure, build=build)


def run(config: Config | str = "quick", out_dir: Path | None = None):
    """Run the reproduction under ``config`` and write results.json and figures into ``out_dir``."""
    return EXPERIMENT.run(config, out_dir)
