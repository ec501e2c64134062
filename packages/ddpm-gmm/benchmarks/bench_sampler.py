"""Samples per second of the jitted JAX DDPM sampler vs the same maths as a numpy loop (one run, one ratio).

Run: python packages/ddpm-gmm/benchmarks/bench_sampler.py [--d 128] [--n 4096] [--T 100]
"""

import argparse
import time

import jax
import numpy as np
from icml26_ddpm_gmm import GaussianMixture, ddpm_sample, numpy_ddpm_sample, paper_schedule
from icml26_ddpm_gmm.data import random_collinear_mixture


def best_of(fn, repeats: int) -> float:
    """Smallest wall time of ``repeats`` calls (the least disturbed by other load)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--d", type=int, default=128)
    parser.add_argument("--K", type=int, default=8)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--T", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    mixture: GaussianMixture = random_collinear_mixture(np.random.default_rng(0), args.K, args.d)
    betas = paper_schedule(args.T)
    key, rng = jax.random.key(0), np.random.default_rng(0)
    ddpm_sample(key, mixture, betas, args.n).block_until_ready()  # compile once, outside the timing
    t_jax = best_of(lambda: ddpm_sample(key, mixture, betas, args.n).block_until_ready(), args.repeats)
    with jax.enable_x64(True):  # the same precision as numpy, for a like-for-like ratio
        ddpm_sample(key, mixture, betas, args.n).block_until_ready()
        t_jax64 = best_of(lambda: ddpm_sample(key, mixture, betas, args.n).block_until_ready(), args.repeats)
    t_np = best_of(lambda: numpy_ddpm_sample(rng, mixture, betas, args.n), args.repeats)
    print(f"d={args.d} K={args.K} n={args.n} T={args.T}")
    print(f"jax (jit, float32): {args.n / t_jax:12.0f} samples/s")
    print(f"jax (jit, float64): {args.n / t_jax64:12.0f} samples/s")
    print(f"numpy loop (float64): {args.n / t_np:10.0f} samples/s")
    print(f"speed-up jax float32 / numpy: {t_np / t_jax:.2f}x; jax float64 / numpy: {t_np / t_jax64:.2f}x")


if __name__ == "__main__":
    main()
