"""Near-Optimal Dynamic Matching via Coarsening with Application to Heart Transplantation: reference implementation (icml26)."""

from importlib.metadata import PackageNotFoundError, version

from .method import method

try:
    __version__ = version("icml26-online-matching")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = ["method"]
