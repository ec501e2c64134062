"""The README's usage block runs, and prints what its ``# ->`` comments say (``run_readme_usage``)."""

from pathlib import Path

from icml26_shared.testing import run_readme_usage
from icml26_squant import relative_error

README = Path(__file__).parents[1] / "README.md"


def test_readme_usage_block_prints_what_its_comments_say():
    ns = run_readme_usage(README)
    fixed = ns["compress_fixed_seed"](ns["W"], ns["seedlm"], seed=1).reconstruct()
    assert round(relative_error(ns["W"], fixed), 2) == 0.51  # its comment reads 'no search -> 0.51'
