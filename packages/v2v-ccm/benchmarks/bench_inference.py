"""Inference cost vs keep ratio: forward time of the MLLM on the tokens that survive pruning, and bytes sent.

Prints, for each keep ratio, the time per batch relative to dense cooperation measured in the same run (the
kept tokens are physically removed, as a deployment would do) and CCM's bytes relative to dense.
Usage: python packages/v2v-ccm/benchmarks/bench_inference.py [--grid 32] [--repeats 20]
"""

import argparse
import time

import numpy as np
import torch
from icml26_v2v_ccm import CooperativeQA, Inputs, batch_inputs, make_dataset
from icml26_v2v_ccm.method import dense_bytes, keep_count, message_bytes, request_bytes


def forward_seconds(model, inputs: Inputs, k: int, repeats: int) -> float:
    """Median seconds of one forward pass keeping the first k tokens of every CAV (all of the ego's)."""
    n, a = inputs.visual.shape[2], inputs.visual.shape[1]
    visual = torch.cat([inputs.visual[:, 0], inputs.visual[:, 1:, :k].flatten(1, 2)], 1)[:, None]
    index = [0, 1, *range(2, 2 + n)] + [2 + n * i + j for i in range(1, a) for j in range(k)]
    pruned = Inputs(inputs.question, visual, inputs.positions[:, index])
    keep = torch.ones(pruned.visual.shape[:3], dtype=torch.bool)
    times = []
    with torch.no_grad():
        for _ in range(repeats):
            start = time.perf_counter()
            model(pruned, keep)
            times.append(time.perf_counter() - start)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--grid", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(1)
    data = make_dataset(64, seed=0, grid=args.grid, patch=4, lidar_range=args.grid * 0.6)
    model = CooperativeQA(data.tokens.shape[-1], grid=args.grid).eval()
    inputs, _ = batch_inputs(model, data, np.arange(64), np.arange(64) % 4)
    n, cavs = data.tokens.shape[2], data.tokens.shape[1] - 1
    dense_t = forward_seconds(model, inputs, n, args.repeats)
    dense_b = cavs * dense_bytes(n, model.d)
    print(f"grid {args.grid}: {n} tokens per agent, {cavs} CAVs; dense forward {1e3 * dense_t:.1f} ms / 64 questions")
    for rho in (0.125, 0.25, 0.5, 1.0):
        k = keep_count(rho, n)
        t = forward_seconds(model, inputs, k, args.repeats)
        sent = cavs * (message_bytes(k, n, model.d) + request_bytes(16, n))
        print(f"rho {rho:5}: time / dense {t / dense_t:.2f}, CCM bytes / dense {sent / dense_b:.3f}")


if __name__ == "__main__":
    main()
