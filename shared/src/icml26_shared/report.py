"""``icml26 report``: ``results/REPORT.md`` from every ``results/<slug>/results.json``.

One row per paper (claims holding/total, wall time, figure link), then each paper's claim table.
A results.json that cannot be read is reported as such in its row, never a crash. Measured values are
mean ± sem, as the verdicts, the READMEs and the docs site use them; a ``|`` in a cell is written ``\\|``,
so the row keeps its cells on GitHub and on the docs site.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .cache import atomic_write_text
from .records import Record

CATALOGUE_START = "<!-- catalogue:start -->"
CATALOGUE_END = "<!-- catalogue:end -->"


@dataclass(frozen=True)
class Entry:
    slug: str
    record: Record | None
    error: str = ""


def collect(out_root: str | Path) -> list[Entry]:
    """Every ``<out_root>/<slug>/results.json``, read or with the reason it could not be."""
    entries = []
    for path in sorted(Path(out_root).glob("*/results.json")):
        try:
            entries.append(Entry(path.parent.name, Record.load(path)))
        except ValueError as err:
            entries.append(Entry(path.parent.name, None, str(err)))
    return entries


def _fmt(x: float) -> str:
    return f"{x:.4g}" if x == x else "nan"


def cell(value: object) -> str:
    """``value`` for a Markdown table cell: ``|`` escaped (GitHub splits cells at it, even inside code)."""
    return str(value).replace("|", "\\|")


def status(entry: Entry) -> str:
    if entry.record is None:
        return "unreadable results"
    r = entry.record
    return f"{r.holding}/{len(r.claims)} claims hold ({r.config_name})"


def render(entries: list[Entry]) -> str:
    lines = [
        "# icml26: reproduction report",
        "",
        "Written by `icml26 report` from `results/<slug>/results.json`. A verdict is computed from the",
        "measured per-seed values: `holds` when the rule is met beyond one standard error, `fails` when",
        "it is missed beyond one standard error, else `inconclusive`.",
        "",
        "| paper | config | claims holding | wall s | version | git sha | figure |",
        "|---|---|---|---|---|---|---|",
    ]
    for e in entries:
        if e.record is None:
            lines.append(f"| `{e.slug}` | - | unreadable: {cell(e.error)} | - | - | - | - |")
            continue
        r = e.record
        fig = f"[{r.figures[0]}]({e.slug}/{r.figures[0]})" if r.figures else "-"
        sha = (r.git_sha or "-")[:12]
        lines.append(
            f"| [`{e.slug}`](#{e.slug}) | {r.config_name} | {r.holding}/{len(r.claims)} | {r.wall_seconds:.1f} "
            f"| {r.version} | {sha} | {fig} |"
        )
    for e in entries:
        if e.record is None:
            continue
        lines += ["", f"## {e.slug}", "", "| claim | statement | paper | measured (mean ± sem, n) | rule | verdict |"]
        lines.append("|---|---|---|---|---|---|")
        for c in e.record.claims:
            m = c["measured"]
            measured = f"{_fmt(m['mean'])} ± {_fmt(m['sem'])} (n={m['n']})"
            lines.append(
                f"| {cell(c['id'])} | {cell(c['statement'])} | {cell(c['paper'])} | {measured} "
                f"| `{cell(c['rule'])}` | **{c['verdict']}** |"
            )
        for fig in e.record.figures:
            lines += ["", f"![{e.slug} {fig}]({e.slug}/{fig})"]
    return "\n".join(lines) + "\n"


def write_report(out_root: str | Path = "results") -> Path:
    """Write ``<out_root>/REPORT.md`` atomically and return its path."""
    path = Path(out_root) / "REPORT.md"
    atomic_write_text(path, render(collect(out_root)))
    return path


def update_catalogue(readme: str | Path, entries: list[Entry]) -> int:
    """Set the status cell (the last column) of catalogue rows between the catalogue markers.

    A row belongs to a paper when its second cell names the slug in backticks. Returns rows updated.
    """
    path = Path(readme)
    text = path.read_text()
    if CATALOGUE_START not in text or CATALOGUE_END not in text:
        raise ValueError(f"readme={str(path)!r}: expected the markers {CATALOGUE_START} and {CATALOGUE_END}")
    head, rest = text.split(CATALOGUE_START, 1)
    body, tail = rest.split(CATALOGUE_END, 1)
    by_slug = {e.slug: status(e) for e in entries}
    updated = 0
    lines = body.split("\n")
    for i, line in enumerate(lines):
        cells = line.split("|")
        if len(cells) < 4:
            continue
        match = re.search(r"`([a-z0-9-]+)`", cells[2])
        if match and match.group(1) in by_slug:
            cells[-2] = f" {by_slug[match.group(1)]} "
            lines[i] = "|".join(cells)
            updated += 1
    atomic_write_text(path, head + CATALOGUE_START + "\n".join(lines) + CATALOGUE_END + tail)
    return updated
