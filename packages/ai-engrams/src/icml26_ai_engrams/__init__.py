"""AI engrams (ICML 2026): closed-form memory traces of linear layers, erased and composed by linear arithmetic."""

from importlib.metadata import PackageNotFoundError, version

from .baselines import gradient_ascent, random_direction
from .method import (
    Engram,
    Statistics,
    collect_statistics,
    compute_engram,
    compute_engrams,
    default_rtol,
    erase,
    natural_gradient_step,
    spectral_pinv,
    supported_layers,
)
from .networks import MLP, TinyLM, answer_scores, class_accuracy, train_classifier, train_lm

try:
    __version__ = version("icml26-ai-engrams")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "MLP",
    "Engram",
    "Statistics",
    "TinyLM",
    "answer_scores",
    "class_accuracy",
    "collect_statistics",
    "compute_engram",
    "compute_engrams",
    "default_rtol",
    "erase",
    "gradient_ascent",
    "natural_gradient_step",
    "random_direction",
    "spectral_pinv",
    "supported_layers",
    "train_classifier",
    "train_lm",
]
