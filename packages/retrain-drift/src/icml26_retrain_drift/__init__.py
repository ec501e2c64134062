"""Quantifying Error Propagation and Model Collapse in Diffusion Models: reference implementation (icml26)."""

from importlib.metadata import PackageNotFoundError, version

from .method import method

try:
    __version__ = version("icml26-retrain-drift")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = ["method"]
