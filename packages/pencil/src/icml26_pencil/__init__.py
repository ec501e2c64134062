"""Plain Transformers are Surprisingly Powerful Link Predictors (PENCIL): reference implementation (icml26)."""

from importlib.metadata import PackageNotFoundError, version

from .baselines import (
    HEURISTICS,
    GCNLinkPredictor,
    adamic_adar,
    common_neighbors,
    katz,
    predict_gcn,
    resource_allocation,
    train_gcn,
)
from .data import Graph, LinkSplit, planetoid_edges, powerlaw_cluster_edges, sample_non_edges, split_edges
from .method import Pencil, Sampling, Training, predict, train_link, train_regression
from .metrics import hits_at_k, normalize_log_minmax, r2, roc_auc
from .sampler import Subgraph, TokenBatch, ego_subgraph, sample_subgraphs, tokenize

try:
    __version__ = version("icml26-pencil")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "HEURISTICS",
    "GCNLinkPredictor",
    "Graph",
    "LinkSplit",
    "Pencil",
    "Sampling",
    "Subgraph",
    "TokenBatch",
    "Training",
    "adamic_adar",
    "common_neighbors",
    "ego_subgraph",
    "hits_at_k",
    "katz",
    "normalize_log_minmax",
    "planetoid_edges",
    "powerlaw_cluster_edges",
    "predict",
    "predict_gcn",
    "r2",
    "resource_allocation",
    "roc_auc",
    "sample_non_edges",
    "sample_subgraphs",
    "split_edges",
    "tokenize",
    "train_gcn",
    "train_link",
    "train_regression",
]
