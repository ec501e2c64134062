"""The README's usage block runs, and prints what its ``# ->`` comments say (``run_readme_usage``)."""

from pathlib import Path

from icml26_shared.testing import run_readme_usage

README = Path(__file__).parents[1] / "README.md"


def test_readme_usage_block_prints_what_its_comments_say():
    run_readme_usage(README)
