"""The run's figures: TV curves (T, d, K, score error) and the Monte-Carlo projections across d."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from icml26_shared import new_figure, save_figure


def _mean_curve(ax, x, runs, label, **style):
    """Plot the mean over seeds of per-seed curves with a min-max band."""
    runs = np.asarray(runs, dtype=float)
    ax.plot(x, runs.mean(0), marker="o", label=label, **style)
    ax.fill_between(x, runs.min(0), runs.max(0), alpha=0.2, **style)


def _log_axes(ax, xs, **labels):
    """Log-log axes with the measured x values as the only tick labels."""
    from matplotlib.ticker import NullFormatter

    ax.set(xscale="log", yscale="log", **labels)
    ax.set_xticks(list(xs), [f"{x:g}" for x in xs])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.legend(fontsize=7)


def plot_curves(config, curves: dict, path: Path) -> Path:
    """Four panels: TV vs T (paper DDPM and comparators), vs d (sigma = 1 and sigma != 1), vs K, vs eps_s."""
    fig, axes = new_figure(ncols=2, nrows=2, size=(4.6, 3.6))
    ax = axes[0, 0]
    _mean_curve(ax, config.Ts, curves["T"], "DDPM, paper schedule", color="k")
    for name, color in [("linear", "C0"), ("cosine", "C1"), ("ddim", "C2"), ("pf_ode", "C3")]:
        runs = [c[name] for c in curves["comparators"]]
        _mean_curve(
            ax, config.comparator_Ts, runs, name if name in ("ddim", "pf_ode") else f"DDPM, {name}", color=color
        )
    t = np.asarray(config.Ts, dtype=float)
    ax.plot(t, np.mean(curves["T"], 0)[0] * t[0] / t, "k:", label="1/T")
    _log_axes(ax, config.Ts, xlabel="T (steps)", ylabel="TV", title="TV vs T (exact, grid)")
    ax = axes[0, 1]
    _mean_curve(ax, config.dims, curves["unit"], "sigma = 1 (paper)", color="k")
    _mean_curve(ax, config.dims, curves["nonunit"], f"sigma = {config.sigma_nonunit}", color="C3")
    _log_axes(ax, config.dims, xlabel="d", ylabel="TV", title=f"TV vs d at T={config.nonunit_T} (exact)")
    ax = axes[1, 0]
    _mean_curve(ax, config.Ks, curves["K"], f"T={config.K_T}", color="k")
    _log_axes(ax, config.Ks, xlabel="K", ylabel="TV", title="TV vs K (spaced components)")
    ax = axes[1, 1]
    _mean_curve(ax, config.eps_scores, curves["eps"], f"T={config.eps_T}", color="k")
    _log_axes(ax, config.eps_scores, xlabel="score error eps_s (RMS)", ylabel="TV", title="TV vs score error")
    return save_figure(fig, path)


def plot_projections(config, projections: dict, path: Path) -> Path:
    """Histograms of <Y_0, u> from the full d-dim chain for every d against the exact 1-D chain density."""
    fig, ax = new_figure(size=(5.0, 3.6))
    ax.plot(projections["grid"], projections["p_gen"], "k", lw=2, label="exact 1-D chain")
    for d in config.dims:
        ax.hist(projections[d], bins=60, density=True, histtype="step", label=f"d={d} (Monte Carlo)")
    ax.set(xlabel="<Y_0, u>", ylabel="density", title=f"DDPM, T={config.mc_T}, seed {config.seeds[0]}")
    ax.legend(fontsize=7)
    return save_figure(fig, path)
