"""Time per training step (forward, backward, Adam) of every neuron, as a ratio to the surrogate LIF.

Fashion-MNIST-sized inputs (batch 128, 784 features, rate code), one hidden layer of 64, T in {1, 4}.
All neurons are timed in the same process, interleaved round by round, and the median over rounds is
reported, so background load affects every neuron alike.

    python packages/ultralif/benchmarks/bench_step_time.py [--rounds 30] [--T 1 4]
"""

import argparse
import statistics
import time

import torch
from icml26_ultralif import NEURONS, SNN, sparse_loss


def step_seconds(model: SNN, x: torch.Tensor, y: torch.Tensor, optimizer, steps: int) -> float:
    """Mean wall seconds of ``steps`` training steps."""
    start = time.perf_counter()
    for _ in range(steps):
        loss = sparse_loss(model(x), y, model.spike_rate, 0.1)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return (time.perf_counter() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--steps", type=int, default=5, help="steps per round")
    parser.add_argument("--T", type=int, nargs="+", default=[1, 4])
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    x, y = torch.rand(128, 784), torch.randint(0, 10, (128,))
    print(f"torch {torch.__version__}, 1 thread, batch 128, 784 -> 64 -> 10, median of {args.rounds} rounds")
    for T in args.T:
        models = {name: SNN(name, 784, 10, 64, 1, T, "rate") for name in NEURONS}
        optimizers = {name: torch.optim.Adam(m.parameters(), lr=1e-3) for name, m in models.items()}
        times: dict[str, list[float]] = {name: [] for name in NEURONS}
        for name in NEURONS:  # warm-up
            step_seconds(models[name], x, y, optimizers[name], 2)
        for _ in range(args.rounds):
            for name in NEURONS:
                times[name].append(step_seconds(models[name], x, y, optimizers[name], args.steps))
        lif = statistics.median(times["LIF"])
        print(f"\nT={T}: {'neuron':<11} {'ms/step':>8} {'ratio vs LIF':>13}")
        for name in NEURONS:
            median = statistics.median(times[name])
            print(f"     {name:<11} {1000 * median:8.2f} {median / lif:13.2f}")


if __name__ == "__main__":
    main()
