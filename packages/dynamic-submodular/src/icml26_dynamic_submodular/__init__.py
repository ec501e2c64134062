"""A General Framework for Dynamic Consistent Submodular Maximization: reference implementation (icml26)."""

from importlib.metadata import PackageNotFoundError, version

from .method import method

try:
    __version__ = version("icml26-dynamic-submodular")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = ["method"]
