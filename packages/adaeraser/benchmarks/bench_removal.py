"""Cost of a removal run: AdaEraser's adaptive suppression against the other attention controls, same run.

AdaEraser is training-free like AttentiveEraser; its extra cost is the third branch (the source at the current
timestep) that the presence estimate reads, and the two extra softmaxes of that estimate. The paper claims no
speed-up: this records what adaptivity costs (a ratio < 1: AdaEraser is slower than that baseline). Quick-config
model size (untrained: the cost does not depend on the weights), 32 scenes, strength 0.6 of 20 DDIM steps (12
steps), SARG w = 3, one torch thread, CPU seconds, median of 5 interleaved rounds.

Run: python packages/adaeraser/benchmarks/bench_removal.py [--tiny] [--out results]
"""

from __future__ import annotations

import time
from functools import partial

import numpy as np
import torch
from icml26_adaeraser import AdaptiveSuppression, DiT, FixedSuppression, HardSuppression, make_scenes, remove_object
from icml26_shared.bench import Benchmark, Case, bench_main, interleaved_seconds

SCENES, TINY_SCENES = 32, 2
ROUNDS, TINY_ROUNDS = 5, 1
BASELINES = {
    "hard blocking (AttentiveEraser)": HardSuppression,
    "fixed soft suppression (lambda 0.5)": partial(FixedSuppression, strength=0.5),
    "no suppression": None,
}


def run(tiny: bool) -> Benchmark:
    """Removal time of AdaEraser against each baseline control on the same scenes, interleaved round by round
    after an untimed warm-up removal."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = DiT(image_size=16, patch=2, dim=48, depth=4, heads=4).eval()
    scenes = make_scenes(TINY_SCENES if tiny else SCENES, 16, np.random.default_rng(0))

    def removal(control):
        return lambda: remove_object(model, scenes.image, scenes.mask, control, strength=0.6, steps=20, guidance=3.0)

    warm_up = (scenes.image[:1], scenes.mask[:1], AdaptiveSuppression)
    remove_object(model, *warm_up, strength=0.6, steps=2, guidance=3.0)  # first-call costs stay untimed
    controls = [AdaptiveSuppression, *BASELINES.values()]
    ours, *baselines = interleaved_seconds(
        [removal(c) for c in controls], TINY_ROUNDS if tiny else ROUNDS, time.process_time
    )
    n = len(scenes.image)
    return Benchmark(
        "AdaEraser's adaptive suppression vs the other attention controls: CPU seconds to remove the object from "
        f"{n} scenes (12 DDIM steps, SARG w = 3), one thread",
        tuple(Case(f"{n} scenes", name, ours, t) for name, t in zip(BASELINES, baselines, strict=True)),
        notes="the paper claims no speed-up; a ratio < 1 is what adaptivity costs (its third branch)",
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("adaeraser", run))
