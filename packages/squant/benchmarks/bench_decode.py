"""Decode time of the seed codes vs dense weights and RTN, and the bytes each layer moves, as ratios.

A (1024, 1024) layer is stored as (a) dense float16, (b) RTN 4-bit g128, (c) a SeedLM/S-Quant seed code
(K=16, C=8, P=3: 4.0 bits). Decoding (c) regenerates every block's basis by running one LFSR per block
(``SeedCode.reconstruct``: numpy, all registers side by side) or reads it from the cached
window table (``reconstruct("table")``), so it trades compute for memory traffic:
the bytes a memory-bound matrix-vector product must read shrink by 16 / bits. Decode cost does not depend
on the coefficient values, so random codes are timed (no search needed). All formats are decoded in one
process, interleaved round by round, median of 5 rounds. Ratios: the baseline's seconds (or bytes) / the
seed code's (> 1: the seed code is cheaper).

Run: python packages/squant/benchmarks/bench_decode.py [--tiny] [--out results]
"""

from __future__ import annotations

import numpy as np
from icml26_shared.bench import Benchmark, Case, bench_main, interleaved_seconds
from icml26_squant import SeedCode, SeedConfig
from icml26_squant.baselines import rtn_quantise

FULL = {"shape": (1024, 1024), "rounds": 5}
TINY = {"shape": (16, 128), "rounds": 1}


def run(tiny: bool) -> Benchmark:
    """Decode one layer in every format, interleaved; time and bytes of the seed code against each baseline."""
    size = TINY if tiny else FULL
    shape, rounds = size["shape"], size["rounds"]
    rng = np.random.default_rng(0)
    n = shape[0] * shape[1]
    W16 = rng.normal(0, 0.02, size=shape).astype(np.float16)
    config = SeedConfig(K=16, tile=(1, 8), P=3)
    blocks = n // config.C
    code = SeedCode(
        config,
        shape,
        rng.integers(1, 1 << config.K, size=blocks),
        rng.integers(-8, 8, size=(blocks, config.P)),
        rng.integers(-12, 3, size=blocks),
        -12,
    )
    rtn = rtn_quantise(W16.astype(np.float64), 4, 128)
    np.testing.assert_array_equal(code.reconstruct(), code.reconstruct("table"))  # the two decoders agree
    t_dense, t_rtn, t_lfsr, t_table = interleaved_seconds(
        [lambda: W16.astype(np.float32), rtn.reconstruct, code.reconstruct, lambda: code.reconstruct("table")], rounds
    )
    cases = []
    for decoder, t in (("LFSR regenerate", t_lfsr), ("basis table", t_table)):
        cases.append(Case(f"decode, {decoder}", "dense float16 (decode time)", t, t_dense))
        cases.append(Case(f"decode, {decoder}", "RTN 4-bit g128 (decode time)", t, t_rtn))
    stored = f"layer bytes, {code.bits_per_weight:.3f} bits/w"
    seed_bytes = code.bits_per_weight * n / 8
    cases.append(Case(stored, "dense float16 (bytes)", seed_bytes, 2 * n, "B"))
    cases.append(Case(stored, "RTN 4-bit g128 (bytes)", seed_bytes, rtn.bits_per_weight * n / 8, "B"))
    return Benchmark(
        f"seed code (K=16, C=8, P=3) vs dense float16 -> float32 and RTN 4-bit g128 dequantise, seconds to decode a "
        f"{shape[0]} x {shape[1]} layer (numpy {np.__version__}, interleaved, median of {rounds}) and bytes stored",
        tuple(cases),
        notes=f"RTN 4-bit g128 {rtn.bits_per_weight:.3f} bits/w; dense float16 read {n / t_dense / 1e6:.0f} Mweights/s",
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("squant", run))
