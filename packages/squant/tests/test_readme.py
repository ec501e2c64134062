from pathlib import Path

import pytest
from icml26_shared.testing import run_readme_usage
from icml26_squant import relative_error


def test_readme_usage_block_prints_the_values_in_its_comments():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    W = ns["W"]
    assert (ns["period"]((16, 15, 13, 4)), ns["period"]((16, 15, 1))) == (65535, 30)
    assert (len(ns["data"]), ns["code"].bits_per_weight) == (2057, 4.017578125)
    assert ns["err"] == pytest.approx(0.0158, abs=5e-5)
    seedlm = ns["compress"](W, ns["seedlm"]).reconstruct()
    assert relative_error(W, seedlm) == pytest.approx(0.0168, abs=5e-5)
    fixed = ns["compress_fixed_seed"](W, ns["seedlm"], seed=1).reconstruct()
    assert relative_error(W, fixed) == pytest.approx(0.51, abs=5e-3)
    assert ns["rtn"].bits_per_weight == 4.173828125
    assert relative_error(W, ns["rtn"].reconstruct()) == pytest.approx(0.0101, abs=5e-5)
