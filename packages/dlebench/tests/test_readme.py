"""The README's usage block runs, and what it prints matches the ``# -> ...`` comments next to the prints."""

import ast
import contextlib
import io
import re
from pathlib import Path

import pytest
from icml26_shared.testing import run_readme_usage

README = Path(__file__).parents[1] / "README.md"


def test_readme_usage_block_prints_what_its_comments_say():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        run_readme_usage(README)
    usage = README.read_text().split("## Usage", 1)[1].split("```", 2)[1]
    expected = [m.group(1) for m in re.finditer(r"print\(.*#\s*->\s*(.+)$", usage, re.M)]
    printed = out.getvalue().splitlines()
    assert len(printed) == len(expected) == 2
    assert printed[0] == expected[0]
    got, want = ast.literal_eval(printed[1]), ast.literal_eval(expected[1])
    assert got.keys() == want.keys()
    for mode in want:  # Spearman of rubric levels, rounded to 0.01
        assert got[mode] == pytest.approx(want[mode], abs=0.015)
