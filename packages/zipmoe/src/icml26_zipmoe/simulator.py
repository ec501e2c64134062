"""Discrete-event replay of a router trace on a device we do not have.

Every decode step and layer: the routed experts of the step's tokens are looked up in the cache; the ones
not in full slots become load tasks (``scheduler.LoadTask``), issued in the engine's order on one storage
channel and a pool of decompression workers (``scheduler.simulate_loads``); the layer computes each expert
as it becomes ready (``compute`` seconds per expert) after ``dense`` seconds of attention and routing.
The replay returns the mean per-layer expert-load latency and the decode throughput.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from icml26_shared import check_array, check_number, fail

from .scheduler import Device, LoadTask, affinity_order, fifo_order, simulate_loads

TaskBuilder = Callable[[int, int, str, int], LoadTask]  # (layer, expert, kind, tokens) -> task


@dataclass(frozen=True)
class Replay:
    """Mean per-layer load latency (s) and decode throughput (tokens/s) of a replayed trace."""

    load_latency: float
    tokens_per_second: float


def replay(
    trace: np.ndarray,
    cache,
    task: TaskBuilder,
    device: Device,
    compute: float,
    dense: float,
    compressed: bool = True,
    schedule: str = "affinity",
) -> Replay:
    """Replay ``trace`` (steps, layers, batch, k) of routed expert ids through ``cache`` on ``device``.

    ``compressed``: ZipMoE's offload format (type-I/II tasks); otherwise raw bf16 reads (the baselines).
    """
    trace = check_array("trace", trace, ndim=4)
    if check_number("compute", compute) < 0 or check_number("dense", dense) < 0:
        raise fail("compute/dense", (compute, dense), "non-negative seconds")
    if schedule not in ("affinity", "fifo"):
        raise fail("schedule", schedule, "'affinity' or 'fifo'")
    steps, layers, batch, _ = trace.shape
    latencies, total = [], 0.0
    for step in range(steps):
        for layer in range(layers):
            ids, counts = np.unique(trace[step, layer], return_counts=True)
            need = {int(e): int(c) for e, c in zip(ids, counts, strict=True)}
            tasks = []
            for e, tokens in need.items():
                state = cache.state(layer, e)
                if state != "full":
                    kind = ("sm_hit" if state == "sm" else "miss") if compressed else "raw"
                    tasks.append(task(layer, e, kind, tokens))
            cache.access(layer, need)
            order = affinity_order(tasks, device) if schedule == "affinity" else fifo_order(tasks)
            ready = sorted(simulate_loads(order, device)) if order else []
            latencies.append(max(ready, default=0.0))
            clock = 0.0
            for t in [0.0] * (len(need) - len(ready)) + ready:  # compute each expert once it is ready
                clock = max(clock, t) + compute
            total += dense + clock
    return Replay(load_latency=float(np.mean(latencies)), tokens_per_second=float(steps * batch / total))
