from pathlib import Path

from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_prints_the_values_in_its_comments(capsys):
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    printed = capsys.readouterr().out.splitlines()
    assert printed[:3] == [
        "(64, 64, 3) ('drag', 'piece', 'to', 'gap')",
        "drag(start_box='(9,32)', end_box='(45,32)') solved",
        "10 undershoot drag(start_box='(33,44)', end_box='(44,44)')",
    ]
    assert printed[3] == "8 4" and len(ns["episodes"]) == 8
