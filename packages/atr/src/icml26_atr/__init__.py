"""Adaptive Token Refinement (ATR) for long-tailed LVLM fine-tuning: reference implementation (icml26).

ATR's two token-level operations, without class-frequency priors: a bounded adaptive loss that filters and
reweights the answer (output) tokens, and a visual token mask on the input tokens trained as a second view;
the CE, focal and logit-adjustment baselines; a tiny vision-language model and the long-tailed VQA data.
"""

from importlib.metadata import PackageNotFoundError, version

from .baselines import answer_log_prior, focal_loss, logit_adjusted_loss, token_cross_entropy
from .data import default_vocabulary, encode_qa, long_tailed_counts, long_tailed_task, shot_bins
from .method import BoundedAdaptiveLoss, bounded_token_loss, token_weights, two_view_loss, visual_token_mask
from .model import TinyVLM
from .settings import METHODS, ATRSettings
from .training import answer_log_likelihoods, evaluate, fine_tune, make_objective, pretrain

try:
    __version__ = version("icml26-atr")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "METHODS",
    "ATRSettings",
    "BoundedAdaptiveLoss",
    "TinyVLM",
    "answer_log_likelihoods",
    "answer_log_prior",
    "bounded_token_loss",
    "default_vocabulary",
    "encode_qa",
    "evaluate",
    "fine_tune",
    "focal_loss",
    "logit_adjusted_loss",
    "long_tailed_counts",
    "long_tailed_task",
    "make_objective",
    "pretrain",
    "shot_bins",
    "token_cross_entropy",
    "token_weights",
    "two_view_loss",
    "visual_token_mask",
]
