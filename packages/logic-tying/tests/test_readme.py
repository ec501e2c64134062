from pathlib import Path

import pytest
from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_prints_the_values_in_its_comments():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    simplify, netlist, simple = ns["simplify"], ns["netlist"], ns["simple"]
    assert simple.area <= ns["target"]  # the area target is met exactly (a property, not a trained number)
    # the trained network's numbers, with room for another machine's float noise in 10 epochs of Adam
    assert simplify(netlist).area == pytest.approx(117, rel=0.05) and simple.area == pytest.approx(70, rel=0.05)
    assert ns["lut_count"](simple) == pytest.approx(36, rel=0.1)
    assert ns["tying"].n_ties == pytest.approx(106, rel=0.1)
    assert ns["acc"] == pytest.approx(0.705, abs=0.03)
