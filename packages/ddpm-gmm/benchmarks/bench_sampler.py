"""Samples per second of the jitted JAX DDPM sampler vs the same maths as a numpy loop, measured in one run.

d = 128, K = 8 components, n = 4096 samples, T = 100 steps of the paper's schedule; JAX compiled once outside
the timing, each sampler best of 3. The numpy loop runs in float64; JAX is timed in float32 (its default) and
in float64 (like for like). The ratio is JAX's samples/s / numpy's.

Run: python packages/ddpm-gmm/benchmarks/bench_sampler.py [--tiny] [--out results]
"""

from __future__ import annotations

import jax
import numpy as np
from icml26_ddpm_gmm import ddpm_sample, numpy_ddpm_sample, paper_schedule
from icml26_ddpm_gmm.data import random_collinear_mixture
from icml26_shared.bench import Benchmark, Case, bench_main, best_seconds

D, K, N, T, REPEATS = 128, 8, 4096, 100, 3
TINY = (4, 2, 64, 10, 1)


def run(tiny: bool) -> Benchmark:
    """Time the jitted sampler (float32, then float64) and the numpy loop on the same mixture and schedule."""
    d, k, n, steps, repeats = TINY if tiny else (D, K, N, T, REPEATS)
    mixture = random_collinear_mixture(np.random.default_rng(0), k, d)
    betas = paper_schedule(steps)
    key, rng = jax.random.key(0), np.random.default_rng(0)

    def sample_jax() -> None:
        ddpm_sample(key, mixture, betas, n).block_until_ready()

    sample_jax()  # compile once, outside the timing
    t_jax = best_seconds(sample_jax, repeats)
    with jax.enable_x64(True):  # the same precision as numpy, for a like-for-like ratio
        sample_jax()
        t_jax64 = best_seconds(sample_jax, repeats)
    t_np = best_seconds(lambda: numpy_ddpm_sample(rng, mixture, betas, n), repeats)
    size = f"d={d} K={k} n={n} T={steps}"
    baseline = "numpy float64 loop"
    return Benchmark(
        f"jitted JAX DDPM sampler vs the same maths as a numpy loop, samples/s, best of {repeats}",
        (
            Case(f"{size}, jax float32", baseline, n / t_jax, n / t_np, "items/s"),
            Case(f"{size}, jax float64", baseline, n / t_jax64, n / t_np, "items/s"),
        ),
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("ddpm-gmm", run))
