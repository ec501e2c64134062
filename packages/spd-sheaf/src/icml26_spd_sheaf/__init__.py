"""Sheaf neural networks on the SPD manifold (ICML 2026): reference implementation (icml26).

SPD stalks in Log-Euclidean coordinates, restriction maps that are group homomorphisms, the sheaf
coboundary/Laplacian, the SPD sheaf convolution and the dual-stream (SPD + GIN) network; baselines
GIN/GCN and vector-valued Neural Sheaf Diffusion.
"""

from importlib.metadata import PackageNotFoundError, version

from .baselines import GNN, NeuralSheafDiffusion
from .method import (
    RestrictionMaps,
    SPDSheafConv,
    SPDStream,
    check_batch,
    check_graph,
    coboundary,
    dirichlet_energy,
    lift_edge_features,
    rank_lift_stats,
    sheaf_laplacian,
)
from .networks import DualStreamSheafNet
from .spd import (
    check_spd,
    direction_log_features,
    lc_chart,
    lc_inverse,
    lc_product,
    lc_unchart,
    le_inverse,
    le_power,
    le_product,
    log_reeig,
    reeig,
    spd_exp,
    spd_log,
)

try:
    __version__ = version("icml26-spd-sheaf")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "GNN",
    "DualStreamSheafNet",
    "NeuralSheafDiffusion",
    "RestrictionMaps",
    "SPDSheafConv",
    "SPDStream",
    "check_batch",
    "check_graph",
    "check_spd",
    "coboundary",
    "direction_log_features",
    "dirichlet_energy",
    "lc_chart",
    "lc_inverse",
    "lc_product",
    "lc_unchart",
    "le_inverse",
    "le_power",
    "le_product",
    "lift_edge_features",
    "log_reeig",
    "rank_lift_stats",
    "reeig",
    "sheaf_laplacian",
    "spd_exp",
    "spd_log",
]
