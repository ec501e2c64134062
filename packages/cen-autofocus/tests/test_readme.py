from pathlib import Path

from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_runs():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    assert abs(ns["result"].k_star - 17.3) <= 1.0  # the usage example finds the focus
