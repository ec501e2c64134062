"""The README's usage block runs, and prints what its ``# ->`` comments say (``run_readme_usage``)."""

from pathlib import Path

from icml26_shared.testing import run_readme_usage

README = Path(__file__).parents[1] / "README.md"


def test_readme_usage_block_prints_what_its_comments_say():
    # The bandit's probabilities themselves are not printed: their last digits follow the losses, which move
    # with the CPU's kernels (ATEN_CPU_CAPABILITY=default changed one by 0.025); the loss gets 0.02.
    ns = run_readme_usage(README, atol=0.02)
    assert (ns["think"].potentials() >= 0.1 * 2 / 6 - 1e-12).all()  # the exploration floor gamma k / G
