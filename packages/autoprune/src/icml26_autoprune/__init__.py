"""AutoPrune: an LLM designs its own pruning metric (GCoT) and SDSA allocates sparsity (icml26).

Wanda's block-by-block one-shot pruning with magnitude, Wanda (unstructured and N:M) or a searched symbolic
metric; per-block sparsity uniform, OWL or SDSA; the metric search with GCoT prompts and a safe expression
interpreter; SmolLM2-135M-Instruct as the model pruned and as the proposer.
"""

from importlib.metadata import PackageNotFoundError, version

from .allocation import ALLOCATIONS, allocate, owl, sdsa, skewness, uniform
from .data import planted_outlier_network, text_windows
from .metric import MAGNITUDE, PRIMITIVES, WANDA, CandidateRejected, Metric, evaluate_metric, parse_metric
from .model import block_inputs, decoder_blocks, prune_lm
from .pruning import LayerStats, PruneResult, apply_masks, dense_statistics, prune_blocks, select_mask
from .search import (
    Candidate,
    ChatCompletionsProposer,
    LLMProposer,
    LocalLLMProposer,
    MutationProposer,
    best,
    build_prompt,
    reconstruction_fitness,
    search,
)

try:
    __version__ = version("icml26-autoprune")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "ALLOCATIONS",
    "MAGNITUDE",
    "PRIMITIVES",
    "WANDA",
    "Candidate",
    "CandidateRejected",
    "ChatCompletionsProposer",
    "LLMProposer",
    "LayerStats",
    "LocalLLMProposer",
    "Metric",
    "MutationProposer",
    "PruneResult",
    "allocate",
    "apply_masks",
    "best",
    "block_inputs",
    "build_prompt",
    "decoder_blocks",
    "dense_statistics",
    "evaluate_metric",
    "owl",
    "parse_metric",
    "planted_outlier_network",
    "prune_blocks",
    "prune_lm",
    "reconstruction_fitness",
    "sdsa",
    "search",
    "select_mask",
    "skewness",
    "text_windows",
    "uniform",
]
