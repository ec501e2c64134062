"""Miniature reproduction: the mean-preserving mixture design, the tests' size and power, estimator bias.

Each seed is one replication: a fresh data set of n units per theta. The per-replication rejection
indicators are the per-seed values of the test claims (their mean is the rejection rate, their sem the
binomial standard error); the signed errors of the estimators against a Monte Carlo ground truth are
those of the estimator metrics.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from icml26_shared import (
    Claim,
    Experiment,
    check_int,
    check_open_interval,
    check_positive,
    derive,
    fail,
    get_logger,
    new_figure,
    run_units,
    save_figure,
)
from icml26_shared import Config as BaseConfig
from icml26_shared.records import DryRun
from scipy.stats import norm
from threadpoolctl import threadpool_limits

from .baselines import ate_test, mmd_test
from .data import sample_counterfactuals, simulate
from .sinkhorn import sinkhorn_divergence, squared_distances
from .treatment_effect import aggregated_sinkhorn_test, one_step_ste

log = get_logger("sinkhorn-te")

CLAIM_THETAS = (0.0, 1.0)  # the claims read the null (theta = 0) and theta = 1


@dataclass(frozen=True)
class Config(BaseConfig):
    """One run: replications are the seeds; every theta gets a fresh data set per replication."""

    n: int = 400
    thetas: tuple[float, ...] = CLAIM_THETAS
    eps_factors: tuple[float, ...] = (0.1, 10**-0.5, 1.0, 10**0.5)  # [INF] eps grid / median squared distance
    eps_estimate: float = 1.0  # [INF] the fixed eps of the estimand for the estimator comparison
    alpha: float = 0.05
    n_folds: int = 2
    n_truth: int = 1500  # Monte Carlo draws per counterfactual law for the ground-truth STE
    workers: int = 1  # processes running the replications (one BLAS thread each); the numbers do not depend on it

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("n", self.n, 20)
        if not all(t in self.thetas for t in CLAIM_THETAS):
            raise fail("thetas", self.thetas, f"a tuple containing {CLAIM_THETAS}")
        for factor in self.eps_factors:
            check_positive("eps_factors", factor)
        check_positive("eps_estimate", self.eps_estimate)
        check_open_interval("alpha", self.alpha, 0.0, 1.0)
        check_int("n_folds", self.n_folds, 2)
        check_int("n_truth", self.n_truth, 20)
        check_int("workers", self.workers, 1)


CONFIGS = {
    "smoke": Config(seeds=(0, 1), n=100, n_truth=150),
    "quick": Config(seeds=tuple(range(80)), workers=2),
    # The inconclusive claim is `debiasing`: its jackknife pseudo-values have mean -0.0016 and std 0.0517 over 80
    # replications, so n = (2 x 0.0517 / 0.0016)^2 = 4177 -> 4,200 replications put the rule beyond one sem at the
    # observed effect. Everything else is quick's (the README explains the gap as ~0 by design, not a missing
    # budget). Cost: ~0.35-0.5 CPU s per replication and theta (quick: 160 in 70-85 s under load), so ~50-70 min
    # on one core: longer than the 20 min of a medium run, because the effect is 3% of its per-replication std.
    # Since 0.1.5 the replications run on 2 workers (the same numbers), ~25-35 min on 2 idle cores.
    "medium": Config(seeds=tuple(range(4200)), workers=2),
    "paper": Config(
        seeds=tuple(range(500)),
        thetas=(0.0, 0.5, 1.0, 1.5),
        eps_factors=(0.01, 0.1, 1.0, 10.0),
        n_truth=4000,
    ),
}

CLAIMS = [
    Claim(
        "size",
        "Under no effect (P_1 = P_0) the aggregated Sinkhorn test rejects at most 0.10 at alpha = 0.05.",
        "asymptotically valid level-alpha test (abstract; simulations)",
        "reject_aggregated_theta0",
        "<=",
        0.10,
    ),
    Claim(
        "power",
        "At theta = 1 in the mean-preserving mixture design the aggregated test has power at least 0.8.",
        "aggregated test detects distributional effects (abstract; simulations)",
        "reject_aggregated_theta1",
        ">=",
        0.8,
    ),
    Claim(
        "ate_blind",
        "At theta = 1 the AIPW average-treatment-effect test stays near alpha (rejects at most 0.10).",
        "ATE = 0 for all theta: the ATE test misses the effect (motivating example)",
        "reject_ate_theta1",
        "<=",
        0.10,
    ),
    Claim(
        "debiasing",
        "At theta = 1 the one-step estimator has a smaller |bias| than the IPW plug-in.",
        "debiased estimators (abstract; simulations)",
        "abs_bias_gap_theta1",
        ">",
        0.0,
    ),
]


def label(theta: float) -> str:
    """Metric suffix for a theta: 0 -> 'theta0', 0.5 -> 'theta0p5'."""
    return f"theta{theta:g}".replace(".", "p")


def ground_truth(theta: float, config: Config) -> float:
    """STE_eps(theta) = S_eps(P_1, P_0) by Monte Carlo on ``n_truth`` draws of each law (0 when theta = 0)."""
    if theta == 0.0:
        return 0.0  # P_1 = P_0 exactly, and S_eps(P, P) = 0
    rng = np.random.default_rng(derive(0, "truth", str(theta)))
    y1, y0 = sample_counterfactuals(config.n_truth, theta, rng)
    return sinkhorn_divergence(y1, y0, config.eps_estimate).value


def replicate(config: Config, theta: float, seed: int) -> dict[str, float]:
    """One data set: every test's decision and both estimators at eps_estimate."""
    Y, A, X = simulate(config.n, theta, np.random.default_rng(derive(seed, "data", str(theta))))
    distances = squared_distances(Y, Y)
    eps_grid = np.median(distances[distances > 0]) * np.asarray(config.eps_factors)
    aggregated = aggregated_sinkhorn_test(Y, A, X, eps_grid, config.alpha, seed)
    one_step = one_step_ste(Y, A, X, config.eps_estimate, config.n_folds, config.alpha, seed)
    out = {
        "reject_aggregated": float(aggregated.reject),
        "reject_mmd": float(mmd_test(Y, A, X, config.alpha, seed).reject),
        "reject_ate": float(ate_test(Y, A, X, config.alpha, config.n_folds, seed).reject),
        "onestep": one_step.estimate,
        "plugin": one_step.plugin,
        "ci_low": one_step.ci[0],
        "ci_high": one_step.ci[1],
    }
    z_crit = norm.ppf(1.0 - config.alpha)
    for j, z in enumerate(aggregated.z):  # the fixed-eps tests share the split, nuisances and kernels
        out[f"reject_eps{j}"] = float(z > z_crit)
    return out


