from pathlib import Path

from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_runs_and_prints_what_it_says(capsys):
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    assert [int(s.sum()) for s in ns["seen"]] == [149, 137, 181]
    assert ns["keep"].nonzero().flatten().tolist() == [11, 12, 13, 14]
    assert capsys.readouterr().out.splitlines()[-1] == "260 48 1024"
