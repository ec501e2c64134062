"""Miniature reproduction of SAQNN's numerical claims (Sec. 4) plus the basis and classical comparisons.

Per seed: fresh 100/100 splits of the paper's targets; SAQNN trained by ``training.fit`` (closed form (A.1),
checked gate by gate against PennyLane and Qiskit in the tests); baselines on the same splits.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from icml26_shared import Claim, Experiment, derive, get_logger, new_figure, save_figure
from icml26_shared import Config as BaseConfig
from icml26_shared.records import DryRun

F2_FREQUENCIES = ((0, 0), (1, 1), (-1, -1))  # f2 = 0.4 + 0.2 e^{i(x0+x1+pi/6)} + c.c.: n = 3 ([INF])
LR = {"f1": 0.01, "f2": 0.05, "f3": 0.05}  # Sec. 4: Adam lr 0.01 for f1, 0.05 for f2 and f3

log = get_logger("qnn-uap")


@dataclass(frozen=True)
class Config(BaseConfig):
    """Everything a run depends on; the data sizes, lr and targets are the paper's (Sec. 4)."""

    steps: int = 400  # Adam iterations (the paper: 80; see README, deviations)
    restarts: int = 16  # random initialisations per fit, best training MSE kept ([INF])
    max_doublings: int = 3  # App. B: a' = 1, 2, 4, 8 at most
    f1_orders: tuple[int, ...] = (1, 2, 3)  # k of the k-truncated Fourier sets on f1: n = 9, 25, 49
    mlp_long_factor: int = 1  # > 1: a second ReLU baseline trained this many times longer (supporting metric)
    n_train: int = 100
    n_test: int = 100


CONFIGS = {
    "smoke": Config(seeds=(0, 1), steps=40, restarts=2, max_doublings=1, f1_orders=(1, 2)),
    "quick": Config(seeds=(0, 1, 2)),
    # The budget the README names as missing: the failing more_terms_lower_error is limited by optimisation
    # (from k = 2 on, least squares on the same basis reaches 7e-6, 400 Adam steps from a random start 6e-4), so
    # 10x the Adam steps and 4x the restarts; the ReLU baseline gets the same budget (it shares steps and
    # restarts). The same 3 seeds: the claim fails decisively (-0.064 +- 0.011 sem). Cost: a 16-restart fit of
    # f1 at n = 49 with every rescaling takes 0.8 CPU s at 400 steps after a 4 s compilation (measured under
    # load), so ~40x quick's training time: ~3-4 min per seed, ~10 min for 3 seeds on one core.
    "medium": Config(seeds=(0, 1, 2), steps=4000, restarts=64),
    "paper": Config(seeds=tuple(range(10)), steps=80, restarts=256, max_doublings=4, mlp_long_factor=50),
}

CLAIMS = [
    Claim(
        "accuracy_f1", "SAQNN (Fourier, n=49) fits f1 to test MSE about 1e-3.", "7.20e-4, Sec. 4", "mse_f1", "<=", 3e-3
    ),
    Claim(
        "accuracy_f2", "SAQNN (Fourier, n=3) fits f2 to test MSE about 1e-3.", "2.62e-4, Sec. 4", "mse_f2", "<=", 1e-3
    ),
    Claim(
        "accuracy_f3", "SAQNN (Chebyshev, n=6) fits f3 to test MSE about 1e-3.", "4.51e-4, Sec. 4", "mse_f3", "<=", 2e-3
    ),
    Claim(
        "more_terms_lower_error",
        "Test MSE on f1 falls at every step k -> k+1 of the Fourier truncation (min log10 drop > 0).",
        "UAP: expressivity grows with the layers, Thm 1 / Sec. 3.2",
        "uap_min_log10_drop",
        ">",
        0.0,
    ),
    Claim(
        "chebyshev_beats_fourier",
        "On the aperiodic f3, Chebyshev (n=9) beats Fourier (n=9): log10(MSE_Fourier / MSE_Chebyshev) > 0.",
        "basis switching against the Gibbs phenomenon, Sec. 3.2 / App. C",
        "log10_fourier_over_chebyshev",
        ">",
        0.0,
    ),
    Claim(
        "params_vs_classical",
        "At equal parameter count, SAQNN beats a ReLU network on f1 (mean over sizes of log10 MSE ratio > 0).",
        "optimal parameter complexity vs FNNs, Thm 2 / App. E (asymptotic)",
        "log10_mlp_over_saqnn",
        ">",
        0.0,
    ),
]


def _mse(prediction, y) -> float:
    return float(np.mean((np.asarray(prediction) - y) ** 2))


