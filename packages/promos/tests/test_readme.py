"""The README's usage block runs, and prints what its ``# ->`` comments say (``run_readme_usage``)."""

from pathlib import Path

import numpy as np
from icml26_shared.testing import run_readme_usage

README = Path(__file__).parents[1] / "README.md"


def test_readme_usage_block_prints_what_its_comments_say():
    # a trained model: a margin far outside cross-machine float noise
    ns = run_readme_usage(README, atol=0.05)
    parts, scores = ns["parts"], ns["scores"]
    assert set(parts) == {"distillation_bias", "geometric_deviation"}
    np.testing.assert_allclose(parts["distillation_bias"] + 0.5 * parts["geometric_deviation"], scores, rtol=1e-6)
