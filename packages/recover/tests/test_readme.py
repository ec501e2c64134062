from pathlib import Path

from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_runs_and_prints_what_it_says():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    assert ns["rs"].score.shape == (30,) and ns["rs"].curve.shape == (30, 4)  # -> (30,) (30, 4)
    assert ns["test"].p_value < 1e-3 and ns["test"].used  # -> True True (3.4e-05 where written)
