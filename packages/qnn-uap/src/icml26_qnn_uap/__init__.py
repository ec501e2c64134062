"""SAQNN: Spectral Adaptive Quantum Neural Network as a Universal Approximator: reference implementation (icml26)."""

from importlib.metadata import PackageNotFoundError, version

from .bases import basis_values, chebyshev_degrees, fourier_frequencies
from .method import SAQNN, amplitudes, num_index_qubits, num_parameters, theta_for_amplitudes
from .training import FitResult, fit

try:
    __version__ = version("icml26-qnn-uap")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "SAQNN",
    "FitResult",
    "amplitudes",
    "basis_values",
    "chebyshev_degrees",
    "fit",
    "fourier_frequencies",
    "num_index_qubits",
    "num_parameters",
    "theta_for_amplitudes",
]
