"""AutoPrune: an LLM designs its own pruning metric (GCoT) and SDSA allocates sparsity (icml26).

Wanda's block-by-block one-shot pruning with magnitude, Wanda (unstructured and N:M) or a searched symbolic
metric; per-block sparsity uniform, OWL or SDSA; the metric search with GCoT prompts and a safe expression
interpreter; SmolLM2-135M-Instruct as the model pruned and as the proposer.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("icml26-autoprune")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"
