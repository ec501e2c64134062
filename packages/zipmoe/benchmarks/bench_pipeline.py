"""Real pipeline: tokens/s and per-layer expert-load latency of ZipMoE vs the baselines, as ratios.

One process, one torch thread; every engine decodes the same held-out sequences from the same offload
file on the same emulated storage, at the same memory budget (the chosen config's settings). ``--experts tiny``
serves the TinyMoE's 131 kB experts; ``--experts smollm2`` (needs the ``llm`` extra) serves SwiGLU experts made of
SmolLM2-135M's MLP matrices, 5.3 MB each in bf16 (the paper's size), routed by the TinyMoE's trace. Run:
``python packages/zipmoe/benchmarks/bench_pipeline.py [--seed 0] [--config quick] [--experts smollm2]``.
"""

import argparse
import dataclasses
import tempfile
from pathlib import Path

from icml26_zipmoe.baselines import BASELINES
from icml26_zipmoe.experiment import CONFIGS
from icml26_zipmoe.llm_weights import load_llm
from icml26_zipmoe.reproduction import llm_expert_store, measure_seed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--config", default="quick", choices=sorted(CONFIGS))
    parser.add_argument("--experts", default="tiny", choices=("tiny", "smollm2"))
    args = parser.parse_args()
    config = dataclasses.replace(CONFIGS[args.config], llm_pipeline=args.experts == "smollm2")
    with tempfile.TemporaryDirectory(prefix="zipmoe-bench-") as tmp:
        store = llm_expert_store(load_llm("smollm2").state_dict(), config, Path(tmp)) if config.llm_pipeline else None
        out = measure_seed(config, args.seed, Path(tmp), store)
    prefix = "llm_pipeline" if config.llm_pipeline else "pipeline"
    zip_latency, zip_tps = out[f"{prefix}_zipmoe_latency_ms"], out[f"{prefix}_zipmoe_tokens_per_s"]
    print(f"{args.config} config, {args.experts} experts, seed {args.seed}, budget {config.budget_fraction:g}")
    print(f"storage {config.bandwidth / 1e9:g} GB/s + {config.latency * 1e6:g} us/read, {config.workers} workers")
    print(
        f"{'engine':10s} {'load ms/layer':>14s} {'tokens/s':>10s} "
        f"{'ZipMoE latency ratio':>21s} {'ZipMoE speed-up':>16s}"
    )
    print(f"{'zipmoe':10s} {zip_latency:14.3f} {zip_tps:10.1f} {'1.00':>21s} {'1.00':>16s}")
    for name in BASELINES:
        latency, tps = out[f"{prefix}_{name}_latency_ms"], out[f"{prefix}_{name}_tokens_per_s"]
        print(f"{name:10s} {latency:14.3f} {tps:10.1f} {zip_latency / latency:21.2f} {zip_tps / tps:16.2f}")


if __name__ == "__main__":
    main()
