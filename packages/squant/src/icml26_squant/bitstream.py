"""The stored form of a seed code: every field at its exact bit width, packed MSB first.

Layout (``pack``), ``SeedCode.bits`` bits in all, zero-padded to whole bytes:

    header   e_low (8-bit two's complement) | rows (32 bits) | cols (32 bits)      TENSOR_METADATA_BITS
    block i  seed (K bits) | e - e_low (E bits, unsigned) | q_1 .. q_P (b bits each, two's complement)

The config (K, tile, P, b, E, fill) is the format's schema, as a checkpoint's layer config is: it is not
stored, ``unpack`` takes it back.
"""

from __future__ import annotations

import numpy as np
from icml26_shared import fail

from .method import TENSOR_METADATA_BITS, SeedCode, SeedConfig

HEADER_WIDTHS = (8, 32, 32)  # e_low, rows, cols: TENSOR_METADATA_BITS in all


def field_widths(config: SeedConfig) -> tuple[int, ...]:
    """Bit width of every field of one block: seed, exponent offset, then the P coefficients."""
    return (config.K, config.exponent_bits) + (config.coef_bits,) * config.P


def _to_bits(fields: np.ndarray, widths: tuple[int, ...]) -> np.ndarray:
    """(n, F) non-negative integers -> (n, sum(widths)) bits, each field MSB first at its width."""
    columns = [(fields[:, [f]] >> np.arange(w - 1, -1, -1)) & 1 for f, w in enumerate(widths)]
    return np.concatenate(columns, axis=1).astype(np.uint8)


def _from_bits(bits: np.ndarray, widths: tuple[int, ...]) -> np.ndarray:
    """Inverse of ``_to_bits``: (n, sum(widths)) bits -> (n, F) non-negative integers."""
    out, start = [], 0
    for w in widths:
        out.append(bits[:, start : start + w].astype(np.int64) @ (1 << np.arange(w - 1, -1, -1)))
        start += w
    return np.stack(out, axis=1)


def _check_field(name: str, values: np.ndarray, low: int, high: int) -> None:
    if values.size and (values.min() < low or values.max() > high):
        raise fail(name, values, f"integers in [{low}, {high}] to fit the stored field")


def pack(code: SeedCode) -> bytes:
    """The code as ``ceil(code.bits / 8)`` bytes (layout in the module docstring)."""
    cfg = code.config
    n_exp, half = 1 << cfg.exponent_bits, 1 << (cfg.coef_bits - 1)
    _check_field("e_low", np.array([code.e_low]), -128, 127)
    _check_field("seeds", code.seeds, 1, (1 << cfg.K) - 1)
    _check_field("e", code.e - code.e_low, 0, n_exp - 1)
    _check_field("q", code.q, -half, half - 1)
    header = np.array([[code.e_low & 0xFF, code.shape[0], code.shape[1]]], dtype=np.int64)
    blocks = np.column_stack([code.seeds, code.e - code.e_low, code.q & ((1 << cfg.coef_bits) - 1)])
    bits = np.concatenate([_to_bits(header, HEADER_WIDTHS).ravel(), _to_bits(blocks, field_widths(cfg)).ravel()])
    assert len(bits) == code.bits
    return np.packbits(bits).tobytes()


def unpack(data: bytes, config: SeedConfig) -> SeedCode:
    """The ``SeedCode`` that ``pack`` stored in ``data``, read with the format ``config``."""
    if not isinstance(data, bytes | bytearray) or len(data) * 8 < TENSOR_METADATA_BITS:
        raise fail("data", data, f"bytes from pack(), at least {TENSOR_METADATA_BITS // 8 + 1} long")
    bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8))
    e_low, rows, cols = (int(v) for v in _from_bits(bits[None, :TENSOR_METADATA_BITS], HEADER_WIDTHS)[0])
    e_low -= 256 * (e_low >= 128)
    if rows < 1 or cols < 1 or rows % config.tile[0] or cols % config.tile[1]:
        raise fail("data", f"<header rows={rows}, cols={cols}>", f"a shape divisible by the tile {config.tile}")
    n_blocks = rows * cols // config.C
    total = TENSOR_METADATA_BITS + n_blocks * config.block_bits
    if len(data) != (total + 7) // 8:
        raise fail(
            "data", f"<{len(data)} bytes>", f"{(total + 7) // 8} bytes for a {rows} x {cols} code of this config"
        )
    fields = _from_bits(bits[TENSOR_METADATA_BITS:total].reshape(n_blocks, config.block_bits), field_widths(config))
    q = fields[:, 2:]
    q = q - (q >= 1 << (config.coef_bits - 1)) * (1 << config.coef_bits)  # two's complement
    return SeedCode(config, (rows, cols), fields[:, 0], q, fields[:, 1] + e_low, e_low)
