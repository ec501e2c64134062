from pathlib import Path

import pytest
from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_runs_and_prints_what_it_says():
    geo = run_readme_usage(Path(__file__).parents[1] / "README.md")["geo"]
    assert geo.LS.shape == (1,) and geo.LC.shape == (1,) and geo.PHFE_map.shape == (1, 8, 8)
    assert float(geo.LC[0]) == pytest.approx(16.3, abs=0.05)  # -> LC 16.3 (a closed-form generator: no training)
    assert float(geo.PHFE[0] / geo.LS[0] ** 2) == pytest.approx(5.9e-4, abs=0.05e-4)  # -> PHFE/LS^2 5.9e-04
