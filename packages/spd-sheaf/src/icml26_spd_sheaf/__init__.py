"""Sheaf neural networks on the SPD manifold (ICML 2026): reference implementation (icml26).

SPD stalks in Log-Euclidean coordinates, restriction maps that are group homomorphisms, the sheaf
coboundary/Laplacian, the SPD sheaf convolution and the dual-stream (SPD + GIN) network; baselines
GIN/GCN and vector-valued Neural Sheaf Diffusion.
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

# public name -> submodule; imported on first use so that listing papers (the CLI) does not import torch
_EXPORTS = {
    "GNN": "baselines",
    "NeuralSheafDiffusion": "baselines",
    "DualStreamSheafNet": "networks",
    **dict.fromkeys(
        [
            "RestrictionMaps",
            "SPDSheafConv",
            "SPDStream",
            "check_batch",
            "check_graph",
            "coboundary",
            "dirichlet_energy",
            "lift_edge_features",
            "rank_lift_stats",
            "sheaf_laplacian",
        ],
        "method",
    ),
    **dict.fromkeys(
        [
            "check_spd",
            "direction_log_features",
            "lc_chart",
            "lc_inverse",
            "lc_product",
            "lc_unchart",
            "le_inverse",
            "le_power",
            "le_product",
            "log_reeig",
            "reeig",
            "spd_exp",
            "spd_log",
        ],
        "spd",
    ),
}

try:
    __version__ = version("icml26-spd-sheaf")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    """Lazy re-export of the public API (PEP 562)."""
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
