"""The run's figure: success rate against mean log impedance for every method (mean over seeds)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from icml26_shared import new_figure, save_figure

from .factory import FIXED_PLANNERS

LEARNED_COLOURS = {"sft": "tab:blue", "correctness_dpo": "tab:orange", "igpo": "tab:red", "oracle": "tab:green"}


def plot_methods(metrics: dict[str, list[float]], path: Path) -> None:
    """Left: success vs log impedance per method (lower right is better). Right: success per task kind."""
    fig, axes = new_figure(ncols=2, size=(4.6, 3.4))
    ax, bx = axes[0]
    methods = [*FIXED_PLANNERS, "react", "random", "sft", "correctness_dpo", "igpo", "oracle"]
    for name in methods:
        x, y = np.mean(metrics[f"log_impedance_{name}"]), np.mean(metrics[f"success_{name}"])
        colour = LEARNED_COLOURS.get(name, "grey")
        ax.scatter([x], [y], color=colour, s=28 if name in LEARNED_COLOURS else 14)
        ax.annotate(name, (x, y), fontsize=6, xytext=(3, 2), textcoords="offset points")
    ax.set_xlabel("mean log impedance (lower is better)")
    ax.set_ylabel("success rate")
    ax.set_title("methods (oracle: subset of test tasks)", fontsize=8)
    kinds = ("chain", "fanout", "compare", "recovery")
    best = [max(FIXED_PLANNERS, key=lambda n: np.mean(metrics[f"success_{n}_{k}"])) for k in kinds]
    shown = {
        "best fixed for the kind": [np.mean(metrics[f"success_{b}_{k}"]) for b, k in zip(best, kinds, strict=True)]
    }
    shown.update({n: [np.mean(metrics[f"success_{n}_{k}"]) for k in kinds] for n in ("sft", "correctness_dpo", "igpo")})
    for j, (name, values) in enumerate(shown.items()):
        bx.bar(
            np.arange(len(kinds)) + 0.2 * j - 0.3,
            values,
            width=0.2,
            label=name,
            color=LEARNED_COLOURS.get(name, "grey"),
        )
    bx.set_xticks(range(len(kinds)), kinds, fontsize=7)
    bx.set_ylabel("success rate")
    bx.legend(fontsize=6, loc="lower left")
    save_figure(fig, path)
