"""Peak optimizer-state bytes, peak gradient bytes and time per step of Think-Touch vs full fine-tuning.

A residual MLP (784 -> width, `depth` blocks, 10 classes; G = 2 depth + 2 groups) on random batches,
AdamW, one torch thread. Every method is stepped in the same process, interleaved round by round, and the
median time over rounds is reported, so background load affects them alike. Memory is what the optimizer
and the parameters' .grad actually hold (bytes of the tensors), maximised over the run.

    python packages/think-touch/benchmarks/bench_memory_step.py [--width 512] [--depth 8] [--k 2]
"""

import argparse
import statistics
import time

import torch
from icml26_think_touch import ResidualMLP, ThinkTouch, groups_by_module, make_strategy
from torch.nn import functional as F


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=5, help="steps per round")
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    x, y = torch.randn(args.batch, 784), torch.randint(0, 10, (args.batch,))
    base = ResidualMLP(784, 10, args.width, args.depth)
    G = 2 * args.depth + 2
    methods = {"full": ("full", G), "bandit": ("bandit", args.k), "random": ("random", args.k)}
    methods["greedy"] = ("greedy", args.k)
    runs = {}
    for label, (name, k) in methods.items():
        model = ResidualMLP(784, 10, args.width, args.depth)
        model.load_state_dict(base.state_dict())
        _, groups = groups_by_module(model)
        runs[label] = (model, ThinkTouch(groups, make_strategy(name, G, k), lr=1e-4, seed=0))
    times: dict[str, list[float]] = {label: [] for label in runs}
    for r in range(args.rounds + 1):
        for label, (model, optimizer) in runs.items():
            start = time.perf_counter()
            for _ in range(args.steps):
                optimizer.step(lambda model=model: F.cross_entropy(model(x), y))
            if r:  # round 0 is the warm-up
                times[label].append((time.perf_counter() - start) / args.steps)
    n_params = sum(p.numel() for p in base.parameters())
    full_state, full_grad = runs["full"][1].peak_state_bytes, runs["full"][1].peak_grad_bytes
    full_time = statistics.median(times["full"])
    print(f"torch {torch.__version__}, 1 thread, {n_params} parameters in G={G} groups, k={args.k}, batch {args.batch}")
    print(f"{'method':<8} {'state MB':>9} {'ratio':>6} {'grad MB':>8} {'ratio':>6} {'ms/step':>8} {'ratio':>6}")
    for label, (_, optimizer) in runs.items():
        median = statistics.median(times[label])
        print(
            f"{label:<8} {optimizer.peak_state_bytes / 1e6:9.2f} {optimizer.peak_state_bytes / full_state:6.3f}"
            f" {optimizer.peak_grad_bytes / 1e6:8.2f} {optimizer.peak_grad_bytes / full_grad:6.3f}"
            f" {1000 * median:8.2f} {median / full_time:6.2f}"
        )


if __name__ == "__main__":
    main()
