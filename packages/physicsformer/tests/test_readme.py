from pathlib import Path

import numpy as np
from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_runs_and_prints_what_it_says():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    assert ns["relation"].K.round(2).tolist() == [[-0.0, -0.8], [0.8, -0.0]]
    assert tuple(ns["model"](ns["x"]).shape) == (1, 24, 16, 6)
    np.testing.assert_allclose(ns["relation"].b, 0, atol=0.05)
