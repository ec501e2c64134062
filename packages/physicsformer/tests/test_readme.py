"""The README's usage block runs, and prints what its ``# ->`` comments say (``run_readme_usage``)."""

from pathlib import Path

import numpy as np
from icml26_shared.testing import run_readme_usage

README = Path(__file__).parents[1] / "README.md"


def test_readme_usage_block_prints_what_its_comments_say():
    ns = run_readme_usage(README)
    np.testing.assert_allclose(ns["relation"].b, 0, atol=0.05)
