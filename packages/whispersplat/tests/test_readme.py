"""The README's usage block runs and prints what its comments say."""

import math
from pathlib import Path

from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_runs_and_matches_its_comments():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    assert ns["image"].shape == (48, 48, 3)
    assert ns["lossless"] == 0.0
    assert math.isclose(round(ns["hidden_db"], 1), ns["EXPECTED_HIDDEN_DB"], abs_tol=0.15)
