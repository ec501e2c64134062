"""Real pipeline: per-layer expert-load latency and tokens/s of ZipMoE against no cache, LRU and LFU.

One process, one torch thread; every engine decodes the same held-out sequences from the same offload file on
the same emulated storage, at the same memory budget (the quick config's settings), in one run. Two expert
sizes: the TinyMoE's 131 kB experts, and (with the ``llm`` extra) SwiGLU experts made of SmolLM2-135M's MLP
matrices, 5.3 MB each in bf16 (the paper's size), routed by the TinyMoE's trace. Ratios > 1: ZipMoE better.

Run: python packages/zipmoe/benchmarks/bench_pipeline.py [--tiny] [--out results]
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from icml26_shared.bench import Benchmark, Case, bench_main
from icml26_zipmoe.baselines import BASELINES
from icml26_zipmoe.experiment import CONFIGS
from icml26_zipmoe.llm_weights import load_llm
from icml26_zipmoe.reproduction import llm_expert_store, measure_seed

SEED = 0


def cases(config, experts: str) -> list[Case]:
    """One seed of the pipeline with ``experts`` ("TinyMoE" or "SmolLM2-MLP"): ZipMoE against each baseline."""
    with tempfile.TemporaryDirectory(prefix="zipmoe-bench-") as tmp:
        store = llm_expert_store(load_llm("smollm2").state_dict(), config, Path(tmp)) if config.llm_pipeline else None
        out = measure_seed(config, SEED, Path(tmp), store)
    prefix = "llm_pipeline" if config.llm_pipeline else "pipeline"
    ours = {unit: out[f"{prefix}_zipmoe_{key}"] for unit, key in (("ms", "latency_ms"), ("tokens/s", "tokens_per_s"))}
    return [
        Case(f"{experts} experts, {what}", name, ours[unit], out[f"{prefix}_{name}_{key}"], unit)
        for name in BASELINES
        for what, unit, key in (("load ms per layer", "ms", "latency_ms"), ("tokens/s", "tokens/s", "tokens_per_s"))
    ]


def run(tiny: bool) -> Benchmark:
    """The TinyMoE pipeline always; the SmolLM2-expert pipeline when not tiny and the ``llm`` extra is there."""
    if tiny:
        config = dataclasses.replace(CONFIGS["smoke"], serve_steps=2, train_steps=1, llm_pipeline_steps=1)
        return Benchmark("ZipMoE's real pipeline vs no cache / LRU / LFU, tiny", tuple(cases(config, "TinyMoE")))
    config = CONFIGS["quick"]
    measured, notes = cases(config, "TinyMoE"), ""
    try:
        measured += cases(dataclasses.replace(config, llm_pipeline=True), "SmolLM2-MLP")
    except (ImportError, FileNotFoundError) as err:  # the llm extra is optional: say so in the record
        notes = f"SmolLM2-MLP experts not measured: {err}"
    return Benchmark(
        f"ZipMoE's real threaded pipeline vs no cache / LRU / LFU at equal memory (budget "
        f"{config.budget_fraction:g}), storage {config.bandwidth / 1e9:g} GB/s + {config.latency * 1e6:g} us/read, "
        f"seed {SEED}, one run",
        tuple(measured),
        notes,
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("zipmoe", run))
