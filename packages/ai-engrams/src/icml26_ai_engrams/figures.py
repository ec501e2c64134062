"""The reproduction's figure: who is forgotten when one class is erased, and the off-target damage per method."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from icml26_shared import new_figure, save_figure


def plot_results(out: dict[str, list[float]], matrices: dict[str, np.ndarray], out_dir: Path) -> None:
    """Erased class x evaluated class accuracy (first seed) per dataset, and mean retain damage per method."""
    fig, axes = new_figure(ncols=len(matrices) + 1, size=(3.6, 3.2))
    axes = np.ravel(axes)
    for ax, (dataset, matrix) in zip(axes, matrices.items(), strict=False):
        image = ax.imshow(matrix, vmin=0, vmax=1, cmap="viridis")
        ax.set_xlabel("evaluated class")
        ax.set_ylabel("erased engram")
        ax.set_title(f"{dataset}: test accuracy after erasure", fontsize=8)
        fig.colorbar(image, ax=ax, shrink=0.8)
    ax = axes[-1]
    datasets = list(matrices)
    methods = (("engram", "retain_drop"), ("random", "random_retain_drop"))
    width = 0.27
    for i, (label, key) in enumerate(methods):
        values = np.array([out[f"{d}_{key}"] for d in datasets])
        ax.bar(np.arange(len(datasets)) + i * width, values.mean(1), width, yerr=values.std(1), label=label)
    ga = np.array(  # GA's drop = engram's drop + (engram's retained accuracy - GA's), at matched forgetting
        [
            np.add(out[f"{d}_retain_drop"], np.subtract(out[f"{d}_engram_retain_acc"], out[f"{d}_ga_retain_acc"]))
            for d in datasets
        ]
    )
    ax.bar(np.arange(len(datasets)) + 2 * width, ga.mean(1), width, yerr=ga.std(1), label="gradient ascent")
    ax.set_xticks(np.arange(len(datasets)) + width, datasets)
    ax.set_ylabel("accuracy drop on the other classes")
    ax.set_title("off-target damage", fontsize=8)
    ax.legend(fontsize=7)
    save_figure(fig, out_dir / "engram_erasure.png")
