"""The README's usage block runs, and what it prints matches the ``# -> ...`` comments next to the prints."""

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
    expected = [m.group(1) for m in re.finditer(r"print\(.*#\s*->\s*(\S+(?: \([^)]*\))?)", usage)]
    printed = out.getvalue().splitlines()
    assert len(printed) == len(expected) == 4
    assert printed[0] == expected[0]  # "True (600, 9, 3)"
    for got, want in zip(printed[1:], expected[1:], strict=True):  # PSNRs rounded to 0.1 dB
        assert float(got) == pytest.approx(float(want), abs=0.15)
