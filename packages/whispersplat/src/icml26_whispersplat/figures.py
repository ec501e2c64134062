"""The run's figure: the hidden image, what the key reveals, the views around it, and the PSNR curves."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from icml26_shared import new_figure, save_figure

PANELS = (
    ("hidden", "hidden image"),
    ("cover", "cover, secret view"),
    ("revealed", "cover + key, secret view"),
    ("keyed_ring", "cover + key, ring view"),
    ("keyed_ring_without_term", "same, no other-view term"),
    ("baseline_secret", "baseline's released model"),
)


def plot_example(example: dict, early_budget: int, path: Path) -> Path:
    """Six images of the first seed and the hidden-image PSNR per step with and without GPP."""
    fig, axes = new_figure(ncols=len(PANELS) + 1, size=(2.4, 2.6))
    for ax, (key, title) in zip(axes[0], PANELS, strict=False):
        ax.imshow(np.clip(example[key].numpy(), 0, 1))
        ax.set_title(title, fontsize=8)
        ax.axis("off")
    ax = axes[0, -1]
    ax.plot(example["history_gpp"], label="GPP")
    ax.plot(example["history_no_gpp"], label="no GPP")
    ax.axvline(early_budget, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("step", fontsize=8)
    ax.set_ylabel("hidden PSNR (dB)", fontsize=8)
    ax.legend(fontsize=7)
    return save_figure(fig, path)
