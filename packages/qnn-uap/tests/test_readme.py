from pathlib import Path

import numpy as np
import pytest
from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_prints_the_values_in_its_comments():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    result = ns["result"]
    assert result.model.num_parameters == 24
    assert result.train_mse == pytest.approx(0.0071, abs=5e-5)
    np.testing.assert_allclose(result.predict(ns["x"][:3]), [0.63, 0.705, 0.445], atol=5e-4)
    assert result.rescale_tried == (1.0, 2.0)
