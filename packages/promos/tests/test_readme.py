from pathlib import Path

import numpy as np
from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_prints_what_its_comments_say():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    scores, target, parts = ns["scores"], ns["target"], ns["parts"]
    assert scores.shape == (178,)
    # a trained model: the stated 0.73 with a margin far outside cross-machine float noise
    assert abs(ns["roc_auc_score"](target.y, scores) - 0.73) < 0.05
    assert set(parts) == {"distillation_bias", "geometric_deviation"}
    np.testing.assert_allclose(parts["distillation_bias"] + 0.5 * parts["geometric_deviation"], scores, rtol=1e-6)
