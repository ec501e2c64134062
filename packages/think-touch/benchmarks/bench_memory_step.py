"""Peak optimizer-state bytes, peak gradient bytes and time per step of Think-Touch vs full fine-tuning.

A residual MLP (784 -> 512, 8 blocks, 10 classes: G = 2 depth + 2 = 18 groups) on a random batch of 128,
AdamW, one torch thread; Think-Touch updates k = 2 groups per step, chosen by its bandit, uniformly at random,
or by the greedy oracle. Every method is stepped in the same process, interleaved round by round (5 steps a
round, after a warm-up round), and the median time over 15 rounds is reported, so background load affects them
alike. Memory is what the optimizer and the parameters' .grad actually hold (bytes of the tensors), maximised
over the run. Ratios: full fine-tuning's bytes or seconds / the selection's (> 1: Think-Touch is cheaper).

Run: python packages/think-touch/benchmarks/bench_memory_step.py [--tiny] [--out results]
"""

from __future__ import annotations

import torch
from icml26_shared.bench import Benchmark, Case, bench_main, interleaved_seconds
from icml26_think_touch import ResidualMLP, ThinkTouch, groups_by_module, make_strategy
from torch.nn import functional as F

FULL = {"width": 512, "depth": 8, "k": 2, "batch": 128, "rounds": 15, "steps": 5}
TINY = {"width": 16, "depth": 1, "k": 1, "batch": 8, "rounds": 1, "steps": 1}
SELECTIONS = {"Think-Touch bandit": "bandit", "random k": "random", "greedy oracle": "greedy"}


def run(tiny: bool) -> Benchmark:
    """Step full fine-tuning and each selection from the same weights; bytes and time against full FT."""
    size = TINY if tiny else FULL
    torch.set_num_threads(1)
    torch.manual_seed(0)
    x, y = torch.randn(size["batch"], 784), torch.randint(0, 10, (size["batch"],))
    base = ResidualMLP(784, 10, size["width"], size["depth"])
    G = 2 * size["depth"] + 2
    methods = {"full": ("full", G)} | {label: (name, size["k"]) for label, name in SELECTIONS.items()}
    optimizers, steps = {}, []
    for label, (name, k) in methods.items():
        model = ResidualMLP(784, 10, size["width"], size["depth"])
        model.load_state_dict(base.state_dict())
        _, groups = groups_by_module(model)
        optimizers[label] = optimizer = ThinkTouch(groups, make_strategy(name, G, k), lr=1e-4, seed=0)

        def step(model=model, optimizer=optimizer) -> None:
            for _ in range(size["steps"]):
                optimizer.step(lambda: F.cross_entropy(model(x), y))

        step()  # the warm-up round
        steps.append(step)
    seconds = {
        label: t / size["steps"] for label, t in zip(methods, interleaved_seconds(steps, size["rounds"]), strict=True)
    }
    full = optimizers["full"]
    cases = []
    for label in SELECTIONS:
        optimizer = optimizers[label]
        cases += [
            Case(label, "full FT (AdamW state)", optimizer.peak_state_bytes, full.peak_state_bytes, "B"),
            Case(label, "full FT (gradients)", optimizer.peak_grad_bytes, full.peak_grad_bytes, "B"),
            Case(label, "full FT (time per step)", seconds[label], seconds["full"]),
        ]
    n_params = sum(p.numel() for p in base.parameters())
    return Benchmark(
        f"Think-Touch (k={size['k']} of G={G} groups) vs full fine-tuning, peak AdamW state and gradient bytes and "
        f"seconds per step of a {n_params}-parameter residual MLP, batch {size['batch']}, torch "
        f"{torch.__version__}, interleaved, median of {size['rounds']} rounds",
        tuple(cases),
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("think-touch", run))
