"""The README's usage block runs, and prints what its ``# ->`` comments say (``run_readme_usage``)."""

from pathlib import Path

from icml26_shared.testing import run_readme_usage

README = Path(__file__).parents[1] / "README.md"


def test_readme_usage_block_prints_what_its_comments_say():
    ns = run_readme_usage(README)
    assert abs(ns["share"] - 0.24) < 0.05  # the unrounded value the README's 0.2 comes from
