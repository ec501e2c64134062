from pathlib import Path

from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_runs_and_prints_what_it_says():
    namespace = run_readme_usage(Path(__file__).parents[1] / "README.md")
    assert tuple(namespace["logits"].shape) == (8, 3)
    assert round(namespace["parts"]["kl"], 1) == 977.3
    assert round(namespace["coop_gap"], 4) == 0.0
