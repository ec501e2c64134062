"""REPORT.md's tables: one cell per column wherever a claim's text holds a `|`, and mean ± sem as named."""

import re

from icml26_shared.records import Record
from icml26_shared.report import Entry, movement, render, status

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
    assert shapes == [(8, [8, 8]), (6, [6])]
    assert r"max \|y - y_ref\| < 1e-9" in text and r"`mean(\|err\|) < 1`" in text
    assert r"unreadable: bad \| file" in text


def test_measured_is_mean_and_sem_as_the_header_says():
    text = render([Entry("demo", record([CLAIM]))])
    assert "| measured (mean ± sem, n) |" in text
    assert "| 0.5 ± 0.1 (n=9) |" in text


def claim(mean, verdict, rule="mean(x) >= 0.5, beyond one standard error"):
    return {**CLAIM, "rule": rule, "measured": {**CLAIM["measured"], "mean": mean}, "verdict": verdict}


def test_movement_reads_the_rule_direction():
    assert movement(claim(0.4, "fails"), claim(0.6, "holds")) == "toward the rule; **verdict changed**"
    assert movement(claim(0.6, "holds"), claim(0.4, "holds")) == "away from the rule"
    lower = "mean(err) < 0.1, beyond one standard error"
    assert movement(claim(0.3, "fails", lower), claim(0.2, "fails", lower)) == "toward the rule"
    assert movement(claim(0.3, "fails", lower), claim(0.3, "fails", lower)) == "unchanged"
    assert movement(claim(float("nan"), "inconclusive"), claim(0.3, "holds")) == "-; **verdict changed**"


def test_medium_sits_beside_quick_with_as_many_cells_as_the_header():
    quick, medium = record([claim(0.4, "fails")]), record([claim(0.6, "holds")])
    medium.config_name, medium.timing = "medium", {"cpu_seconds": 7.0, "load_start": 0.1, "load_end": 2.5}
    text = render([Entry("demo", quick, medium=medium)])
    shapes = [(cells(t[0]), [cells(r) for r in t[1:]]) for t in tables(text)]
    assert shapes == [(8, [8]), (9, [9])]
    assert "| [`demo`](#demo) | 0/1 | 1 / - (-) | 1/1 | 1 / 7 (0.1 → 2.5) |" in text
    assert status(Entry("demo", quick, medium=medium)) == "0/1 claims hold (quick); medium 1/1"
