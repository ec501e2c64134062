"""SMMD (smooth maximum mean discrepancy) for numeric tokens: reference implementation (icml26).

The loss (``SMMDLoss``), its kernels over the numeric sub-vocabulary, the Number Token Loss baseline,
a digit / multi-digit tokenizer, and the generated clock-reading and addition tasks of the experiment.
"""

from importlib.metadata import PackageNotFoundError, version

from .baselines import NumberTokenLoss
from .kernels import laplacian, random_psd_kernel, shuffled_value_kernel, squash_distances, value_distance_kernel
from .method import NumericTargetObjective, NumericTokenLoss, SMMDLoss, smmd_terms
from .tokens import NumberTokenizer, NumericVocab, TokenizerLike

try:
    __version__ = version("icml26-smmd")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "NumberTokenLoss",
    "NumberTokenizer",
    "NumericTargetObjective",
    "NumericTokenLoss",
    "NumericVocab",
    "SMMDLoss",
    "TokenizerLike",
    "laplacian",
    "random_psd_kernel",
    "shuffled_value_kernel",
    "smmd_terms",
    "squash_distances",
    "value_distance_kernel",
]
