from pathlib import Path

import numpy as np
from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_prints_what_its_comments_say():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    run, discounted_sum = ns["run"], ns["discounted_sum"]
    assert run.D.shape == (2, 9) and run.I.shape == (2, 8)
    assert round(float((run.I / run.eps2).max()), 2) == 1.86  # deterministic float64 simulator
    assert np.isclose(run.D[1, -1], 4.13e-4, rtol=2e-3)
    assert np.isclose(discounted_sum(run.I[1], 0.5)[-1], 3.23e-4, rtol=2e-3)