def jackknife_abs_bias_gap(err_plugin: np.ndarray, err_onestep: np.ndarray) -> np.ndarray:
    """Jackknife pseudo-values of |mean err_plugin| - |mean err_onestep| (one per replication).

    Their mean is the jackknife estimate of the gap in |bias| and their sem its jackknife standard error,
    which is what the repo's claim rule needs from a statistic that is not a per-replication average.
    """
    R = len(err_plugin)
    full = abs(err_plugin.mean()) - abs(err_onestep.mean())
    loo_plugin = (err_plugin.sum() - err_plugin) / (R - 1)
    loo_onestep = (err_onestep.sum() - err_onestep) / (R - 1)
    return R * full - (R - 1) * (np.abs(loo_plugin) - np.abs(loo_onestep))


def measure(config: Config, out_dir: Path) -> dict[str, list[float]]:
    """Run every replication at every theta; return per-replication metrics and save two figures."""
    metrics: dict[str, list[float]] = {}
    with threadpool_limits(limits=1):  # small dense algebra: one BLAS thread is far faster on a shared CPU
        for theta in config.thetas:
            truth = ground_truth(theta, config)
            units = [(theta, seed) for seed in config.seeds]
            rows = run_units(replicate, config, units, config.workers, desc=f"theta={theta:g}")
            values = {k: np.array([r[k] for r in rows]) for k in rows[0]}
            suffix = label(theta)
            for key in [k for k in values if k.startswith("reject")]:
                metrics[f"{key}_{suffix}"] = values[key].tolist()
            err_plugin, err_onestep = values["plugin"] - truth, values["onestep"] - truth
            covered = (values["ci_low"] <= truth) & (truth <= values["ci_high"])
            metrics[f"error_plugin_{suffix}"] = err_plugin.tolist()
            metrics[f"error_onestep_{suffix}"] = err_onestep.tolist()
            metrics[f"coverage_onestep_{suffix}"] = covered.astype(float).tolist()
            metrics[f"abs_bias_gap_{suffix}"] = jackknife_abs_bias_gap(err_plugin, err_onestep).tolist()
            log.info(
                "theta=%g: truth %.4f, aggregated test rejects %.3f", theta, truth, values["reject_aggregated"].mean()
            )
    plot_rejections(config, metrics, out_dir / "rejection_rates.png")
    plot_errors(config, metrics, out_dir / "estimator_errors.png")
    return metrics


