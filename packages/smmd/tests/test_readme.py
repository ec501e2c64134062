from pathlib import Path

import pytest
from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_prints_the_values_in_its_comments():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    logits, targets = ns["logits"], ns["targets"]
    assert ns["smmd"](logits, targets).item() == pytest.approx(1.2417, abs=5e-5)
    assert ns["NumberTokenLoss"](ns["vocab"], "was")(logits, targets).item() == pytest.approx(35.14, abs=5e-3)
    assert ns["gpt2"].values.tolist() == [3.0, 12.0] and ns["gpt2"].value_index.tolist() == [0, 0, 0, 1]
