"""The run's figures: example removals of every method, and AdaEraser's suppression strength over the steps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from icml26_shared import new_figure, save_figure

COLUMNS = ("source", "truth", "none", "hard", "fixed", "adaptive", "biharmonic")


def _show(ax, image: np.ndarray, title: str) -> None:
    ax.imshow(((image.transpose(1, 2, 0) + 1) / 2).clip(0, 1), interpolation="nearest")
    ax.set_title(title, fontsize=8)
    ax.set_xticks([])
    ax.set_yticks([])


def plot_examples(example: dict, path: Path, rows: int = 4) -> None:
    """The first ``rows`` scenes: source (mask outlined), true background and each method's result."""
    scenes, outputs = example["scenes"], example["outputs"]
    rows = min(rows, len(scenes))
    fig, axes = new_figure(ncols=len(COLUMNS), nrows=rows, size=(1.4, 1.5))
    axes = np.asarray(axes).reshape(rows, len(COLUMNS))
    for r in range(rows):
        images = {"source": scenes.image[r], "truth": scenes.background[r]} | {k: v[r] for k, v in outputs.items()}
        for c, name in enumerate(COLUMNS):
            _show(axes[r, c], images[name], name if r == 0 else "")
        axes[r, 0].contour(scenes.mask[r], levels=[0.5], colors="white", linewidths=0.6)
    save_figure(fig, path)


def plot_strength(strength_by_seed: list[np.ndarray], path: Path) -> None:
    """Mean adaptive strength lambda on the masked queries at each sampling step, one line per seed."""
    fig, ax = new_figure(size=(4.0, 3.0))
    for seed, strength in enumerate(strength_by_seed):
        ax.plot(np.arange(len(strength)), strength, marker="o", ms=3, label=f"seed {seed}")
    ax.axhline(1.0, color="gray", ls="--", lw=0.8, label="hard blocking")
    ax.set_xlabel("sampling step")
    ax.set_ylabel("mean lambda on masked queries")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7)
    save_figure(fig, path)
