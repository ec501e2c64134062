"""Tokens per second and peak memory of one layer (forward + backward) vs sequence length.

Atlas's memory is linear in T (a fixed-size state per chunk); softmax attention is quadratic. Every
(rule, T) runs in a fresh process, so the peak resident memory (CPU) or peak allocated memory (CUDA)
belongs to that run alone; ratios are against softmax attention at the same T, measured in this run.

    python packages/atlas/benchmarks/bench_throughput.py [--lengths 512 1024 2048 4096] [--device cpu]
"""

import argparse
import multiprocessing
import resource
import time

RULES = ("softmax", "linear_attention", "deltanet", "atlas")


def one_run(rule: str, T: int, device: str, repeats: int) -> tuple[float, float]:
    """(tokens per second, peak memory in MiB above the warm-up) of forward + backward on (1, T, 64)."""
    import torch
    from icml26_atlas.layers import MemoryLayer

    torch.set_num_threads(1)
    torch.manual_seed(0)
    layer = MemoryLayer(64, heads=4, head_dim=16, rule=rule, chunk_size=64).to(device)
    layer(torch.randn(1, 64, 64, device=device)).sum().backward()  # warm-up
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    else:
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    x = torch.randn(1, T, 64, device=device, requires_grad=True)
    start = time.perf_counter()
    for _ in range(repeats):
        layer(x).sum().backward()
    if device == "cuda":
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - base
    else:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base
    return repeats * T / (time.perf_counter() - start), peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[512, 1024, 2048, 4096])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    context = multiprocessing.get_context("spawn")
    print(f"one layer, d_model 64, 4 heads x 16, chunk 64, forward+backward, {args.device}, 1 thread")
    print(f"{'T':>6} {'rule':<17} {'tokens/s':>10} {'peak MiB':>9} {'speed vs softmax':>17} {'memory vs softmax':>18}")
    for T in args.lengths:
        results = {}
        for rule in RULES:
            with context.Pool(1) as pool:
                results[rule] = pool.apply(one_run, (rule, T, args.device, args.repeats))
        speed, memory = results["softmax"]
        for rule, (tps, peak) in results.items():
            print(f"{T:6d} {rule:<17} {tps:10.0f} {peak:9.1f} {tps / speed:17.2f} {peak / max(memory, 1e-9):18.2f}")


if __name__ == "__main__":
    main()
