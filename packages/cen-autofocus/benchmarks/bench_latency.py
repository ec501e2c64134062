"""Decision latency per focus sweep: CEN vs each classic focus measure, as ratios measured in one run.

One simulated sweep (41 positions, 96 x 96 pixels, 32-frame spike blocks). Each method goes from the spike
blocks to a focus decision (CEN: spectra, 7 bounded centroids, selection, near-max centroid; a measure: TFP
frames, the score of every frame, argmax). All methods are timed in the same process, interleaved round by
round (3 decisions per round), and the median over rounds is reported, so background load affects every
method alike. The ratio is the measure's time / CEN's (> 1: CEN decides faster).

Run: python packages/cen-autofocus/benchmarks/bench_latency.py [--tiny] [--out results]
"""

from __future__ import annotations

import numpy as np
from icml26_cen_autofocus import FOCUS_MEASURES, SweepSpec, cen_autofocus, focus_curve, scene, simulate_sweep
from icml26_shared.bench import Benchmark, Case, bench_main, interleaved_seconds

SIZE, ROUNDS, REPEATS = 96, 30, 3
TINY_SIZE, TINY_ROUNDS, TINY_REPEATS = 24, 1, 1  # 24 px: the smallest bound 0.06 holds a frequency


def run(tiny: bool) -> Benchmark:
    """Time CEN and every focus measure on the same sweep, interleaved; one case per measure."""
    size, rounds, repeats = (TINY_SIZE, TINY_ROUNDS, TINY_REPEATS) if tiny else (SIZE, ROUNDS, REPEATS)
    rng = np.random.default_rng(0)
    spec = SweepSpec(n_positions=41, k_focus=17.3, n_frames=32)
    blocks = simulate_sweep(scene("camera", size, rng), spec, rng)
    methods = {"CEN": lambda: cen_autofocus(blocks).k_star}
    for name in FOCUS_MEASURES:
        methods[name] = lambda name=name: int(np.argmax(focus_curve(blocks, name, spec.n_frames)))
    for fn in methods.values():  # warm-up
        fn()
    decisions = [lambda fn=fn: [fn() for _ in range(repeats)] for fn in methods.values()]
    seconds = dict(zip(methods, (t / repeats for t in interleaved_seconds(decisions, rounds)), strict=True))
    case = f"sweep 41 x {size}^2 px"
    return Benchmark(
        f"CEN (7 bounds) vs classic focus measures, seconds from a sweep's spike blocks to the focus decision, "
        f"interleaved, median of {rounds} rounds",
        tuple(Case(case, name, seconds["CEN"], seconds[name]) for name in FOCUS_MEASURES),
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("cen-autofocus", run))
