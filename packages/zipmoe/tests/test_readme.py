from pathlib import Path

import pytest
from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_prints_the_values_in_its_comments():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    assert f"{ns['packed'].ratio:.3f}" == "0.694"
    plan = ns["plan"]
    assert (plan.n_full, plan.n_sm) == (3, 2)
    assert plan.expected_delay * 1e3 == pytest.approx(0.3023, abs=5e-5)
