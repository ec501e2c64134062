from pathlib import Path

import pytest
from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_prints_the_values_in_its_comments():
    # The bandit's probabilities themselves are not printed: their last digits follow the losses, which move
    # with the CPU's kernels (ATEN_CPU_CAPABILITY=default changed one by 0.025); what is printed is stable.
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    assert ns["loss"] == pytest.approx(1.52, abs=0.02)  # 50 AdamW steps from ln 5 = 1.61
    potentials = ns["think"].potentials()
    assert potentials.sum() == pytest.approx(2.0) and (potentials >= 0.1 * 2 / 6 - 1e-12).all()
    assert ns["touch"].peak_state_bytes == 25104 and len(ns["touch"].selected) == 2
