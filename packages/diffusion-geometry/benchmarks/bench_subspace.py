"""Cost of the paper's random-subspace finite differences against the exact full Jacobian.

The official code never forms dF/dz: D_low + 1 samplings give the projected Jacobian. This prints, for
one batch of latents of the miniature's DDIM+CFG map (untrained network, float64, one thread), the CPU
time of the subspace estimate of LS for several D_low and of the exact top singular value (30 power
iterations with forward + reverse mode), the ratio of the two, and how much of sigma_1 the subspace
captures. Run: python packages/diffusion-geometry/benchmarks/bench_subspace.py
"""

import time

import numpy as np
import torch
from icml26_diffusion_geometry.baselines import full_spectral_norm
from icml26_diffusion_geometry.data import class_conditions
from icml26_diffusion_geometry.method import principal_stretch, random_subspace, subspace_jacobian
from icml26_diffusion_geometry.model import DDIMGenerator, EpsilonNet

B = 16


def cpu_time(fn):
    """(result, thread CPU seconds) of the best of 3 runs."""
    best, out = float("inf"), None
    for _ in range(3):
        start = time.thread_time()
        out = fn()
        best = min(best, time.thread_time() - start)
    return out, best


def main() -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    F = DDIMGenerator(EpsilonNet(64, 10, 128).double().eval(), steps=12, guidance=3.0)
    z = torch.randn(B, 1, 8, 8, dtype=torch.float64)
    cond = class_conditions(np.arange(B) % 10)
    sigma, t_full = cpu_time(lambda: full_spectral_norm(F, z, cond, iters=30))
    print(f"exact sigma_1 (power iteration, 30 iters): {t_full:.3f} s CPU for {B} latents")
    for d_low in (4, 16, 64):
        gen = torch.Generator().manual_seed(d_low)
        W = torch.stack([random_subspace(64, d_low, gen) for _ in range(B)])

        def estimate(W=W):
            with torch.no_grad():
                _, cols = subspace_jacobian(F, z, W, 0.02, cond)
            return principal_stretch(cols.flatten(2).transpose(1, 2))[0]

        ls, t_sub = cpu_time(estimate)
        ratio = (ls / sigma).median()
        print(
            f"D_low={d_low:3d}: {t_sub:.3f} s CPU, speed-up vs exact {t_full / t_sub:5.1f}x, "
            f"LS / sigma_1 median {float(ratio):.3f}"
        )


if __name__ == "__main__":
    main()
