from pathlib import Path

import torch
from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_runs_and_prints_what_it_says():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    assert bool(ns["delta"].abs().max() <= ns["settings"].eps)  # -> True
    assert abs(ns["share"] - 0.24) < 0.05  # -> 0.2 (a trained quantity: a tolerance, not an exact value)
    assert ns["attacked"].shape == torch.Size([64, 1, 16, 16])