def build(config: Config) -> DryRun:
    """The dry run: no model is trained; the step is one replication (every test and both estimators) at
    the largest theta with the config's eps grid. Estimates: dense n x n Sinkhorn kernels, ~100 iterations
    per solve, one solve per eps, fold and bootstrap draw [INF]; the ground truth's n_truth x n_truth solve."""
    solves = len(config.eps_factors) * (config.n_folds + 1) + 2 * config.n_folds + 4
    per_replication = 100.0 * 4 * config.n**2 * solves  # 100 iterations of ~4 flops per kernel entry
    truth = 100.0 * 4 * config.n_truth**2 * 3 * len(config.thetas)

    def step(device: str) -> None:
        with threadpool_limits(limits=1):
            replicate(config, max(config.thetas), config.seeds[0])

    return DryRun(
        summary=f"{len(config.seeds)} replications of n={config.n} units at thetas {config.thetas}, "
        f"{len(config.eps_factors)} eps factors; ground truth on {config.n_truth} draws per law",
        parameters=0,
        memory_bytes=8.0 * 4 * max(config.n, config.n_truth) ** 2,
        flops=per_replication * len(config.seeds) * len(config.thetas) + truth,
        step=step,
        devices=("cpu",),  # numpy on the CPU
        step_memory_bytes=8.0 * 4 * config.n**2 * len(config.eps_factors),
        step_cpu_seconds=per_replication / 1e9,
    )


def plot_rejections(config: Config, metrics: dict[str, list[float]], path: Path) -> None:
    """Rejection rate (+- binomial standard error) of every test, grouped by theta."""
    fig, ax = new_figure(size=(5.6, 3.4))
    names = ["aggregated", *(f"eps{j}" for j in range(len(config.eps_factors))), "mmd", "ate"]
    legends = ["aggregated Sinkhorn", *(f"Sinkhorn, eps = {f:.2g} med" for f in config.eps_factors), "MMD", "ATE"]
    width = 0.8 / len(names)
    positions = np.arange(len(config.thetas))
    for k, (name, legend) in enumerate(zip(names, legends, strict=True)):
        rates = np.array([np.mean(metrics[f"reject_{name}_{label(t)}"]) for t in config.thetas])
        se = np.sqrt(rates * (1 - rates) / len(config.seeds))
        ax.bar(positions + (k - len(names) / 2 + 0.5) * width, rates, width, yerr=se, capsize=2, label=legend)
    ax.axhline(config.alpha, color="grey", lw=0.8, ls="--")
    ax.set_xticks(positions, [f"theta = {t:g}" for t in config.thetas])
    ax.set(ylabel="rejection rate", ylim=(0, 1.05), title=f"n = {config.n}, {len(config.seeds)} replications")
    ax.legend(fontsize=6, loc="upper left")
    save_figure(fig, path)


def plot_errors(config: Config, metrics: dict[str, list[float]], path: Path) -> None:
    """Errors of the IPW plug-in and the one-step estimator against the ground truth, per theta."""
    fig, ax = new_figure(size=(5.0, 3.4))
    data, names = [], []
    for t in config.thetas:
        data += [metrics[f"error_plugin_{label(t)}"], metrics[f"error_onestep_{label(t)}"]]
        names += [f"plug-in\ntheta={t:g}", f"one-step\ntheta={t:g}"]
    ax.boxplot(data, tick_labels=names)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set(ylabel=f"estimate - STE (eps = {config.eps_estimate:g})")
    ax.tick_params(axis="x", labelsize=7)
    save_figure(fig, path)


EXPERIMENT = Experiment(name="sinkhorn-te", configs=CONFIGS, claims=CLAIMS, measure=measure, build=build)


def run(config: Config | str = "quick", out_dir: Path | None = None):
    """Run the reproduction under ``config`` (a name or a Config); writes results.json and the figures."""
    return EXPERIMENT.run(config, out_dir)
