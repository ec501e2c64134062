"""S-Quant: LFSR-seeded basis compression of LLM weights: reference implementation (icml26)."""

from importlib.metadata import PackageNotFoundError, version

from .bitstream import field_widths, pack, unpack
from .lfsr import PRIMITIVE_TAPS, period, state_cycle, stream, walk_period
from .method import (
    SeedCode,
    SeedConfig,
    basis_bank,
    compress,
    compress_fixed_seed,
    generate_basis,
    quantise_coefficients,
    relative_error,
    search_blocks,
    shared_exponent,
)

try:
    __version__ = version("icml26-squant")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "PRIMITIVE_TAPS",
    "SeedCode",
    "SeedConfig",
    "basis_bank",
    "compress",
    "compress_fixed_seed",
    "field_widths",
    "generate_basis",
    "pack",
    "period",
    "quantise_coefficients",
    "relative_error",
    "search_blocks",
    "shared_exponent",
    "state_cycle",
    "stream",
    "unpack",
    "walk_period",
]
