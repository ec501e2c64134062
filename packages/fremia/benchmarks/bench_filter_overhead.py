"""Time of each attack with the high-frequency filter against the same attack without it (the paper: "no
additional time cost"): same model, same images, both variants interleaved in one process, median of rounds,
CPU seconds, one thread. Two settings: the quick MLP denoiser (batch 256 of 1x16x16, tau = 2), where the
denoiser is cheap and the filter's FFTs show, and a small diffusers UNet2DModel (32/64/64/64 channels; batch 16
of 1x32x32, tau = 5), nearer the paper's 35.7M-parameter UNets. A ratio is the time without the filter over the
time with it (1: no extra cost; below 1: what the filter costs). Untrained weights: the cost does not depend on them.

Run: python packages/fremia/benchmarks/bench_filter_overhead.py [--tiny] [--out results]
"""

from __future__ import annotations

import time
from functools import partial

import torch
from icml26_fremia import ATTACKS, MLPDenoiser, UNetDenoiser, alphas_cumprod, attack_scores
from icml26_shared.bench import Benchmark, Case, bench_main, interleaved_seconds

# (model, image size, batch, rounds) at full size; tiny keeps the models and shrinks batch and rounds
SETTINGS = (("mlp", 16, 256, 15), ("unet", 32, 16, 7))
TINY_SETTINGS = (("mlp", 16, 4, 1), ("unet", 16, 2, 1))


def _model(name: str, size: int) -> torch.nn.Module:
    if name == "mlp":
        return MLPDenoiser(image_size=size, hidden=512).eval()
    return UNetDenoiser(image_size=size, channels=1, block_out_channels=(32, 64, 64, 64)).eval()


def run(tiny: bool) -> Benchmark:
    """Per setting and attack, the filtered and the plain attack interleaved round by round after an untimed
    warm-up call of each."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    a_bar = alphas_cumprod().float()
    cases = []
    for name, size, batch, rounds in TINY_SETTINGS if tiny else SETTINGS:
        model = _model(name, size)
        images = torch.rand(batch, 1, size, size)
        tau = max(1, round(5 * size / 32))  # the official tau = 5 at 32 x 32, scaled
        for attack in ATTACKS:
            with_filter = partial(attack_scores, attack, model, images, a_bar, tau=tau)
            plain = partial(attack_scores, attack, model, images, a_bar, use_filter=False)
            with_filter(), plain()  # warm-up: first-call costs stay untimed
            ours, baseline = interleaved_seconds([with_filter, plain], rounds, time.process_time)
            label = f"{attack}, batch {batch} of 1x{size}x{size}, tau={tau}"
            cases.append(Case(label, f"{name} denoiser, attack without the filter", ours, baseline))
    return Benchmark(
        "each attack with the high-frequency filter (s = 0.2) vs the same attack without it, CPU seconds, one thread",
        tuple(cases),
        notes="ratio = time without / time with the filter; settings: the quick MLP denoiser and a small diffusers "
        "UNet2DModel (32/64/64/64 channels)",
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("fremia", run))
