from pathlib import Path

from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_runs_and_prints_what_it_says():
    namespace = run_readme_usage(Path(__file__).parents[1] / "README.md")
    assert [round(s, 3) for s in namespace["sparsities"]] == [0.62, 0.716, 0.716, 0.716, 0.715, 0.716]
    assert round(namespace["result"].total_sparsity, 4) == 0.6953
    assert namespace["metric"].text == "abs(W) * sqrt(X)"
