from pathlib import Path

import torch
from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_runs_and_prints_what_it_says():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    assert ns["low"].shape == torch.Size([64, 1, 16, 16])
    assert round(float((ns["official"] - ns["low"]).abs().max()), 2) == 0.14  # no training: deterministic
    assert 0.3 < ns["metrics"]["auc"] < 0.7  # -> pia True (the last attack of the loop)
