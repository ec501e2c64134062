"""Tokens per CPU-second and peak memory of one layer (forward + backward) vs sequence length.

One layer (d_model 64, 4 heads of 16, chunk 64 for Atlas and DeltaNet, Atlas with window 4, degree-2
features and NS5), batch 1, one thread. Rules: Atlas; DeltaNet; softmax attention through PyTorch's
fused (flash) CPU kernel; and softmax attention forced onto the materialised T x T path (what 0.1.1's
layer got by accident), skipped above ``--max-materialised`` tokens. Every (rule, T) runs in a fresh
process. Throughput is tokens per CPU-second of the process (single-threaded, so it equals wall-clock
throughput on an idle core and is less disturbed by other jobs); peak memory is the most bytes
allocated at once during one forward + backward, from the allocation events of torch's CPU profiler
(``profile_memory=True``; tracemalloc does not see torch's allocator). Ratios are Atlas over each
baseline at the same T (> 1: Atlas better); the crossover is the T where Atlas becomes faster than softmax
attention, or, past the longest T, the extrapolation with softmax cost ~ T^2 and Atlas cost ~ T.

Run: python packages/atlas/benchmarks/bench_throughput.py [--tiny] [--out results]
"""

from __future__ import annotations

import multiprocessing
import time

from icml26_shared.bench import Benchmark, Case, bench_main

RULES = ("atlas", "deltanet", "softmax", "softmax_materialised")
LENGTHS, TINY_LENGTHS = (1024, 2048, 4096, 8192, 16384), (128,)
MAX_MATERIALISED = 8192  # longest T for the T x T path
WIDTH, HEADS, HEAD_DIM, CHUNK = 64, 4, 16, 64


def one_run(rule: str, T: int, min_seconds: float) -> tuple[float, float]:
    """(tokens per CPU-second, peak allocated bytes) of forward + backward on a (1, T, 64) input."""
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
    return speed, float(peak)


def crossover(lengths: list[int], ratios: list[float]) -> str:
    """The first T where Atlas is at least as fast, else the T^2-vs-T extrapolation from the longest T."""
    for T, ratio in zip(lengths, ratios, strict=True):
        if ratio >= 1:
            return f"reached at T = {T} (speed ratio {ratio:.2f})"
    T, ratio = lengths[-1], ratios[-1]
    return f"not reached up to T = {T} (ratio {ratio:.2f}); ratio ~ T extrapolates to T ~ {T / ratio:.0f}"


def run(tiny: bool) -> Benchmark:
    """Every (rule, T) in a fresh process (fresh allocator and profiler); Atlas against each baseline in speed and
    in peak memory."""
    lengths, min_seconds = (TINY_LENGTHS, 0.0) if tiny else (LENGTHS, 1.0)
    context = multiprocessing.get_context("spawn")
    results: dict[str, dict[int, tuple[float, float]]] = {rule: {} for rule in RULES}
    for T in lengths:
        for rule in RULES:
            if tiny:  # in this process: the tests load this file under another name, which spawn cannot import
                results[rule][T] = one_run(rule, T, min_seconds)
            elif rule != "softmax_materialised" or T <= MAX_MATERIALISED:
                with context.Pool(1) as pool:
                    results[rule][T] = pool.apply(one_run, (rule, T, min_seconds))
    cases, notes = [], []
    for rule in RULES[1:]:
        for T in sorted(results[rule]):
            (speed, peak), (base_speed, base_peak) = results["atlas"][T], results[rule][T]
            cases.append(Case(f"T={T}, tokens per CPU-s", rule, speed, base_speed, "tokens/s"))
            cases.append(Case(f"T={T}, peak memory", rule, peak, base_peak, "B"))
        if rule.startswith("softmax"):
            ratios = [results["atlas"][T][0] / results[rule][T][0] for T in sorted(results[rule])]
            notes.append(f"crossover with {rule}: {crossover(sorted(results[rule]), ratios)}")
    return Benchmark(
        f"one Atlas layer vs DeltaNet, flash softmax and materialised T x T softmax attention, forward + backward, "
        f"d_model {WIDTH}, {HEADS} heads x {HEAD_DIM}, chunk {CHUNK}, batch 1, one thread, T = "
        f"{', '.join(map(str, lengths))}",
        tuple(cases),
        "; ".join(notes),
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("atlas", run))
