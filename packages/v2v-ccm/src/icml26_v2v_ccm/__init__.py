"""V2V-CCM (ICML 2026): communication-conditioned token pruning for V2V cooperative driving with an MLLM.

Public API: the BEV world and its ray-cast visibility, the generated V2V-QA-like data, the tiny cooperative
MLLM (with the QSM head), the CCM selection (QSM + SCM request, top-k pruning, bytes), the pruning baselines
(random, FastV-style attention, diversity) and the training/evaluation helpers.
"""

from importlib.metadata import PackageNotFoundError, version

from .baselines import diversity_select, fastv_scores, random_select
from .data import QUESTION_TYPES, QAData, make_dataset, patch_centres, patch_tokens
from .method import (
    ccm_scores,
    check_keep_ratio,
    dense_bytes,
    index_bytes,
    keep_count,
    message_bytes,
    request_bytes,
    scm_coverage,
    scm_message,
    select_tokens,
)
from .model import CooperativeQA, Inputs, answer_attention, distillation_loss, sinusoidal_2d
from .training import augmentation_mask, batch_inputs, evaluate, train
from .world import CHANNELS, CLASSES, Scene, bev_features, check_agents, random_scene, visibility

try:
    __version__ = version("icml26-v2v-ccm")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "CHANNELS",
    "CLASSES",
    "QUESTION_TYPES",
    "CooperativeQA",
    "Inputs",
    "QAData",
    "Scene",
    "answer_attention",
    "augmentation_mask",
    "batch_inputs",
    "bev_features",
    "ccm_scores",
    "check_agents",
    "check_keep_ratio",
    "dense_bytes",
    "distillation_loss",
    "diversity_select",
    "evaluate",
    "fastv_scores",
    "index_bytes",
    "keep_count",
    "make_dataset",
    "message_bytes",
    "patch_centres",
    "patch_tokens",
    "random_scene",
    "random_select",
    "request_bytes",
    "scm_coverage",
    "scm_message",
    "select_tokens",
    "sinusoidal_2d",
    "train",
    "visibility",
]
