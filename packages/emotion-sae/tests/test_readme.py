from pathlib import Path

from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_prints_the_values_in_its_comments(capsys):
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    assert capsys.readouterr().out.splitlines() == ["True 1.0", "(1, 27)"]
    assert ns["tokens"].shape == (1, 27)
