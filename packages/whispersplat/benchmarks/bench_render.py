"""Renderer forward + backward time per view against the number of Gaussians and of pixels (scaling).

The dense rasterizer tests every pixel against every Gaussian, so its cost should grow like pixels x Gaussians.
Each case is one view's forward + backward at a size, against the smallest case (250 Gaussians at 32 x 32 px)
measured in the same run: the ratio is reference time / case time, so its inverse is the cost relative to the
reference, to be read beside the ratio of pixel-Gaussian pairs (in the notes). The last case compares one step of
the key's optimisation on the precomputed compositing weights (``Splats.image``) with a full differentiable render
(1000 Gaussians, 48 x 48 px). CPU seconds of this process, one torch thread, median of interleaved rounds.

Run: python packages/whispersplat/benchmarks/bench_render.py [--tiny] [--out results]
"""

from __future__ import annotations

import time
from functools import partial

import numpy as np
import torch
from icml26_shared.bench import Benchmark, Case, bench_main, interleaved_seconds
from icml26_whispersplat import Gaussians, procedural_scene, render, ring_cameras, splat

# (Gaussians, image size) per case; the first is the reference of the others
CASES = ((250, 32), (500, 16), (500, 32), (1000, 32), (2000, 32), (500, 48), (500, 64))
TINY_CASES = ((20, 12), (40, 12), (20, 16))
KEY_CASE, TINY_KEY_CASE = (1000, 48), (40, 16)
ROUNDS, TINY_ROUNDS = 5, 1
KEY_STEPS = 50  # key steps timed per round (one is well under a millisecond)


def forward_backward(gaussians: Gaussians, camera) -> None:
    """One differentiable render of ``camera`` and its backward pass to every Gaussian parameter."""
    params = {k: getattr(gaussians, k).clone().requires_grad_(True) for k in ("means", "scales", "opacities", "sh")}
    render(Gaussians(quats=gaussians.quats, **params), camera).sum().backward()


def key_steps(splats, sh: torch.Tensor, steps: int) -> None:
    """``steps`` forward + backward passes of the key on the precomputed compositing weights."""
    for _ in range(steps):
        key = torch.zeros_like(sh, requires_grad=True)
        splats.image(sh + key).sum().backward()


def run(tiny: bool) -> Benchmark:
    """Time every size and the key step (interleaved rounds); ratios to the reference size and to a full render."""
    torch.set_num_threads(1)
    cases, (n_key, s_key) = (TINY_CASES, TINY_KEY_CASE) if tiny else (CASES, KEY_CASE)
    scenes = {n: procedural_scene(n, np.random.default_rng(0)) for n in {n for n, _ in cases} | {n_key}}
    cameras = {s: ring_cameras(1, size=s)[0] for s in {s for _, s in cases} | {s_key}}
    with torch.no_grad():
        splats = splat(scenes[n_key], cameras[s_key])
    fns = [partial(forward_backward, scenes[n], cameras[s]) for n, s in cases]
    fns += [
        partial(forward_backward, scenes[n_key], cameras[s_key]),
        partial(key_steps, splats, scenes[n_key].sh, KEY_STEPS),
    ]
    *times, full, steps = interleaved_seconds(fns, TINY_ROUNDS if tiny else ROUNDS, clock=time.process_time)
    (n0, s0), t0 = cases[0], times[0]
    reference = f"{n0} Gaussians, {s0}x{s0} px"
    out = [Case(f"{n} Gaussians, {s}x{s} px", reference, t, t0) for (n, s), t in zip(cases[1:], times[1:], strict=True)]
    out.append(Case(f"key step, {n_key} Gaussians, {s_key}x{s_key} px", "full render", steps / KEY_STEPS, full))
    pairs = ", ".join(f"{n}x{s}^2: {n * s * s / (n0 * s0 * s0):.2f}" for n, s in cases[1:])
    return Benchmark(
        f"dense CPU rasterizer, forward + backward of one view, against {reference} (ratio = reference / case), and "
        "one key step on precomputed compositing weights against a full differentiable render; CPU s, one thread",
        tuple(out),
        notes=f"pixel-Gaussian pairs relative to the reference (cost should follow them): {pairs}",
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("whispersplat", run))
