"""The README's usage block runs, and prints what its ``# ->`` comments say (``run_readme_usage``)."""

from pathlib import Path

from icml26_shared.testing import run_readme_usage

README = Path(__file__).parents[1] / "README.md"


def test_readme_usage_block_prints_what_its_comments_say():
    # one epoch of a seeded model: a margin far outside cross-machine float noise
    ns = run_readme_usage(README, atol=0.05)
    assert ns["pos"].shape == ns["neg"].shape == (len(ns["split"].test_pos),)
