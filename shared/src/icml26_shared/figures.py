"""Figures with matplotlib's headless Agg backend, saved atomically as PNG into a run's folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def new_figure(ncols: int = 1, nrows: int = 1, size: tuple[float, float] = (4.0, 3.2)) -> tuple[Any, Any]:
    """A (figure, axes) pair on the Agg backend; ``size`` is per panel in inches."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(nrows, ncols, figsize=(size[0] * ncols, size[1] * nrows), squeeze=False)
    return fig, axes if axes.size > 1 else axes[0, 0]


def save_figure(fig: Any, path: str | os.PathLike) -> Path:
    """Save ``fig`` as PNG at ``path`` (temp file + rename) and close it."""
    import matplotlib.pyplot as plt

    from .cache import atomic_writer

    path = Path(path)
    fig.tight_layout()
    with atomic_writer(path) as fh:
        fig.savefig(fh, format="png", dpi=120)
    plt.close(fig)
    return path
