from pathlib import Path

import torch
from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_prints_what_its_comments_say():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    assert ns["model"](ns["batch"]).shape == (4, 1)
    assert ns["logs"].shape == (28, 2, 3, 3)
    assert bool(torch.linalg.eigvalsh(ns["spd_exp"](ns["logs"].double())).min() > 0)
