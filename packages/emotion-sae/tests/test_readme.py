from pathlib import Path

from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_runs():
    run_readme_usage(Path(__file__).parents[1] / "README.md")
