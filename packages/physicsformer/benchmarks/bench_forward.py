"""Model complexity (the paper benchmarks it): PhysicsFormer's CPU time per forward and per forward + backward
pass against each baseline (DLinear, the Transformer alone, PatchTST) on a Beijing-sized batch (16 windows of
12 stations x 6 variables, 48 h in, 72 h out), measured in the same run; parameter counts in the notes.
One torch thread, median of interleaved rounds after a warm-up.

Run: python packages/physicsformer/benchmarks/bench_forward.py [--tiny] [--out results]
"""

from __future__ import annotations

from functools import partial

import numpy as np
import torch
from icml26_physicsformer import DLinear, PatchTST, PhysicsFormer, TransformerOnly
from icml26_physicsformer.data import BEIJING_STATIONS, project_km
from icml26_shared.bench import Benchmark, Case, bench_main, interleaved_seconds

SEQ_LEN, PRED_LEN, VARIABLES = 48, 72, 6
BATCH, TINY_BATCH = 16, 2
ROUNDS, TINY_ROUNDS = 20, 1
BASELINES = ("dlinear", "transformer_only", "patchtst")


def step(model, x: torch.Tensor, backward: bool) -> None:
    """One forward pass of ``model`` on ``x``, and its backward pass when ``backward``."""
    if backward:
        model(x).square().mean().backward()
    else:
        with torch.no_grad():
            model(x)


def run(tiny: bool) -> Benchmark:
    """Time every model's forward and forward + backward passes in interleaved rounds; PhysicsFormer against each."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    coords = project_km(np.array(list(BEIJING_STATIONS.values())))
    models = {
        "physicsformer": PhysicsFormer(coords, SEQ_LEN, PRED_LEN, VARIABLES, 1, (4, 5)),
        "dlinear": DLinear(SEQ_LEN, PRED_LEN),
        "transformer_only": TransformerOnly(SEQ_LEN, PRED_LEN),
        "patchtst": PatchTST(SEQ_LEN, PRED_LEN, PRED_LEN),
    }
    x = 0.5 * torch.randn(TINY_BATCH if tiny else BATCH, SEQ_LEN, len(coords), VARIABLES)
    cases = []
    for backward, what in ((False, "forward"), (True, "forward + backward")):
        fns = [partial(step, model, x, backward) for model in models.values()]
        for fn in fns:  # warm-up
            fn()
        ours, *baselines = interleaved_seconds(fns, TINY_ROUNDS if tiny else ROUNDS)
        cases += [Case(what, name, ours, t) for name, t in zip(BASELINES, baselines, strict=True)]
    params = ", ".join(f"{name} {sum(p.numel() for p in m.parameters()):,}" for name, m in models.items())
    return Benchmark(
        f"PhysicsFormer vs DLinear, the Transformer alone and PatchTST: seconds per forward and per forward + "
        f"backward pass, {x.shape[0]} windows of {len(coords)} stations x {VARIABLES} variables, one thread",
        tuple(cases),
        notes=f"parameters: {params}",
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("physicsformer", run))
