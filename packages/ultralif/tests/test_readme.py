"""The README's usage block runs, and prints what its ``# ->`` comments say (``run_readme_usage``)."""

from pathlib import Path

from icml26_shared.testing import run_readme_usage

README = Path(__file__).parents[1] / "README.md"


def test_readme_usage_block_prints_what_its_comments_say():
    # two epochs on random labels: margins far outside cross-machine float noise
    ns = run_readme_usage(README, atol=0.05)
    assert ns["spikes"].shape == (8, 64) and abs(ns["model"].temperatures()[0] - 0.996) < 0.01