def _fit_saqnn(freqs, basis: str, data, x_scale: float, config: Config, seed: int):
    """Fit SAQNN on ``data`` (inputs multiplied by ``x_scale``) and return (FitResult, test MSE)."""
    from .method import SAQNN
    from .training import fit

    result = fit(
        SAQNN(np.asarray(freqs), basis),
        data.x_train * x_scale,
        data.y_train,
        steps=config.steps,
        lr=LR[data.name],
        restarts=config.restarts,
        max_doublings=config.max_doublings,
        seed=seed,
    )
    return result, _mse(result.predict(data.x_test * x_scale), data.y_test)


def measure(config: Config, out_dir: Path) -> dict[str, list[float]]:
    """Train and evaluate everything per seed; return per-seed metrics (the claims' and the supporting ones)."""
    from .baselines import fit_mlp, lstsq_expansion, mlp_width
    from .bases import chebyshev_degrees, fourier_frequencies
    from .data import make_dataset
    from .method import num_parameters

    metrics: dict[str, list[float]] = {}

    def put(name: str, value: float) -> None:
        metrics.setdefault(name, []).append(float(value))

    examples = {}
    for seed in config.seeds:
        data = {t: make_dataset(t, derive(seed, "data", t), config.n_train, config.n_test) for t in ("f1", "f2", "f3")}
        fit_f2, mse_f2 = _fit_saqnn(F2_FREQUENCIES, "fourier", data["f2"], 1.0, config, derive(seed, "f2"))
        fit_f3, mse_f3 = _fit_saqnn(chebyshev_degrees(2, 2, "total"), "chebyshev", data["f3"], 1.0, config, seed)
        put("mse_f2", mse_f2)
        put("mse_f3", mse_f3)
        qnn, mlp = [], []
        for k in config.f1_orders:
            freqs = fourier_frequencies(k, 2)
            fit_f1, mse = _fit_saqnn(freqs, "fourier", data["f1"], 1.0, config, derive(seed, "f1", k))
            d1 = data["f1"]
            width = mlp_width(num_parameters(len(freqs)), 2)
            net = fit_mlp(
                d1.x_train,
                d1.y_train,
                width,
                steps=config.steps,
                lr=LR["f1"],
                restarts=config.restarts,
                seed=derive(seed, "mlp", k),
            )
            if config.mlp_long_factor > 1:  # the same network trained longer: is the baseline just undertrained?
                long = fit_mlp(
                    d1.x_train,
                    d1.y_train,
                    width,
                    steps=config.steps * config.mlp_long_factor,
                    lr=LR["f1"],
                    restarts=config.restarts,
                    seed=derive(seed, "mlp-long", k),
                )
                put(f"mse_mlp_long_k{k}", _mse(long.predict(d1.x_test), d1.y_test))
            lsq = lstsq_expansion(freqs, "fourier", d1.x_train, d1.y_train, d1.x_test)
            qnn.append(mse)
            mlp.append(_mse(net.predict(d1.x_test), d1.y_test))
            put(f"mse_f1_k{k}", mse)
            put(f"params_saqnn_k{k}", num_parameters(len(freqs)))
            put(f"mse_mlp_k{k}", mlp[-1])
            put(f"params_mlp_k{k}", net.num_parameters)
            put(f"mse_lstsq_k{k}", _mse(lsq, d1.y_test))
        put("mse_f1", qnn[-1])
        put("uap_min_log10_drop", min(np.log10(a / b) for a, b in itertools.pairwise(qnn)))
        put("log10_mlp_over_saqnn", float(np.mean(np.log10(np.array(mlp) / np.array(qnn)))))
        if config.mlp_long_factor > 1:
            mlp_long = [metrics[f"mse_mlp_long_k{k}"][-1] for k in config.f1_orders]
            put("log10_mlp_long_over_saqnn", float(np.mean(np.log10(np.array(mlp_long) / np.array(qnn)))))
        # basis switching on the aperiodic f3 at equal n = 9: Chebyshev ||j||_inf <= 2 vs Fourier ||j||_inf <= 1
        # on [-pi, pi]^2 (inputs x -> pi x, [INF])
        _, cheb = _fit_saqnn(chebyshev_degrees(2, 2), "chebyshev", data["f3"], 1.0, config, derive(seed, "cheb9"))
        _, four = _fit_saqnn(fourier_frequencies(1, 2), "fourier", data["f3"], np.pi, config, derive(seed, "four9"))
        put("mse_f3_chebyshev_n9", cheb)
        put("mse_f3_fourier_n9", four)
        put("log10_fourier_over_chebyshev", np.log10(four / cheb))
        if seed == config.seeds[0]:
            examples = {"f1": fit_f1, "f2": fit_f2, "f3": fit_f3}
        log.info("seed %d: f1 %.2e f2 %.2e f3 %.2e", seed, qnn[-1], mse_f2, mse_f3)
    _plot_error_vs_parameters(metrics, config, out_dir)
    _plot_approximations(examples, out_dir)
    return metrics


