"""Miniature reproduction: configs, claims and the measurement.

Per seed, the exact grid simulator runs ``replications`` independent sequences of score errors through
every fresh-data fraction in ``alphas`` (common random numbers across alphas) at amplitude ``eps``, plus a
sweep over ``eps_sweep`` for the intra-generation sandwich. The trained 2-D version runs one flax score
network per (seed, alpha in ``trained_alphas``). Every claim is decided on per-seed values.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from icml26_shared import Claim, Experiment, derive, get_logger, new_figure, save_figure
from icml26_shared import Config as BaseConfig
from icml26_shared.records import DryRun

log = get_logger("retrain-drift")


@dataclass(frozen=True)
class Config(BaseConfig):
    """Everything a run depends on. Grid simulator first, trained version (``trained_*``) second."""

    grid_n: int = 256
    half_width: float = 9.0
    T: float = 8.0
    time_steps: int = 80
    t_min: float = 1e-3
    generations: int = 16
    alphas: tuple[float, ...] = (0.0, 0.1, 0.25, 0.5)
    eps: float = 0.05
    replications: int = 16
    eps_sweep: tuple[float, ...] = (0.01, 0.03, 0.1)
    sweep_replications: int = 4
    bumps: int = 24
    bump_width: float = 0.4
    trained_generations: int = 6
    trained_alphas: tuple[float, ...] = (0.0, 0.5)
    trained_n: int = 1000
    trained_steps: int = 300
    trained_first_rounds: int = 4
    trained_width: int = 64
    trained_batch: int = 128
    trained_sample_steps: int = 60


CONFIGS = {
    "smoke": Config(
        seeds=(0, 1),
        grid_n=96,
        time_steps=30,
        generations=6,
        replications=2,
        eps_sweep=(0.02, 0.1),
        sweep_replications=1,
        trained_generations=2,
        trained_n=128,
        trained_steps=20,
        trained_first_rounds=1,
        trained_width=16,
        trained_batch=32,
        trained_sample_steps=10,
    ),
    "quick": Config(),
    "paper": Config(
        seeds=tuple(range(10)),
        grid_n=1024,
        time_steps=320,
        generations=30,
        replications=64,
        sweep_replications=16,
        eps_sweep=(0.003, 0.01, 0.03, 0.1),
        trained_generations=10,
        trained_n=10000,
        trained_steps=2000,
        trained_first_rounds=5,
        trained_width=128,
        trained_batch=512,
        trained_sample_steps=200,
    ),
}

CLAIMS = [
    Claim(
        "intra_upper",
        "Intra-generation divergence is at most the Girsanov constant times the ideal-path score-error energy: "
        "max I_i / eps2_i <= 2 (leading order, small-error regime).",
        "I_i <~ eps2_star,i, upper half of the two-sided bound",
        "intra_ratio_max",
        "<=",
        2.0,
    ),
    Claim(
        "intra_two_sided",
        "I_i stays within a constant factor of eps2_i: over a 100x sweep of the energy, min/max of I_i/eps2_i "
        "for the same error shape is >= 0.5 (a lower constant exists, I_i is not o(eps2)).",
        "I_i asymp eps2_star,i, first lower bound",
        "intra_ratio_spread",
        ">=",
        0.5,
    ),
    Claim(
        "accumulated_tracks_discounted_sum",
        "D_n tracks the discounted sum sum_m (1-alpha)^{2m} I_{n-1-m}: mean |D_n / S_n - 1| over alphas and "
        "generations (averaged over error sequences) <= 0.2.",
        "D_N ~ discounted sum of past errors + bias terms",
        "tracking_error",
        "<=",
        0.2,
    ),
    Claim(
        "alpha0_linear_growth",
        "Without fresh data D_n grows about linearly in n: |log-log slope of D_n vs n - 1| <= 0.2.",
        "alpha = 0: errors add up, D_N grows ~ linearly (regimes)",
        "alpha0_slope_error",
        "<=",
        0.2,
    ),
    Claim(
        "alpha_positive_plateau",
        "With fresh data D_n levels off at its predicted plateau mean(I) / (1 - (1-alpha)^2): "
        "mean |late D_n / plateau - 1| <= 0.25 over alphas whose memory has decayed by mid-run.",
        "alpha > 0: finite memory, D_N bounded by ~ eps2 / (1 - (1-alpha)^2)",
        "plateau_error",
        "<=",
        0.25,
    ),
    Claim(
        "trained_fresh_data_limits_drift",
        "Trained score networks: after the last generation the MMD^2 to the target is larger with alpha=0 "
        "than with alpha=0.5 (paired per seed, difference > 0).",
        "Gaussian-mixture experiments: fresh data stops the drift",
        "trained_mmd2_gap",
        ">",
        0.0,
    ),
]


def _loglog_slope(values: np.ndarray) -> float:
    """Least-squares slope of log(values[n-1]) against log(n), n = 1..len(values)."""
    n = np.arange(1, len(values) + 1)
    return float(np.polyfit(np.log(n), np.log(values), 1)[0])


def measure_grid(config: Config, seed: int) -> dict[str, object]:
    """The grid simulator for one seed: returns scalar metrics and the curves for the figures."""
    from .data import grid_density, make_grid
    from .grid import time_grid
    from .method import Retraining, discounted_sum, plateau, retrain, score_perturbation

    x = make_grid(config.half_width, config.grid_n)
    t = time_grid(config.T, config.time_steps, config.t_min)
    p_data = grid_density(x)
    rng = np.random.default_rng(derive(seed, "score-error"))
    R, N, A = config.replications, config.generations, len(config.alphas)
    shapes = np.stack(
        [[score_perturbation(x, rng, config.bumps, config.bump_width) for _ in range(N)] for _ in range(R)]
    )
    alphas = np.asarray(config.alphas)
    sweep_eps = np.asarray(config.eps_sweep)
    R2, E = config.sweep_replications, len(sweep_eps)
    # one batched run: the main pipelines (A, R) at eps, then the sweep (E, A, R2) on the first R2 sequences
    phis = np.concatenate(
        [
            np.broadcast_to(config.eps * shapes, (A, R, N, len(x))).reshape(-1, N, len(x)),
            (sweep_eps[:, None, None, None, None] * shapes[None, None, :R2]).repeat(A, axis=1).reshape(-1, N, len(x)),
        ]
    )
    batch_alpha = np.concatenate([np.repeat(alphas, R), np.tile(np.repeat(alphas, R2), E)])
    out = retrain(p_data, phis, batch_alpha, x, t)
    main = Retraining(*(a[: A * R].reshape(A, R, *a.shape[1:]) for a in out))
    sweep = Retraining(*(a[A * R :].reshape(E, A, R2, *a.shape[1:]) for a in out))
    ratio = sweep.I / sweep.eps2
    D = main.D.mean(axis=1)[:, 1:]  # (A, N), expectation over error sequences
    S = np.stack([[discounted_sum(main.I[a, r], alphas[a]) for r in range(R)] for a in range(A)])  # (A, R, N)
    S_eps = np.stack([[discounted_sum(main.eps2[a, r], alphas[a]) for r in range(R)] for a in range(A)])
    I_mean = main.I.mean(axis=(1, 2))
    late = slice(N // 2, N)
    settled = [a for a in range(A) if alphas[a] > 0 and (1 - alphas[a]) ** (2 * (N // 2)) <= 0.05]
    plateaus = np.array([D[a, late].mean() / plateau(I_mean[a], alphas[a]) for a in settled])
    zero = int(np.argmin(alphas))
    return {
        "intra_ratio_max": float(max(ratio.max(), (main.I / main.eps2).max())),
        "intra_ratio_min": float(min(ratio.min(), (main.I / main.eps2).min())),
        "intra_ratio_spread": float((ratio.min(axis=0) / ratio.max(axis=0)).min()),
        "learned_to_ideal_energy": float((main.eps2_hat / main.eps2).mean()),
        "tracking_error": float(np.abs(D / S.mean(axis=1) - 1).mean()),
        "tracking_error_single_run": float(np.abs(main.D[..., 1:] / S - 1).mean()),
        "D_over_discounted_eps2": float((main.D[..., -1] / S_eps[..., -1]).mean()),
        "alpha0_slope_error": abs(_loglog_slope(D[zero]) - 1.0) if alphas[zero] == 0 else float("nan"),
        "plateau_error": float(np.abs(plateaus - 1).mean()) if len(plateaus) else float("nan"),
        "alpha0_growth_last_over_mid": float(D[zero, -1] / D[zero, N // 2 - 1]),
        "curves": {"D": D, "S": S.mean(axis=1), "I_mean": I_mean, "sweep_I": sweep.I, "sweep_eps2": sweep.eps2},
    }


def measure_trained(config: Config) -> dict[str, np.ndarray]:
    """The trained 2-D version for all seeds at once: MMD^2 curves (seed, alpha, generation)."""
    from .networks import TrainConfig, retrain_trained

    cfg = TrainConfig(width=config.trained_width, batch=config.trained_batch, sample_steps=config.trained_sample_steps)
    pairs = [(s, a) for s in config.seeds for a in config.trained_alphas]
    run = retrain_trained(
        [derive(s, "trained") for s, _ in pairs],
        [a for _, a in pairs],
        config.trained_generations,
        n=config.trained_n,
        steps=config.trained_steps,
        first_rounds=config.trained_first_rounds,
        cfg=cfg,
    )
    shape = (len(config.seeds), len(config.trained_alphas))
    return {"mmd2": run.mmd2.reshape(*shape, -1), "samples": run.samples.reshape(*shape, -1, 2)}


def measure(config: Config, out_dir: Path) -> dict[str, list[float]]:
    """Run both simulators and return per-seed metrics; save the figures into ``out_dir``."""
    grid = []
    for seed in config.seeds:
        log.info("grid simulator, seed %d", seed)
        grid.append(measure_grid(config, seed))
    log.info("trained simulator, %d pipelines", len(config.seeds) * len(config.trained_alphas))
    trained = measure_trained(config)
    alphas = list(config.trained_alphas)
    low, high = alphas.index(min(alphas)), alphas.index(max(alphas))
    values = {k: [g[k] for g in grid] for k in grid[0] if k != "curves"}
    values["trained_mmd2_gap"] = list(trained["mmd2"][:, low, -1] - trained["mmd2"][:, high, -1])
    values["trained_mmd2_final_alpha_min"] = list(trained["mmd2"][:, low, -1])
    values["trained_mmd2_final_alpha_max"] = list(trained["mmd2"][:, high, -1])
    values["trained_mmd2_first_generation"] = list(trained["mmd2"][:, :, 1].mean(axis=1))
    _figures(config, grid[0]["curves"], trained, out_dir)
    return {k: [float(v) for v in vals] for k, vals in values.items()}


def _figures(config: Config, curves: dict, trained: dict, out_dir: Path) -> None:
    """drift.png (D_n, discounted sums, plateaus), intra.png (I vs eps2), trained.png (MMD^2 per generation)."""
    from .method import plateau

    n = np.arange(1, config.generations + 1)
    fig, ax = new_figure()
    for a, alpha in enumerate(config.alphas):
        (line,) = ax.plot(n, curves["D"][a], "o-", ms=3, label=f"alpha={alpha:g}")
        ax.plot(n, curves["S"][a], "--", color=line.get_color(), lw=1)
        if alpha > 0:
            ax.axhline(plateau(curves["I_mean"][a], alpha), color=line.get_color(), ls=":", lw=1)
    ax.set(xlabel="generation n", ylabel="D_n = chi2(p_hat_n || p_data)", title="seed 0 (dashed: discounted sum)")
    ax.legend(fontsize=7)
    save_figure(fig, out_dir / "drift.png")

    fig, ax = new_figure()
    e2, I = curves["sweep_eps2"].ravel(), curves["sweep_I"].ravel()
    ax.loglog(e2, I, ".", ms=3, label="generations (seed 0)")
    grid = np.geomspace(e2.min(), e2.max())
    ax.loglog(grid, 2 * grid, "k-", lw=1, label="2 eps2 (Girsanov)")
    ax.loglog(grid, (I / e2).min() * grid, "k--", lw=1, label="min ratio x eps2")
    ax.set(xlabel="ideal-path energy eps2", ylabel="I = chi2(p_hat_{i+1} || q_i)")
    ax.legend(fontsize=7)
    save_figure(fig, out_dir / "intra.png")

    fig, axes = new_figure(ncols=2)
    gens = np.arange(trained["mmd2"].shape[-1])
    for a, alpha in enumerate(config.trained_alphas):
        mean = trained["mmd2"][:, a].mean(axis=0)
        axes[0, 0].plot(gens, mean, "o-", label=f"alpha={alpha:g}")
        pts = trained["samples"][0, a]
        axes[0, 1].scatter(pts[:, 0], pts[:, 1], s=1, alpha=0.5, label=f"alpha={alpha:g}")
    axes[0, 0].set(xlabel="generation", ylabel="MMD^2 to target", title="trained score nets (mean over seeds)")
    axes[0, 0].legend(fontsize=7)
    axes[0, 1].set(title="last generation, seed 0", aspect="equal")
    axes[0, 1].legend(fontsize=7, markerscale=8)
    save_figure(fig, out_dir / "trained.png")


def build(config: Config) -> DryRun:
    """The dry run: the trained simulator's score network at full width; the step (on JAX's default device)
    initialises it, takes one Adam step of DSM on a batch, samples ``trained_n`` points of the reverse SDE and
    takes their MMD^2 against stand-in data (the (n, n) kernel is the largest array). The grid simulator is
    small. Estimates: 6 flops per weight and example for training, 2 per weight and sample step for sampling;
    dense float32 work at ~5 GFLOP/s (from the step: ~13 CPU s on a loaded 2-core machine)."""
    import jax
    import jax.numpy as jnp

    from .networks import ScoreNet, TrainConfig, mmd2, sample, train

    cfg = TrainConfig(width=config.trained_width, batch=config.trained_batch, sample_steps=config.trained_sample_steps)
    params = ScoreNet(width=cfg.width).init(jax.random.key(0), jnp.zeros((1, 2)), jnp.ones((1,)))
    parameters = sum(int(np.prod(leaf.shape)) for leaf in jax.tree_util.tree_leaves(params))
    pipelines = len(config.seeds) * len(config.trained_alphas) * config.trained_generations
    per_generation = 6.0 * parameters * cfg.batch * config.trained_steps + 2.0 * parameters * config.trained_n * (
        cfg.sample_steps
    )
    kernel = 4.0 * 3 * config.trained_n**2  # float32: k(a, a), k(b, b), k(a, b)

    def step(device: str) -> None:
        data = jax.random.normal(jax.random.key(1), (config.trained_n, 2))
        trained, _ = train(params, data, jax.random.key(2), 1, cfg)
        mmd2(sample(trained, jax.random.key(3), config.trained_n, cfg), data).block_until_ready()

    return DryRun(
        summary=f"grid simulator ({config.grid_n} points, {config.time_steps} steps, {config.generations} gens); "
        f"ScoreNet width {cfg.width}, {config.trained_generations} generations of {config.trained_steps} steps on "
        f"{config.trained_n} points, for {len(config.seeds)} seeds x alphas {config.trained_alphas}",
        parameters=parameters,
        memory_bytes=kernel * len(config.seeds) * len(config.trained_alphas),  # the pipelines run vmapped
        flops=per_generation * pipelines,
        step=step,
        devices=("cpu",),  # JAX on its CPU backend (the lock installs no CUDA jaxlib)
        step_memory_bytes=kernel,
        step_cpu_seconds=(2.0 * parameters * config.trained_n * cfg.sample_steps + 10.0 * config.trained_n**2) / 5e9,
    )


EXPERIMENT = Experiment(name="retrain-drift", configs=CONFIGS, claims=CLAIMS, measure=measure, build=build)


def run(config: Config | str = "quick", out_dir: Path | None = None):
    """Run the reproduction under ``config`` and write ``results.json`` and the figures into ``out_dir``."""
    return EXPERIMENT.run(config, out_dir)
