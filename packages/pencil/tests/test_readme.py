from pathlib import Path

from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_prints_what_its_comments_say():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    # one epoch of a seeded model: the stated 0.561 with a margin far outside cross-machine float noise
    assert abs(ns["roc_auc"](ns["pos"], ns["neg"]) - 0.561) < 0.05
    assert ns["pos"].shape == ns["neg"].shape == (len(ns["split"].test_pos),)