def _plot_error_vs_parameters(metrics: dict, config: Config, out_dir: Path) -> None:
    """Test MSE on f1 against parameter count: SAQNN, the equal-size ReLU network, least squares (same n)."""
    fig, ax = new_figure(size=(4.6, 3.4))
    curves = [
        ("SAQNN", "mse_f1_k", "params_saqnn_k"),
        ("ReLU MLP", "mse_mlp_k", "params_mlp_k"),
        ("least squares (same basis)", "mse_lstsq_k", "params_saqnn_k"),
    ]
    if config.mlp_long_factor > 1:
        curves.append((f"ReLU MLP, {config.mlp_long_factor}x steps", "mse_mlp_long_k", "params_mlp_k"))
    for label, prefix, params in curves:
        xs = [np.mean(metrics[f"{params}{k}"]) for k in config.f1_orders]
        ys = np.array([metrics[f"{prefix}{k}"] for k in config.f1_orders])
        ax.errorbar(xs, ys.mean(1), yerr=ys.std(1), marker="o", capsize=3, label=label)
    ax.set(xscale="log", yscale="log", xlabel="parameters", ylabel="test MSE on f1")
    ax.legend(fontsize=7)
    save_figure(fig, out_dir / "error_vs_parameters.png")


def _plot_approximations(examples: dict, out_dir: Path) -> None:
    """Target (top) and SAQNN output (bottom) on a 50 x 50 grid, as in the paper's Fig. 2 (first seed)."""
    from .data import DOMAINS, target

    fig, axes = new_figure(ncols=3, nrows=2, size=(2.6, 2.4))
    for col, (name, result) in enumerate(examples.items()):
        h = DOMAINS[name]
        g = np.linspace(-h, h, 50)
        grid = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
        for row, values in enumerate((target(name, grid), result.predict(grid))):
            axes[row, col].imshow(values.reshape(50, 50), origin="lower", extent=(-h, h, -h, h), vmin=0, vmax=1)
            axes[row, col].set_title(f"{name} {'target' if row == 0 else 'SAQNN'}", fontsize=8)
    save_figure(fig, out_dir / "approximations.png")


def build(config: Config) -> DryRun:
    """The dry run: the step fits SAQNN with the largest Fourier set on f1 (the costliest fit: all restarts,
    every doubling). Estimates: each Adam step evaluates the closed form on n_train points for every restart
    and rescaling a', ~20 n flops per point for n terms (from the step: ~9 CPU s on a loaded 2-core machine);
    fits per seed: f2, f3, one per order, and the MLPs."""
    from .bases import fourier_frequencies
    from .data import make_dataset
    from .method import num_parameters

    n = len(fourier_frequencies(max(config.f1_orders), 2))
    per_fit = 20.0 * n * config.n_train * config.steps * config.restarts * (config.max_doublings + 1)
    fits = 2 + len(config.f1_orders) * (2 + config.mlp_long_factor)

    def step(device: str) -> None:
        data = make_dataset("f1", derive(config.seeds[0], "data", "f1"), config.n_train, config.n_test)
        _fit_saqnn(fourier_frequencies(max(config.f1_orders), 2), "fourier", data, 1.0, config, 0)

    return DryRun(
        summary=f"SAQNN with up to n={n} Fourier terms on f1, f2, f3 ({config.n_train}/{config.n_test} points), "
        f"{config.steps} Adam steps x {config.restarts} restarts, up to {config.max_doublings} doublings",
        parameters=int(num_parameters(n)),
        memory_bytes=8.0 * config.restarts * config.n_train * n * 4,
        flops=per_fit * fits * len(config.seeds),
        step=step,
        devices=("cpu",),  # JAX on its CPU backend (the lock installs no CUDA jaxlib)
        step_memory_bytes=8.0 * config.restarts * config.n_train * n * 4,
        step_cpu_seconds=per_fit / 1e9,
    )


EXPERIMENT = Experiment(name="qnn-uap", configs=CONFIGS, claims=CLAIMS, measure=measure, build=build)


def run(config: Config | str = "quick", out_dir: Path | None = None):
    """Run the reproduction under ``config`` and write results.json and figures into ``out_dir``."""
    return EXPERIMENT.run(config, out_dir)
