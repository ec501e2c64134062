from pathlib import Path

from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_runs_and_prints_what_it_says(capsys):
    run_readme_usage(Path(__file__).parents[1] / "README.md")
    assert capsys.readouterr().out.splitlines() == ["oagents 0.61 -3.74", "dag 0.85 -4.41", "32 57 topology: dag"]
