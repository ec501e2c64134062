from pathlib import Path

from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_prints_the_values_in_its_comments():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    assert ns["counts"].tolist() == [500, 299, 179, 107, 64, 38, 23, 13, 8, 5]
    assert tuple(ns["scores"].shape) == (8, 10) and ns["loss"].ndim == 0
    assert bool(ns["loss"].isfinite()) and ns["loss"].requires_grad
    assert bool((ns["scores"] < 0).all())  # log-probabilities of whole answers
