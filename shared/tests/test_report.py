"""REPORT.md's tables: one cell per column wherever a claim's text holds a `|`, and mean ± sem as named."""

import re

from icml26_shared.records import Record
from icml26_shared.report import Entry, render

CLAIM = {
    "id": "bounded",
    "statement": "The error is small: max |y - y_ref| < 1e-9.",
    "paper": "eq. 3: |W| is right-skewed",
    "metric": "err",
    "measured": {"mean": 0.5, "std": 0.3, "sem": 0.1, "n": 9},
    "rule": "mean(|err|) < 1",
    "verdict": "holds",
}


def record(claims):
    return Record(
        paper="demo",
        version="0.1.0",
        config_name="quick",
        config={},
        seeds=[0],
        metrics={},
        claims=claims,
        environment={},
        git_sha="abc",
        wall_seconds=1.0,
        fingerprint="f",
    )


def cells(row: str) -> int:
    """Cells of a Markdown table row as GitHub counts them: split at every `|` not written `\\|`."""
    return len(re.split(r"(?<!\\)\|", row.strip().removeprefix("|").removesuffix("|")))


def tables(text: str) -> list[list[str]]:
    """Each table's rows (header first, separator dropped)."""
    found, current = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            found.append([current[0], *current[2:]])
            current = []
    return found


def test_every_row_has_as_many_cells_as_its_header():
    text = render([Entry("demo", record([CLAIM])), Entry("broken", None, "bad | file")])
    shapes = [(cells(t[0]), [cells(r) for r in t[1:]]) for t in tables(text)]
    assert shapes == [(7, [7, 7]), (6, [6])]
    assert r"max \|y - y_ref\| < 1e-9" in text and r"`mean(\|err\|) < 1`" in text
    assert r"unreadable: bad \| file" in text


def test_measured_is_mean_and_sem_as_the_header_says():
    text = render([Entry("demo", record([CLAIM]))])
    assert "| measured (mean ± sem, n) |" in text
    assert "| 0.5 ± 0.1 (n=9) |" in text
