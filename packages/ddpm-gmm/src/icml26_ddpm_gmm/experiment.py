"""Miniature reproduction: configs, claims and the measurement.

Per seed we draw a collinear unit-variance mixture (K=4 random positions in [-4, 4], Dirichlet(2)
weights) and measure the exact TV of DDPM under the paper's schedule for T in Ts (claim A), a
Monte-Carlo check of the full d-dimensional chain (claim B), the TV for K in Ks equally spaced
components (claim C), the TV under an injected score error (claim D) and the non-unit-variance
counterpoint (sigma = 0.5, exact TV in d dimensions). The comparators (linear/cosine schedules, DDIM,
probability-flow ODE) are reported as metrics, not claims.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from icml26_shared import Claim, Experiment, derive, get_logger
from icml26_shared import Config as BaseConfig
from icml26_shared.records import DryRun

log = get_logger("ddpm-gmm")


@dataclass(frozen=True)
class Config(BaseConfig):
    Ts: tuple[int, ...] = (25, 50, 100, 200, 400)
    K: int = 4
    spread: float = 4.0
    dims: tuple[int, ...] = (2, 16, 128, 1024)
    mc_samples: int = 2048
    mc_T: int = 25
    Ks: tuple[int, ...] = (2, 8, 32)
    K_spacing: float = 3.0
    K_T: int = 100
    eps_scores: tuple[float, ...] = (0.025, 0.05, 0.1, 0.2)
    eps_T: int = 200
    sigma_nonunit: float = 0.5
    nonunit_T: int = 100
    comparator_Ts: tuple[int, ...] = (25, 100, 400)
    h: float = 0.005


CONFIGS = {
    "smoke": Config(
        seeds=(0,),
        Ts=(32, 64),
        dims=(2, 16),
        mc_samples=128,
        mc_T=32,
        Ks=(2, 4),
        K_T=32,
        eps_scores=(0.1, 0.2),
        eps_T=64,
        nonunit_T=32,
        comparator_Ts=(32, 64),
        h=0.02,
    ),
    "quick": Config(),
    "paper": Config(
        seeds=tuple(range(10)),
        Ts=(25, 50, 100, 200, 400, 800, 1600),
        dims=(2, 16, 128, 1024, 4096),
        mc_samples=20000,
        mc_T=100,
        Ks=(2, 4, 8, 16, 32, 64),
        eps_T=400,
        comparator_Ts=(25, 50, 100, 200, 400, 800, 1600),
        h=0.002,
    ),
}

CLAIMS = [
    Claim(
        "tv_rate_1_over_T",
        "DDPM with exact scores under the paper's schedule: TV decays like 1/T (log-log slope in [-1.3, -0.7]).",
        "TV <= O~(1/T), i.e. O~(1/eps) steps (Theorem 1, abstract)",
        "T_slope_deviation",
        "<=",
        0.3,
    ),
    Claim(
        "dimension_free",
        "The full d-dim DDPM chain (d in {2,16,128,1024}) has the exact 1-D chain along span{mu} and an exact "
        "N(0, I) orthogonal part, so its TV curve is the same for every d: max KS / Bonferroni 5% critical <= 1.",
        "iteration count independent of d (abstract, Theorem 1)",
        "dim_ks_ratio",
        "<=",
        1.0,
    ),
    Claim(
        "K_nearly_flat",
        "TV at fixed T is nearly flat in K (K in {2,8,32}): log-log slope of TV vs K <= 0.25.",
        "independent of K up to log factors (abstract, Theorem 1)",
        "K_slope",
        "<=",
        0.25,
    ),
    Claim(
        "score_error_linear",
        "An injected score error of RMS eps_s raises TV roughly linearly: log-log slope of TV(eps_s) - TV(0) in "
        "[0.7, 1.3].",
        "robust to score errors: TV <= disc. + O~(eps_score) (abstract, Theorem 2)",
        "eps_slope_deviation",
        "<=",
        0.3,
    ),
    Claim(
        "nonunit_counterpoint",
        "Counterpoint (ours, not the paper's): with sigma=0.5 components the exact TV grows with d: "
        "TV(d=1024) / TV(d=2) >= 2 at fixed T.",
        "the theorem assumes unit-variance (isotropic, identity) components [INF]",
        "nonunit_d_ratio",
        ">=",
        2.0,
    ),
]


def measure(config: Config, out_dir: Path) -> dict[str, list[float]]:
    """Run every measurement for every seed; save the figures; return per-seed metrics."""
    from .data import random_collinear_mixture
    from .measurements import (
        comparator_curves,
        dimension_check,
        k_curve,
        loglog_slope,
        nonunit_curve,
        score_error_curve,
        tv_curve,
    )
    from .plots import plot_curves, plot_projections

    metrics: dict[str, list[float]] = {}
    curves: dict[str, list] = {}

    def record(name, value):
        metrics.setdefault(name, []).append(float(value))

    for seed in config.seeds:
        rng = np.random.default_rng(derive(seed, "mixture"))
        base = random_collinear_mixture(rng, config.K, 1, config.spread)
        tv_T = tv_curve(base, config.Ts, config.h)
        slope = loglog_slope(config.Ts, tv_T)
        record("T_slope", slope)
        record("T_slope_deviation", abs(slope + 1))
        record("T_over_logT_slope", loglog_slope(np.asarray(config.Ts) / np.log(config.Ts), tv_T))  # TV ~ log T / T?
        ratio, projections = dimension_check(base, config, derive(seed, "monte-carlo"))
        record("dim_ks_ratio", ratio)
        tv_K = k_curve(np.random.default_rng(derive(seed, "K")), config)
        record("K_slope", loglog_slope(config.Ks, tv_K))
        known = dict(zip(config.Ts, tv_T, strict=True)).get(config.eps_T)  # TV(eps_s = 0), if already measured
        tv_eps, tv_0 = score_error_curve(base, config, known)
        eps_slope = loglog_slope(config.eps_scores, np.asarray(tv_eps) - tv_0)
        record("eps_slope", eps_slope)
        record("eps_slope_deviation", abs(eps_slope - 1))
        tv_unit, tv_nonunit = nonunit_curve(base, config)
        record("unit_d_ratio", tv_unit[-1] / tv_unit[0])
        record("nonunit_d_ratio", tv_nonunit[-1] / tv_nonunit[0])
        for name, xs, tvs in [("T", config.Ts, tv_T), ("K", config.Ks, tv_K), ("nonunit_d", config.dims, tv_nonunit)]:
            for x, tv in zip(xs, tvs, strict=True):
                record(f"tv_{name}{x}", tv)  # the curve points behind the figure
        comparators = comparator_curves(base, config)
        for name, tvs in comparators.items():
            record(f"slope_{name}", loglog_slope(config.comparator_Ts, tvs))
        for key, value in [
            ("T", tv_T),
            ("K", tv_K),
            ("eps", tv_eps),
            ("unit", tv_unit),
            ("nonunit", tv_nonunit),
            ("comparators", comparators),
            ("projections", projections),
        ]:
            curves.setdefault(key, []).append(value)
        log.info(
            "seed %d: T-slope %.3f, KS ratio %.2f, K-slope %.3f, eps-slope %.3f",
            seed,
            slope,
            ratio,
            metrics["K_slope"][-1],
            eps_slope,
        )
    plot_curves(config, curves, out_dir / "tv_curves.png")
    plot_projections(config, curves["projections"][0], out_dir / "mc_projections.png")
    return metrics


CPU_FLOPS = 1e9  # a deliberately low rate for the dry run's time estimate (2 loaded cores)
DRY_RUN_BATCH = 128  # Monte-Carlo samples of the dry run's one evaluation batch


def build(config: Config) -> DryRun:
    """The dry run: nothing is trained (the scores are exact); the step computes the exact TV at the
    largest T (claim A's costliest point) and one batch of the d-dim Monte-Carlo chain at the largest d
    (claim B). Estimates: grid chains of N log N per step, the chain's (n, K, d) float32 score arrays."""
    from .data import embed, random_collinear_mixture, random_direction
    from .exact import make_grid
    from .measurements import paper_ddpm_tv
    from .method import ddpm_sample, paper_schedule

    base = random_collinear_mixture(np.random.default_rng(0), config.K, 1, config.spread)
    n_grid = len(make_grid(base.means[:, 0], base.sigma, config.h))
    grid_steps = (
        sum(config.Ts)
        + 4 * sum(config.comparator_Ts)
        + config.K_T * len(config.Ks)
        + config.eps_T * (len(config.eps_scores) + 1)
        + config.nonunit_T * len(config.dims)
    )
    d_max = max(config.dims)
    chain_flops = 10.0 * config.K * config.mc_T  # per sample and dimension
    flops = len(config.seeds) * (
        20.0 * grid_steps * n_grid * np.log2(n_grid) + chain_flops * config.mc_samples * sum(config.dims)
    )
    batch = min(DRY_RUN_BATCH, config.mc_samples)

    def step(device: str) -> None:
        import jax

        paper_ddpm_tv(base, max(config.Ts), config.h)
        mixture = embed(base, random_direction(np.random.default_rng(1), d_max))
        ddpm_sample(jax.random.key(0), mixture, paper_schedule(config.mc_T), batch).block_until_ready()

    step_flops = 20.0 * max(config.Ts) * n_grid * np.log2(n_grid) + chain_flops * batch * d_max
    return DryRun(
        summary=f"K={config.K} collinear mixture; grid of {n_grid} points (h={config.h}); "
        f"Monte-Carlo chain of {config.mc_samples} samples up to d={d_max}, T={config.mc_T}",
        parameters=0,
        memory_bytes=4.0 * config.mc_samples * d_max * (config.K + 3),
        flops=flops,
        step=step,
        devices=("cpu",),  # JAX on its CPU backend (the lock installs no CUDA jaxlib)
        step_memory_bytes=4.0 * batch * d_max * (config.K + 3) + 8.0 * n_grid * 16,
        step_cpu_seconds=step_flops / CPU_FLOPS,
    )


EXPERIMENT = Experiment(name="ddpm-gmm", configs=CONFIGS, claims=CLAIMS, measure=measure, build=build)


def run(config: Config | str = "quick", out_dir: Path | None = None):
    """Run the reproduction under ``config`` (a name or a Config) and write results.json + figures."""
    return EXPERIMENT.run(config, out_dir)
