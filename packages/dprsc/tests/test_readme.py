from pathlib import Path

import numpy as np
from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_prints_what_its_comments_say():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    private, lo, hi = ns["private"], ns["lo"], ns["hi"]
    exact = [7622.0, 1293.0, 1700.0]
    assert np.array_equal(private.answer(lo, hi).round(), [9024.0, 8205.0, -430.0])  # seeded counter noise
    assert np.array_equal(ns["exact_box_counts"](ns["G"], ns["X"], lo, hi, U=16), exact)
    assert round(private.tau, 2) == 61.63 and round(private.noise_scale) == 2201
    assert np.array_equal(ns["release"](ns["G"], ns["X"], U=16, noise=False).answer(lo, hi), exact)
