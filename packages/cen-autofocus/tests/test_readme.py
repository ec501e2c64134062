from pathlib import Path

import numpy as np
import pytest
from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_prints_the_values_in_its_comments():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    result = ns["result"]
    assert result.k_star == pytest.approx(17.1, abs=0.05) and abs(result.k_star - 17.3) <= 1.0
    assert (result.bound, result.curves.shape) == (0.125, (7, 31))
    assert np.argmax(ns["focus_curve"](ns["blocks"], "tenengrad", ns["spec"].n_frames)) == 17
    assert ns["accumulate_spikes"](ns["spikes"], 32).shape == (2, 8, 8)
