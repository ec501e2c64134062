"""Renderer forward + backward time per view against the number of Gaussians and of pixels (scaling).

The dense rasterizer tests every pixel against every Gaussian, so its cost should grow like pixels x Gaussians.
Times are CPU seconds (one torch thread, median of interleaved rounds), printed as ratios to the smallest case
measured in the same run, next to the ratio of pixel-Gaussian pairs. The last rows compare one step of the key's
optimisation (the precomputed compositing weights, ``Splats.image``) with a full differentiable render.
Usage: python benchmarks/bench_render.py
"""

import time

import numpy as np
import torch
from icml26_whispersplat import Gaussians, procedural_scene, render, ring_cameras, splat

ROUNDS = 5
GAUSSIANS = (250, 500, 1000, 2000)
SIZES = (16, 32, 48, 64)


def forward_backward(gaussians: Gaussians, camera) -> None:
    params = {k: getattr(gaussians, k).clone().requires_grad_(True) for k in ("means", "scales", "opacities", "sh")}
    render(Gaussians(quats=gaussians.quats, **params), camera).sum().backward()


def key_step(splats, sh: torch.Tensor) -> None:
    key = torch.zeros_like(sh, requires_grad=True)
    splats.image(sh + key).sum().backward()


def median_cpu(fn, rounds: int = ROUNDS) -> float:
    times = []
    for _ in range(rounds):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return float(np.median(times))


def main() -> None:
    torch.set_num_threads(1)
    scenes = {n: procedural_scene(n, np.random.default_rng(0)) for n in GAUSSIANS}
    cases = [(n, 32) for n in GAUSSIANS] + [(500, s) for s in SIZES if s != 32]
    cameras = {s: ring_cameras(1, size=s)[0] for s in SIZES}
    times = {case: [] for case in cases}
    for _ in range(ROUNDS):  # interleaved rounds: robust to a shared, loaded machine
        for n, s in cases:
            times[(n, s)].append(median_cpu(lambda n=n, s=s: forward_backward(scenes[n], cameras[s]), rounds=1))
    reference = np.median(times[(250, 32)])
    print(f"forward + backward of one view, CPU s (median of {ROUNDS}); ratio to 250 Gaussians at 32x32 px")
    print(f"{'gaussians':>9} {'pixels':>7} {'seconds':>8} {'ratio':>7} {'pairs ratio':>11}")
    for n, s in sorted(cases, key=lambda c: (c[1], c[0])):
        t = np.median(times[(n, s)])
        print(f"{n:9d} {s * s:7d} {t:8.4f} {t / reference:7.2f} {n * s * s / (250 * 32 * 32):11.2f}")
    camera, cover = cameras[48], scenes[1000]
    with torch.no_grad():
        splats = splat(cover, camera)
    full = median_cpu(lambda: forward_backward(cover, camera))
    step = median_cpu(lambda: key_step(splats, cover.sh), rounds=50)
    print(
        f"1000 Gaussians, 48x48 px: full render fwd+bwd {full:.4f} s; key step on precomputed weights "
        f"{step * 1e3:.2f} ms (x{full / step:.0f} faster)"
    )


if __name__ == "__main__":
    main()
