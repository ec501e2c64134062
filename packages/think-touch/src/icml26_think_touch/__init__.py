"""Think-then-Touch: low-cost full fine-tuning by learning what to update: reference implementation (icml26)."""

from importlib.metadata import PackageNotFoundError, version

from .method import method

try:
    __version__ = version("icml26-think-touch")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = ["method"]
