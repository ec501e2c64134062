"""Cost of a removal run per method, as a ratio to AttentiveEraser's hard blocking measured in the same run.

AdaEraser is training-free like AttentiveEraser; its extra cost is the third branch (the source at the current
timestep) that the presence estimate reads. The paper claims no speed-up; this prints what adaptivity costs.
Usage: python benchmarks/bench_removal.py   (quick-config model size, 32 scenes, one torch thread)
"""

import time
from functools import partial

import numpy as np
import torch
from icml26_adaeraser import AdaptiveSuppression, DiT, FixedSuppression, HardSuppression, make_scenes, remove_object

ROUNDS = 5


def main() -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = DiT(image_size=16, patch=2, dim=48, depth=4, heads=4).eval()
    scenes = make_scenes(32, 16, np.random.default_rng(0))
    controls = {
        "none": None,
        "hard": HardSuppression,
        "fixed": partial(FixedSuppression, strength=0.5),
        "adaptive": AdaptiveSuppression,
    }
    times = {name: [] for name in controls}
    for _ in range(ROUNDS):  # interleaved rounds, median: robust to a shared, loaded machine
        for name, control in controls.items():
            start = time.process_time()
            remove_object(model, scenes.image, scenes.mask, control, strength=0.6, steps=20, guidance=3.0)
            times[name].append(time.process_time() - start)
    reference = np.median(times["hard"])
    print(f"removal of 32 scenes, 12 DDIM steps, CPU seconds (median of {ROUNDS}); ratio to hard blocking")
    for name, values in times.items():
        print(f"{name:9s} {np.median(values):7.3f} s   x{np.median(values) / reference:.2f}")


if __name__ == "__main__":
    main()
