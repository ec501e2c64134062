from pathlib import Path

import pytest
from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_runs_and_prints_what_it_says():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    assert ns["y"].shape == (1000, 64)  # -> (1000, 64)
    assert round(ns["tv"], 4) == pytest.approx(0.0183)  # -> 0.0183 (a deterministic grid computation)
