"""ProMoS (ICML 2026): unsupervised generalist graph anomaly detection by prototype-guided distillation."""

from importlib.metadata import PackageNotFoundError, version

from .baselines import Dominant, residual_score, teacher_knn_score
from .data import Graph, inject_anomalies, pygod_graph, sbm_graph, sklearn_graph
from .method import (
    MixtureOfStudents,
    ProMoS,
    align_features,
    align_graph,
    commitment_weights,
    kl_per_node,
    residual_features,
    soft_labels,
)
from .teacher import Teacher, train_teacher

try:
    __version__ = version("icml26-promos")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "Dominant",
    "Graph",
    "MixtureOfStudents",
    "ProMoS",
    "Teacher",
    "align_features",
    "align_graph",
    "commitment_weights",
    "inject_anomalies",
    "kl_per_node",
    "pygod_graph",
    "residual_features",
    "residual_score",
    "sbm_graph",
    "sklearn_graph",
    "soft_labels",
    "teacher_knn_score",
    "train_teacher",
]
