"""Real pipeline: tokens/s and per-layer expert-load latency of ZipMoE vs the baselines, as ratios.

One process, one torch thread; every engine decodes the same held-out sequences from the same offload
file on the same emulated storage, at the same memory budget (the quick config's settings). Run:
``python packages/zipmoe/benchmarks/bench_pipeline.py [--seed 0] [--config quick]``.
"""

import argparse
import tempfile
from pathlib import Path

from icml26_zipmoe.baselines import BASELINES
from icml26_zipmoe.experiment import CONFIGS
from icml26_zipmoe.reproduction import measure_seed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--config", default="quick", choices=sorted(CONFIGS))
    args = parser.parse_args()
    config = CONFIGS[args.config]
    with tempfile.TemporaryDirectory(prefix="zipmoe-bench-") as tmp:
        out = measure_seed(config, args.seed, Path(tmp))
    zip_latency, zip_tps = out["pipeline_zipmoe_latency_ms"], out["pipeline_zipmoe_tokens_per_s"]
    print(f"{args.config} config, seed {args.seed}, budget {config.budget_fraction:g} of a layer's bf16 experts,")
    print(f"storage {config.bandwidth / 1e9:g} GB/s + {config.latency * 1e6:g} us/read, {config.workers} workers")
    print(
        f"{'engine':10s} {'load ms/layer':>14s} {'tokens/s':>10s} "
        f"{'ZipMoE latency ratio':>21s} {'ZipMoE speed-up':>16s}"
    )
    print(f"{'zipmoe':10s} {zip_latency:14.3f} {zip_tps:10.1f} {'1.00':>21s} {'1.00':>16s}")
    for name in BASELINES:
        latency, tps = out[f"pipeline_{name}_latency_ms"], out[f"pipeline_{name}_tokens_per_s"]
        print(f"{name:10s} {latency:14.3f} {tps:10.1f} {zip_latency / latency:21.2f} {zip_tps / tps:16.2f}")
    print(f"resident (all experts in memory): {out['resident_tokens_per_s_cpu']:.1f} tokens per CPU second")


if __name__ == "__main__":
    main()
