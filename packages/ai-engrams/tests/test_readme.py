from pathlib import Path

from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_runs_and_prints_what_it_says():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")  # a trained MLP: margins, not exact values
    before, after, both = ns["before"], ns["after"], ns["both"]
    assert before.min() > 0.85 and after[3] < 0.1
    assert after[[c for c in range(10) if c != 3]].mean() > 0.85
    assert both[[3, 8]].max() < 0.1
