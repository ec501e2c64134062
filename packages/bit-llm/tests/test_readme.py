from pathlib import Path

from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_runs_and_prints_what_it_says():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    assert (len(ns["data"].train), ns["s"].fmri.shape[0], ns["s"].coords.shape[1]) == (4, 8, 3)
    assert tuple(ns["tokens"].shape) == (8, 16, 64)
    assert ns["model"].where == [0, 1] and ns["model"].gates.abs().max().item() == 0.0
    assert ns["loss"].item() > 0
