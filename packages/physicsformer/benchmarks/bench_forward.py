"""Model complexity (the paper benchmarks it): parameters and CPU time per forward (+ backward) pass of every
model on a Beijing-sized batch (12 stations x 6 variables, 48 h in, 72 h out), as ratios to DLinear measured in
the same run. Usage: python packages/physicsformer/benchmarks/bench_forward.py"""

import time

import numpy as np
import torch
from icml26_physicsformer import DLinear, PatchTST, PhysicsFormer, TransformerOnly
from icml26_physicsformer.data import BEIJING_STATIONS, project_km

REPEATS = 10


def seconds(model, x, backward):
    for _ in range(2):  # warm-up
        model(x).square().mean().backward() if backward else model(x)
    start = time.perf_counter()
    for _ in range(REPEATS):
        if backward:
            model(x).square().mean().backward()
        else:
            with torch.no_grad():
                model(x)
    return (time.perf_counter() - start) / REPEATS


def main():
    torch.set_num_threads(1)
    torch.manual_seed(0)
    coords = project_km(np.array(list(BEIJING_STATIONS.values())))
    models = {
        "dlinear": DLinear(48, 72),
        "transformer_only": TransformerOnly(48, 72),
        "patchtst": PatchTST(48, 72, 72),
        "physicsformer": PhysicsFormer(coords, 48, 72, 6, 1, (4, 5)),
    }
    x = 0.5 * torch.randn(16, 48, 12, 6)
    times = {name: (seconds(model, x, False), seconds(model, x, True)) for name, model in models.items()}
    base_f, base_fb = times["dlinear"]
    print(f"{'model':<18}{'params':>9}{'forward ms':>12}{'x DLinear':>11}{'fwd+bwd ms':>12}{'x DLinear':>11}")
    for name, model in models.items():
        n = sum(p.numel() for p in model.parameters())
        f, fb = times[name]
        print(f"{name:<18}{n:>9}{1e3 * f:>12.2f}{f / base_f:>11.1f}{1e3 * fb:>12.2f}{fb / base_fb:>11.1f}")


if __name__ == "__main__":
    main()
