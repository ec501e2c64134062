"""Decision latency per focus sweep: CEN vs the classic focus measures, as ratios to Tenengrad.

One simulated sweep (41 positions, 96 x 96 pixels, 32-frame spike blocks). Each method goes from the spike
blocks to a focus decision (CEN: spectra, 7 bounded centroids, selection, near-max centroid; a measure: TFP
frames, the score of every frame, argmax). All methods are timed in the same process, interleaved round by
round, and the median over rounds is reported, so background load affects every method alike.

    python packages/cen-autofocus/benchmarks/bench_latency.py [--rounds 30] [--size 96]
"""

import argparse
import statistics
import time

import numpy as np
from icml26_cen_autofocus import FOCUS_MEASURES, SweepSpec, cen_autofocus, focus_curve, scene, simulate_sweep


def seconds(fn, repeats: int) -> float:
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3, help="decisions per round")
    parser.add_argument("--size", type=int, default=96)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    spec = SweepSpec(n_positions=41, k_focus=17.3, n_frames=32)
    blocks = simulate_sweep(scene("camera", args.size, rng), spec, rng)
    methods = {"CEN": lambda: cen_autofocus(blocks).k_star}
    for name in FOCUS_MEASURES:
        methods[name] = lambda name=name: int(np.argmax(focus_curve(blocks, name, spec.n_frames)))
    times: dict[str, list[float]] = {m: [] for m in methods}
    for fn in methods.values():  # warm-up
        fn()
    for _ in range(args.rounds):
        for m, fn in methods.items():
            times[m].append(seconds(fn, args.repeats))
    base = statistics.median(times["tenengrad"])
    print(f"sweep: 41 positions x {args.size}^2 px, median of {args.rounds} rounds")
    print(f"{'method':<22} {'ms/sweep':>9} {'ratio vs Tenengrad':>19}")
    for m in methods:
        median = statistics.median(times[m])
        print(f"{m:<22} {1000 * median:9.2f} {median / base:19.2f}")


if __name__ == "__main__":
    main()
