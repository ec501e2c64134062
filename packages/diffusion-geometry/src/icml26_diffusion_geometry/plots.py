"""Figures of a run: LC against PHFE for ID and OOD samples, and the paper's heat-map grid."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from icml26_shared import new_figure, save_figure

from .method import robust_normalise


def plot_scatter(geo_id, geo_ood, path: Path) -> Path:
    """log LC against log PHFE, one point per sample, ID and OOD conditions of one seed."""
    fig, ax = new_figure(size=(4.6, 3.6))
    for label, geo, colour in [("ID (one class)", geo_id, "tab:blue"), ("OOD (two-class mixture)", geo_ood, "tab:red")]:
        ax.scatter(geo.LC.numpy(), geo.PHFE.numpy(), s=10, alpha=0.6, label=label, color=colour)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("local complexity LC")
    ax.set_ylabel("projected high-frequency energy PHFE")
    ax.legend(fontsize=7)
    return save_figure(fig, path)


def plot_maps(geo_id, geo_ood, first, second, path: Path, index: int | None = None) -> Path:
    """Image, LS_map, LC_map, PHFE_map (robust 1%/99% normalisation, jet) for the ID/OOD pair of the
    sample with the largest OOD LC (a candidate geometric hotspot)."""
    i = int(np.argmax(geo_ood.LC.numpy())) if index is None else index
    fig, axes = new_figure(ncols=4, nrows=2, size=(2.0, 2.0))
    for row, (label, geo) in enumerate([(f"ID: {first[i]}", geo_id), (f"OOD: {first[i]}+{second[i]}", geo_ood)]):
        panels = [("image", geo.x[i, 0], "gray")] + [
            (name, robust_normalise(getattr(geo, f"{name}_map")[i]), "jet") for name in ("LS", "LC", "PHFE")
        ]
        for col, (name, image, cmap) in enumerate(panels):
            ax = axes[row, col]
            ax.imshow(image.numpy(), cmap=cmap)
            value = "" if name == "image" else f" {float(getattr(geo, name)[i]):.3g}"
            ax.set_title(f"{label}" if name == "image" else f"{name}{value}", fontsize=7)
            ax.set_xticks([])
            ax.set_yticks([])
    return save_figure(fig, path)
