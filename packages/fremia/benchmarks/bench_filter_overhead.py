"""Time of each attack with the high-frequency filter relative to without it (the paper: "no additional
time cost"): same model, same images, both variants interleaved in one process, median of rounds.

Run: python packages/fremia/benchmarks/bench_filter_overhead.py [--model unet] [--size 32] [--batch 256] [--rounds 15]
"""

import argparse
import time

import torch
from icml26_fremia import ATTACKS, MLPDenoiser, UNetDenoiser, alphas_cumprod, attack_scores


def interleaved_medians(fns, rounds: int) -> list[float]:
    """Median seconds of each function, called in turn within every round (load drifts hit all alike)."""
    times = [[] for _ in fns]
    for _ in range(rounds):
        for fn, bucket in zip(fns, times, strict=True):
            start = time.perf_counter()
            fn()
            bucket.append(time.perf_counter() - start)
    return [sorted(bucket)[len(bucket) // 2] for bucket in times]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=16)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--model", choices=("mlp", "unet"), default="mlp")
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    if args.model == "mlp":
        model = MLPDenoiser(image_size=args.size, hidden=512).eval()
    else:  # a small diffusers UNet2DModel (the paper's attacked models are 35.7M-parameter UNets)
        model = UNetDenoiser(image_size=args.size, channels=1, block_out_channels=(32, 64, 64, 64)).eval()
    images = torch.rand(args.batch, 1, args.size, args.size)
    a_bar = alphas_cumprod().float()
    tau = max(1, round(5 * args.size / 32))  # the official tau = 5 at 32 x 32, scaled
    print(f"batch {args.batch} of 1x{args.size}x{args.size}, {args.model} denoiser, tau={tau}, s=0.2, 1 thread")
    print("| attack | without filter | with filter | ratio |")
    print("|---|---|---|---|")
    for attack in ATTACKS:
        plain, filtered = interleaved_medians(
            [
                lambda a=attack: attack_scores(a, model, images, a_bar, use_filter=False),
                lambda a=attack: attack_scores(a, model, images, a_bar, tau=tau),
            ],
            args.rounds,
        )
        print(f"| {attack} | {plain * 1e3:.1f} ms | {filtered * 1e3:.1f} ms | {filtered / plain:.2f} |")


if __name__ == "__main__":
    main()
