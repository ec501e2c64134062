"""Quantifying Error Propagation and Model Collapse in Diffusion Models: reference implementation (icml26).

The exact 1-D grid simulator of recursive retraining with a fraction ``alpha`` of fresh data (``retrain``,
``generate``), the paper's divergences and bounds, and the trained 2-D version (``networks``).
"""

from importlib.metadata import PackageNotFoundError, version

from .data import grid_density, make_grid, mixture_density, ring_sample
from .grid import time_grid
from .method import (
    Generation,
    Retraining,
    chi_square,
    discounted_sum,
    generate,
    girsanov_upper,
    plateau,
    retrain,
    score_error,
    score_error_energy,
    score_perturbation,
)

try:
    __version__ = version("icml26-retrain-drift")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "Generation",
    "Retraining",
    "chi_square",
    "discounted_sum",
    "generate",
    "girsanov_upper",
    "grid_density",
    "make_grid",
    "mixture_density",
    "plateau",
    "retrain",
    "ring_sample",
    "score_error",
    "score_error_energy",
    "score_perturbation",
    "time_grid",
]
