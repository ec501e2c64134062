"""Decode throughput of the seed codes vs dense weights, and the bytes each layer moves, as ratios.

A (rows, cols) layer is stored as (a) dense float16, (b) RTN 4-bit g128, (c) a SeedLM/S-Quant seed code
(K=16, C=8, P=3: 4.0 bits). Decoding (c) regenerates every block's basis by running one LFSR per block
(``SeedCode.reconstruct``: numpy, all registers side by side) or reads it from the cached
window table (``reconstruct("table")``), so it trades compute for memory traffic:
the bytes a memory-bound matrix-vector product must read shrink by 16 / bits. Decode cost does not depend
on the coefficient values, so random codes are timed (no search needed). All methods are timed in one
process, interleaved, median of the rounds.

    python packages/squant/benchmarks/bench_decode.py [--rows 1024] [--cols 1024] [--rounds 5]
"""

import argparse
import statistics
import time

import numpy as np
from icml26_squant import SeedCode, SeedConfig
from icml26_squant.baselines import rtn_quantise


def seconds(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1024)
    parser.add_argument("--cols", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    shape = (args.rows, args.cols)
    n = args.rows * args.cols
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
    timed = {
        "dense float16 -> float32": lambda: W16.astype(np.float32),
        "RTN 4-bit g128 dequantise": rtn.reconstruct,
        "seed code (LFSR regenerate)": code.reconstruct,
        "seed code (basis table)": lambda: code.reconstruct("table"),
    }
    results = {name: seconds(fn, args.rounds) for name, fn in timed.items()}
    bits = {"dense float16 -> float32": 16.0, "RTN 4-bit g128 dequantise": rtn.bits_per_weight}
    bits["seed code (LFSR regenerate)"] = bits["seed code (basis table)"] = code.bits_per_weight
    np.testing.assert_array_equal(code.reconstruct(), code.reconstruct("table"))  # the two decoders agree
    dense = results["dense float16 -> float32"]
    print(f"layer {shape}, {n} weights, median of {args.rounds} rounds, numpy {np.__version__}")
    print(f"{'format':<30} {'bits/w':>7} {'bytes':>10} {'bytes vs fp16':>14} {'Mweights/s':>11} {'decode vs fp16':>15}")
    for name, t in results.items():
        nbytes = bits[name] * n / 8
        rate = n / t / 1e6
        print(f"{name:<30} {bits[name]:7.3f} {nbytes:10.0f} {nbytes / (2 * n):14.3f} {rate:11.1f} {dense / t:15.4f}")


if __name__ == "__main__":
    main()
