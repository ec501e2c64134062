from pathlib import Path

import numpy as np
from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_prints_the_values_in_its_comments():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    assert round(0.5 * np.abs(ns["p"] - ns["q"]).sum(), 3) == 0.454
    assert ns["patterns"].shape == (330, 8) and ns["z"].shape == (256, 8)
