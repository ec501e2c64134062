"""Tokens per CPU-second and peak memory of one layer (forward + backward) vs sequence length.

One layer (d_model 64, 4 heads of 16, chunk 64 for Atlas and DeltaNet, Atlas with window 4, degree-2
features and NS5), batch 1, one thread. Rules: Atlas; DeltaNet; softmax attention through PyTorch's
fused (flash) CPU kernel; and softmax attention forced onto the materialised T x T path (what 0.1.1's
layer got by accident), skipped above ``--max-materialised`` tokens. Every (rule, T) runs in a fresh
process. Throughput is tokens per CPU-second of the process (single-threaded, so it equals wall-clock
throughput on an idle core and is less disturbed by other jobs); peak memory is the most bytes
allocated at once during one forward + backward, from the allocation events of torch's CPU profiler
(``profile_memory=True``; tracemalloc does not see torch's allocator). Ratios are Atlas over each
baseline at the same T; the crossover is the T where Atlas becomes faster than softmax attention, or,
past the longest T, the extrapolation with softmax cost ~ T^2 and Atlas cost ~ T.

    python packages/atlas/benchmarks/bench_throughput.py [--lengths 1024 2048 4096 8192 16384]
"""

import argparse
import multiprocessing
import time

RULES = ("atlas", "deltanet", "softmax", "softmax_materialised")
WIDTH, HEADS, HEAD_DIM, CHUNK = 64, 4, 16, 64


def one_run(rule: str, T: int, min_seconds: float) -> tuple[float, float]:
    """(tokens per CPU-second, peak allocated MiB) of forward + backward on a (1, T, 64) input."""
    import contextlib

    import torch
    from icml26_atlas.layers import MemoryLayer
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.profiler import ProfilerActivity, profile

    torch.set_num_threads(1)
    torch.manual_seed(0)
    materialised = rule == "softmax_materialised"
    layer = MemoryLayer(WIDTH, HEADS, HEAD_DIM, rule="softmax" if materialised else rule, chunk_size=CHUNK)
    kernel = sdpa_kernel(SDPBackend.MATH) if materialised else contextlib.nullcontext()
    x = torch.randn(1, T, WIDTH, requires_grad=True)
    with kernel:
        layer(x[:, :CHUNK]).sum().backward()  # warm-up
        runs, start = 0, time.process_time()
        while runs == 0 or time.process_time() - start < min_seconds:
            layer(x).sum().backward()
            runs += 1
        speed = runs * T / (time.process_time() - start)
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            layer(x).sum().backward()
    events = sorted(
        (event.start_ns(), event.nbytes())
        for event in prof.profiler.kineto_results.events()
        if event.name() == "[memory]"
    )
    current = peak = 0
    for _, nbytes in events:
        current += nbytes
        peak = max(peak, current)
    return speed, peak / 2**20


def crossover(lengths: list[int], ratios: list[float]) -> str:
    """The first T where Atlas is at least as fast, else the T^2-vs-T extrapolation from the longest T."""
    for T, ratio in zip(lengths, ratios, strict=True):
        if ratio >= 1:
            return f"reached at T = {T} (speed ratio {ratio:.2f})"
    T, ratio = lengths[-1], ratios[-1]
    return f"not reached up to T = {T} (ratio {ratio:.2f}); ratio ~ T extrapolates to T ~ {T / ratio:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[1024, 2048, 4096, 8192, 16384])
    parser.add_argument("--min-seconds", type=float, default=1.0, help="CPU seconds of timed runs per point")
    parser.add_argument("--max-materialised", type=int, default=8192, help="longest T for the T x T path")
    args = parser.parse_args()
    context = multiprocessing.get_context("spawn")
    print(f"one layer, d_model {WIDTH}, {HEADS} heads x {HEAD_DIM}, chunk {CHUNK}, forward+backward, CPU, 1 thread")
    print(f"{'T':>6} {'rule':<21} {'tokens/cpu-s':>12} {'peak MiB':>9}")
    results: dict[str, dict[int, tuple[float, float]]] = {rule: {} for rule in RULES}
    for T in args.lengths:
        for rule in RULES:
            if rule == "softmax_materialised" and T > args.max_materialised:
                continue
            with context.Pool(1) as pool:
                results[rule][T] = pool.apply(one_run, (rule, T, args.min_seconds))
            speed, peak = results[rule][T]
            print(f"{T:6d} {rule:<21} {speed:12.0f} {peak:9.1f}", flush=True)
    print("\nAtlas / baseline at the same T: speed ratio (> 1: Atlas faster), peak-memory ratio (< 1: Atlas smaller)")
    for rule in RULES[1:]:
        lengths = sorted(results[rule])
        speed_ratios = [results["atlas"][T][0] / results[rule][T][0] for T in lengths]
        memory_ratios = [results["atlas"][T][1] / results[rule][T][1] for T in lengths]
        cells = "  ".join(f"{T}: {s:.2f}x / {m:.1f}x" for T, s, m in zip(lengths, speed_ratios, memory_ratios))
        print(f"vs {rule:<21} {cells}")
        if rule.startswith("softmax"):
            print(f"   crossover with {rule}: {crossover(lengths, speed_ratios)}")


if __name__ == "__main__":
    main()
