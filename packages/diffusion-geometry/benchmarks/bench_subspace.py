"""Cost of the paper's random-subspace finite differences against the exact full Jacobian.

The official code never forms dF/dz: D_low + 1 samplings give the projected Jacobian. For one batch of
latents of the miniature's DDIM+CFG map (untrained network, float64, one thread) this times the subspace
estimate of LS for several D_low against the exact top singular value (30 power iterations with forward +
reverse mode), thread CPU time, best of 3; the notes say how much of sigma_1 each subspace captures.

Run: python packages/diffusion-geometry/benchmarks/bench_subspace.py [--tiny] [--out results]
"""

from __future__ import annotations

import time

import numpy as np
import torch
from icml26_diffusion_geometry.baselines import full_spectral_norm
from icml26_diffusion_geometry.data import class_conditions
from icml26_diffusion_geometry.method import principal_stretch, random_subspace, subspace_jacobian
from icml26_diffusion_geometry.model import DDIMGenerator, EpsilonNet
from icml26_shared.bench import Benchmark, Case, bench_main, best_seconds

B, TINY_B = 16, 2  # latents in the batch
D_LOWS, TINY_D_LOWS = (4, 16, 64), (4,)
POWER_ITERS, TINY_POWER_ITERS = 30, 2
REPEATS, TINY_REPEATS = 3, 1


def run(tiny: bool) -> Benchmark:
    """Per D_low, the subspace estimate against the exact sigma_1 on the same latents and conditions."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    b, iters, repeats = (TINY_B, TINY_POWER_ITERS, TINY_REPEATS) if tiny else (B, POWER_ITERS, REPEATS)
    F = DDIMGenerator(EpsilonNet(64, 10, 128).double().eval(), steps=12, guidance=3.0)
    z = torch.randn(b, 1, 8, 8, dtype=torch.float64)
    cond = class_conditions(np.arange(b) % 10)
    sigma = full_spectral_norm(F, z, cond, iters=iters)
    t_full = best_seconds(lambda: full_spectral_norm(F, z, cond, iters=iters), repeats, time.thread_time)
    cases, captured = [], []
    for d_low in TINY_D_LOWS if tiny else D_LOWS:
        gen = torch.Generator().manual_seed(d_low)
        W = torch.stack([random_subspace(64, d_low, gen) for _ in range(b)])

        def estimate(W=W):
            with torch.no_grad():
                _, cols = subspace_jacobian(F, z, W, 0.02, cond)
            return principal_stretch(cols.flatten(2).transpose(1, 2))[0]

        ratio = float((estimate() / sigma).median())
        t_sub = best_seconds(estimate, repeats, time.thread_time)
        cases.append(Case(f"{b} latents, D_low={d_low}", f"exact sigma_1 ({iters} power iterations)", t_sub, t_full))
        captured.append(f"D_low={d_low}: {ratio:.3f}")
    return Benchmark(
        "random-subspace finite-difference LS vs the exact top singular value of the generative Jacobian "
        "(12-step DDIM+CFG, untrained network, float64), thread CPU seconds, one thread",
        tuple(cases),
        notes="median LS / sigma_1: " + ", ".join(captured),
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("diffusion-geometry", run))
