"""Atlas: learning to optimally memorize the context at test time: reference implementation (icml26).

A matrix memory over polynomial key features, trained at test time by the Omega rule (a gated
least-squares loss over a sliding window of past tokens) with momentum and Muon (Newton-Schulz) steps,
computed in parallel chunks; the linear-attention, DeltaNet and softmax-attention baselines.
"""

from importlib.metadata import PackageNotFoundError, version

from .features import PolynomialFeatures, exp_kernel_coefficients, polynomial_feature_dim, symmetric_square
from .layers import MemoryLayer, RecallModel
from .method import newton_schulz5, omega_least_squares, omega_memory, omega_memory_sequential

try:
    __version__ = version("icml26-atlas")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "MemoryLayer",
    "PolynomialFeatures",
    "RecallModel",
    "exp_kernel_coefficients",
    "newton_schulz5",
    "omega_least_squares",
    "omega_memory",
    "omega_memory_sequential",
    "polynomial_feature_dim",
    "symmetric_square",
]
