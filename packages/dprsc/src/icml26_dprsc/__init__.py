"""Differentially Private Range Subgraph Counting (DPRSC): reference implementation (icml26).

``release`` publishes one (eps, delta)-edge-DP noisy range tree of the occurrences of a pattern
(triangles, k-stars, any small connected graph); ``Release.answer`` answers any number of box queries
from it. The baselines the paper compares against live in ``icml26_dprsc.baselines``.
"""

from importlib.metadata import PackageNotFoundError, version

from .baselines import (
    exact_box_counts,
    flat_grid_release,
    global_laplace_answers,
    local_laplace_answers,
    randomized_response_answers,
)
from .data import planetoid_graph, powerlaw_cluster_graph, random_boxes, sbm_graph
from .method import Release, project, release
from .patterns import Pattern, from_graph, occurrences, star, triangle
from .rangetree import DyadicTree

try:
    __version__ = version("icml26-dprsc")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "DyadicTree",
    "Pattern",
    "Release",
    "exact_box_counts",
    "flat_grid_release",
    "from_graph",
    "global_laplace_answers",
    "local_laplace_answers",
    "occurrences",
    "planetoid_graph",
    "powerlaw_cluster_graph",
    "project",
    "random_boxes",
    "randomized_response_answers",
    "release",
    "sbm_graph",
    "star",
    "triangle",
]
