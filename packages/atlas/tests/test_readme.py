from pathlib import Path

import torch
from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_prints_the_values_in_its_comments():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    assert (tuple(ns["y"].shape), tuple(ns["M"].shape)) == ((2, 1, 32, 4), (2, 1, 4, 45))
    assert tuple(ns["layer"](torch.randn(2, 32, 32)).shape) == (2, 32, 32)
