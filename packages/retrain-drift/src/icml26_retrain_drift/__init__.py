"""Quantifying Error Propagation and Model Collapse in Diffusion Models: reference implementation (icml26).

The exact 1-D grid simulator of recursive retraining with a fraction ``alpha`` of fresh data (``retrain``,
``generate``), the paper's divergences and bounds, and the trained 2-D version (``networks``).
Names are loaded on first use, so listing papers with the ``icml26`` CLI does not import jax.
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("icml26-retrain-drift")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

_EXPORTS = {
    "data": ("grid_density", "make_grid", "mixture_density", "ring_sample"),
    "grid": ("time_grid",),
    "method": (
        "Generation",
        "Retraining",
        "chi_square",
        "discounted_sum",
        "generate",
        "girsanov_upper",
        "plateau",
        "retrain",
        "score_error",
        "score_error_energy",
        "score_perturbation",
    ),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    """Import the public name ``name`` from its module on first access (PEP 562)."""
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_MODULE_OF[name]}", __name__), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
