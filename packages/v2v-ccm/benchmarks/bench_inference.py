"""Inference cost vs keep ratio: forward time of the MLLM on the tokens that survive pruning, and bytes sent.

Per keep ratio rho, two cases against dense cooperation measured in the same run: the forward time of one batch
with the pruned tokens physically removed (as a deployment would do), dense time / pruned time; and the bytes
the CAVs send, dense bytes / CCM bytes (kept float16 features, their uint8 indices and the request). The model
is untrained at the quick size (d = 32, 2 layers) on a 32 x 32 world, 64 tokens per agent, ego + 2 CAVs, one
torch thread.

Run: python packages/v2v-ccm/benchmarks/bench_inference.py [--tiny] [--out results]
"""

from __future__ import annotations

from functools import partial

import numpy as np
import torch
from icml26_shared.bench import Benchmark, Case, bench_main, interleaved_seconds
from icml26_v2v_ccm import CooperativeQA, Inputs, batch_inputs, make_dataset
from icml26_v2v_ccm.method import dense_bytes, keep_count, message_bytes, request_bytes

GRID, TINY_GRID = 32, 8
QUESTIONS, TINY_QUESTIONS = 64, 8
ROUNDS, TINY_ROUNDS = 20, 2
KEEP_RATIOS = (0.125, 0.25, 0.5)
D_M = 16  # the QSM width of the request, as in the experiment's configs


def pruned_inputs(inputs: Inputs, k: int) -> Inputs:
    """The inputs with only the first k tokens of every CAV (all of the ego's), the rest removed."""
    n, a = inputs.visual.shape[2], inputs.visual.shape[1]
    visual = torch.cat([inputs.visual[:, 0], inputs.visual[:, 1:, :k].flatten(1, 2)], 1)[:, None]
    index = [0, 1, *range(2, 2 + n)] + [2 + n * i + j for i in range(1, a) for j in range(k)]
    return Inputs(inputs.question, visual, inputs.positions[:, index])


def forward(model, inputs: Inputs) -> None:
    """One forward pass over every token of ``inputs``."""
    with torch.no_grad():
        model(inputs, torch.ones(inputs.visual.shape[:3], dtype=torch.bool))


def run(tiny: bool) -> Benchmark:
    """Time the dense and the pruned forward passes in turn (interleaved rounds) and count the bytes."""
    grid, questions = (TINY_GRID, TINY_QUESTIONS) if tiny else (GRID, QUESTIONS)
    torch.set_num_threads(1)
    data = make_dataset(questions, seed=0, grid=grid, patch=4, lidar_range=grid * 0.6)
    model = CooperativeQA(data.tokens.shape[-1], grid=grid).eval()
    inputs, _ = batch_inputs(model, data, np.arange(questions), np.arange(questions) % 4)
    n, cavs = data.tokens.shape[2], data.tokens.shape[1] - 1
    ks = [keep_count(rho, n) for rho in KEEP_RATIOS]
    fns = [partial(forward, model, inputs)] + [partial(forward, model, pruned_inputs(inputs, k)) for k in ks]
    dense_t, *pruned_t = interleaved_seconds(fns, TINY_ROUNDS if tiny else ROUNDS)
    dense_b = cavs * dense_bytes(n, model.d)
    cases = []
    for rho, k, t in zip(KEEP_RATIOS, ks, pruned_t, strict=True):
        sent = cavs * (message_bytes(k, n, model.d) + request_bytes(D_M, n))
        cases.append(Case(f"rho={rho:g}, forward ({questions} questions)", "dense forward", t, dense_t))
        cases.append(Case(f"rho={rho:g}, bytes sent by {cavs} CAVs", "dense bytes", float(sent), float(dense_b), "B"))
    return Benchmark(
        f"CCM-pruned cooperation vs dense: MLLM forward time (pruned tokens removed) and bytes sent, "
        f"{grid} x {grid} world, {n} tokens per agent, ego + {cavs} CAVs, untrained quick-size model, one thread",
        tuple(cases),
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("v2v-ccm", run))
