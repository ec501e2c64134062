"""Baselines: round-to-nearest per group (3/4 bit) and SeedLM as published (1-D blocks, no refinement).

RTN stores, per group of ``group`` consecutive weights of a row, a float16 scale and a ``bits``-bit integer
zero point (asymmetric, min/max), as GPTQ/AWQ checkpoints pack them; its exact bits per weight count both.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icml26_shared import check_int, fail

from .method import TENSOR_METADATA_BITS, SeedConfig, check_weight

SCALE_BITS = 16  # float16 scale per group


def seedlm_config(bits: int, K: int = 16, shortlist: int | None = None) -> SeedConfig:
    """SeedLM's published settings: 4 bit C=8, P=3; 3 bit C=12, P=4 (K=16, 4-bit coefficients and exponent)."""
    check_int("bits", bits, 3, 4)
    C, P = (8, 3) if bits == 4 else (12, 4)
    return SeedConfig(K=K, tile=(1, C), P=P, fill="row", shortlist=shortlist)


@dataclass(frozen=True)
class RTNCode:
    """Asymmetric round-to-nearest codes of a (rows, cols) matrix, one scale/zero per group of a row."""

    bits: int
    group: int
    shape: tuple[int, int]
    q: np.ndarray  # (rows, cols) integers in [0, 2^bits - 1]
    scale: np.ndarray  # (rows, cols // group) float16
    zero: np.ndarray  # (rows, cols // group) integers in [0, 2^bits - 1]

    @property
    def total_bits(self) -> int:
        n = self.shape[0] * self.shape[1]
        return n * self.bits + self.scale.size * (SCALE_BITS + self.bits) + TENSOR_METADATA_BITS

    @property
    def bits_per_weight(self) -> float:
        return self.total_bits / (self.shape[0] * self.shape[1])

    def reconstruct(self) -> np.ndarray:
        rows, cols = self.shape
        q = self.q.reshape(rows, cols // self.group, self.group)
        scale = self.scale.astype(np.float64)[..., None]
        return ((q - self.zero[..., None]) * scale).reshape(rows, cols).astype(np.float32)


def minmax_grid(W: np.ndarray, bits: int, group: int) -> np.ndarray:
    """Round-to-nearest on each group's own min/max grid, scale and minimum kept as float64 (nothing stored).

    At 4 bits and group 32 this is the grid of GGUF's Q4_1 blocks (16 levels ``m + d q`` per 32 weights of a row),
    so on weights dequantised from Q4_1 it reconstructs every block whose values reach its lowest and highest
    level exactly: the coincidence that would let an RTN on those blocks win by construction. It measures that
    coincidence; it is not a baseline (its scale and minimum would cost 2 x 16 bits per group).
    """
    W = check_weight(W)
    check_int("bits", bits, 2, 8)
    check_int("group", group, 1)
    rows, cols = W.shape
    if cols % group:
        raise fail("group", group, f"a group size that divides the row length {cols}")
    g = W.reshape(rows, cols // group, group)
    low = g.min(-1, keepdims=True)
    step = np.maximum(g.max(-1, keepdims=True) - low, 1e-30) / ((1 << bits) - 1)
    return (np.rint((g - low) / step) * step + low).reshape(rows, cols)


def rtn_quantise(W: np.ndarray, bits: int = 4, group: int = 128) -> RTNCode:
    """Round-to-nearest with per-group min/max scale and zero point (the standard weight-only baseline)."""
    W = check_weight(W)
    check_int("bits", bits, 2, 8)
    check_int("group", group, 1)
    rows, cols = W.shape
    if cols % group:
        raise fail("group", group, f"a group size that divides the row length {cols}")
    levels = (1 << bits) - 1
    g = W.reshape(rows, cols // group, group)
    low, high = g.min(-1), g.max(-1)
    scale = np.maximum(high - low, 1e-12) / levels
    scale = scale.astype(np.float16).astype(np.float64)  # stored as float16: quantise with what is stored
    scale = np.where(scale > 0, scale, np.float64(np.finfo(np.float16).tiny))
    zero = np.clip(np.rint(-low / scale), 0, levels)
    q = np.clip(np.rint(g / scale[..., None]) + zero[..., None], 0, levels)
    return RTNCode(
        bits,
        group,
        (rows, cols),
        q.reshape(rows, cols).astype(np.int64),
        scale.astype(np.float16),
        zero.astype(np.int64),
    )
