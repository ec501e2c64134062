"""Time per training step (forward, backward, Adam) of every Ultra neuron vs every baseline neuron.

Fashion-MNIST-sized inputs (batch 128, 784 features, rate code), one hidden layer of 64, T in {1, 4}, one
torch thread. All eight neurons are timed in the same process, interleaved round by round (5 steps a round,
after 2 warm-up steps), and the median over 30 rounds is reported, so background load affects every neuron
alike. Ratios: the baseline neuron's seconds per step / the Ultra neuron's (< 1: the Ultra neuron is slower).

Run: python packages/ultralif/benchmarks/bench_step_time.py [--tiny] [--out results]
"""

from __future__ import annotations

import torch
from icml26_shared.bench import Benchmark, Case, bench_main, interleaved_seconds
from icml26_ultralif import NEURONS, SNN, sparse_loss
from icml26_ultralif.networks import ULTRA

FULL = {"T": (1, 4), "batch": 128, "rounds": 30, "steps": 5, "warmup": 2}
TINY = {"T": (1,), "batch": 8, "rounds": 1, "steps": 1, "warmup": 1}
BASELINES = tuple(name for name in NEURONS if name not in ULTRA)


def train_steps(model: SNN, x: torch.Tensor, y: torch.Tensor, optimizer, steps: int) -> None:
    """``steps`` training steps on the sparsity loss (lambda = 0.1)."""
    for _ in range(steps):
        loss = sparse_loss(model(x), y, model.spike_rate, 0.1)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def run(tiny: bool) -> Benchmark:
    """Per T: median seconds per step of each neuron, interleaved; every Ultra neuron against every baseline."""
    size = TINY if tiny else FULL
    torch.set_num_threads(1)
    torch.manual_seed(0)
    x, y = torch.rand(size["batch"], 784), torch.randint(0, 10, (size["batch"],))
    cases = []
    for T in size["T"]:
        steps = []
        for name in NEURONS:
            model = SNN(name, 784, 10, 64, 1, T, "rate")
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
            train_steps(model, x, y, optimizer, size["warmup"])
            steps.append(lambda model=model, optimizer=optimizer: train_steps(model, x, y, optimizer, size["steps"]))
        medians = interleaved_seconds(steps, size["rounds"])
        seconds = {name: t / size["steps"] for name, t in zip(NEURONS, medians, strict=True)}
        cases += [Case(f"{ultra}, T={T}", base, seconds[ultra], seconds[base]) for ultra in ULTRA for base in BASELINES]
    return Benchmark(
        f"Ultra neurons vs baseline neurons, seconds per training step (batch {size['batch']}, 784 -> 64 -> 10, "
        f"rate code, Adam, torch {torch.__version__}), interleaved, median of {size['rounds']} rounds",
        tuple(cases),
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("ultralif", run))
