"""``icml26 report``: ``results/REPORT.md`` from every ``results/<slug>/results.json`` (quick) and
``results/<slug>/medium/results.json`` (the scale ladder's medium, where a paper has one).

One row per paper (claims holding in quick and medium, wall and CPU time with the load average, figure
link), then each paper's claim table: quick's verdicts and, where medium ran, medium's beside them with
the metric's movement (toward the rule's side of its threshold or away from it). With ``--readme`` it also
sets the catalogue's status column and, in each package README that has the bench markers, the benchmark
tables from that paper's ``bench.json``, so no benchmark number is copied by hand.
A results.json that cannot be read is reported as such in its row, never a crash. Measured values are
mean ± sem, as the verdicts, the READMEs and the docs site use them; a ``|`` in a cell is written ``\\|``,
so the row keeps its cells on GitHub and on the docs site.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .bench import read_bench
from .cache import atomic_write_text
from .records import QUICK, Record, platform_line, run_dir

CATALOGUE_START = "<!-- catalogue:start -->"
CATALOGUE_END = "<!-- catalogue:end -->"
# A package README's benchmark numbers sit between these markers, written from its bench.json (issue 28.2).
BENCH_START = "<!-- bench.json:start: written by icml26 report; edit the benchmark, not this block -->"
BENCH_END = "<!-- bench.json:end -->"
MEDIUM = "medium"
REPRODUCE = "reproduce"  # results/reproduce/<run>.json: committed verify.json files of whole reproductions
RULE_OP = re.compile(r"\) (>=|<=|>|<) ")


@dataclass(frozen=True)
class Entry:
    """One paper's records: quick (``<root>/<slug>/results.json``) and, where it has one, medium."""

    slug: str
    record: Record | None
    error: str = ""
    medium: Record | None = None
    medium_error: str = ""


def _read(path: Path) -> tuple[Record | None, str]:
    if not path.is_file():
        return None, ""
    try:
        return Record.load(path), ""
    except ValueError as err:
        return None, str(err)


def collect(out_root: str | Path) -> list[Entry]:
    """Every paper under ``out_root`` with a quick or a medium record, each read or with the reason it
    could not be."""
    root = Path(out_root)
    slugs = sorted(
        {p.parent.name for p in root.glob("*/results.json")}
        | {p.parent.parent.name for p in root.glob(f"*/{MEDIUM}/results.json")}
    )
    entries = []
    for slug in slugs:
        quick, error = _read(run_dir(root, slug, QUICK) / "results.json")
        medium, medium_error = _read(run_dir(root, slug, MEDIUM) / "results.json")
        if quick is None and not error:
            error = "no quick results.json"
        entries.append(Entry(slug, quick, error, medium, medium_error))
    return entries


def _fmt(x: float) -> str:
    return f"{x:.4g}" if x == x else "nan"


def cell(value: object) -> str:
    """``value`` for a Markdown table cell: ``|`` escaped (GitHub splits cells at it, even inside code)."""
    return str(value).replace("|", "\\|")


def holding(record: Record, expected: str = "") -> str:
    """``5/7`` claims holding, with the config's name where it is not the ``expected`` one (a smoke run)."""
    name = f" ({record.config_name})" if expected and record.config_name != expected else ""
    return f"{record.holding}/{len(record.claims)}{name}"


def status(entry: Entry) -> str:
    """The catalogue's status cell: quick's claims holding, and medium's where it ran."""
    if entry.record is None:
        return "unreadable results"
    text = f"{holding(entry.record)} claims hold ({entry.record.config_name})"
    return text + (f"; medium {holding(entry.medium)}" if entry.medium else "")


def timing(record: Record | None) -> str:
    """``wall s / CPU s (load a -> b)`` of a record; records before icml26-shared 0.1.4 have no CPU or load."""
    return "-" if record is None else _timing(record.wall_seconds, record.timing)


def _timing(wall: float, t: dict) -> str:
    if not t:
        return f"{wall:.0f} / - (-)"
    return f"{wall:.0f} / {t['cpu_seconds']:.0f} ({_fmt(t['load_start'])} → {_fmt(t['load_end'])})"


def measured(claim: dict) -> str:
    m = claim["measured"]
    return f"{_fmt(m['mean'])} ± {_fmt(m['sem'])} (n={m['n']})"


def movement(quick: dict, medium: dict) -> str:
    """Which way the metric moved from quick to medium: toward the rule's side of its threshold, away
    from it, or not at all; ``verdict changed`` when it did."""
    op = RULE_OP.search(quick["rule"])
    a, b = quick["measured"]["mean"], medium["measured"]["mean"]
    if op is None or not (a == a and b == b):
        way = "-"
    elif a == b:
        way = "unchanged"
    else:
        way = "toward the rule" if (b > a) == (op.group(1) in (">=", ">")) else "away from the rule"
    return way + ("; **verdict changed**" if quick["verdict"] != medium["verdict"] else "")


def claims_table(entry: Entry) -> list[str]:
    """One paper's claims: quick's measurement and verdict, and medium's beside it where it ran."""
    r, med = entry.record, {c["id"]: c for c in (entry.medium.claims if entry.medium else [])}
    if not med:
        lines = [
            "| claim | statement | paper | measured (mean ± sem, n) | rule | verdict |",
            "|---|---|---|---|---|---|",
        ]
        for c in r.claims:
            lines.append(
                f"| {cell(c['id'])} | {cell(c['statement'])} | {cell(c['paper'])} | {measured(c)} "
                f"| `{cell(c['rule'])}` | **{c['verdict']}** |"
            )
        return lines
    lines = [
        "| claim | statement | paper | rule | quick (mean ± sem, n) | quick | medium (mean ± sem, n) | medium "
        "| quick → medium |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in r.claims:
        m = med.get(c["id"])
        right = f"{measured(m)} | **{m['verdict']}** | {movement(c, m)}" if m else "- | - | not in medium"
        lines.append(
            f"| {cell(c['id'])} | {cell(c['statement'])} | {cell(c['paper'])} | `{cell(c['rule'])}` "
            f"| {measured(c)} | **{c['verdict']}** | {right} |"
        )
    return lines


def render(entries: list[Entry], sections: Sequence[str] = ()) -> str:
    """REPORT.md: the summary table, the given sections (``performance``, ``reproductions``), then each paper."""
    lines = [
        "# icml26: reproduction report",
        "",
        "Written by `icml26 report` from `results/<slug>/results.json` (quick) and",
        "`results/<slug>/medium/results.json` (medium, where a paper has one). A verdict is computed from the",
        "measured per-seed values: `holds` when the rule is met beyond one standard error, `fails` when it is",
        "missed beyond one standard error, else `inconclusive`. Timing is wall / CPU seconds of the run, with",
        "the 1-minute load average at its start and end (a load above the 2 cores means the run shared the",
        "machine); records older than icml26-shared 0.1.4 lack CPU and load.",
        "",
        "| paper | quick: claims holding | quick: wall / CPU s (load) | medium: claims holding "
        "| medium: wall / CPU s (load) | version | git sha | figure |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for e in entries:
        if e.record is None:
            lines.append(f"| `{e.slug}` | unreadable: {cell(e.error)} | - | - | - | - | - | - |")
            continue
        r = e.record
        fig = f"[{r.figures[0]}]({e.slug}/{r.figures[0]})" if r.figures else "-"
        sha = (r.git_sha or "-")[:12]
        med = holding(e.medium) if e.medium else (f"unreadable: {cell(e.medium_error)}" if e.medium_error else "-")
        lines.append(
            f"| [`{e.slug}`](#{e.slug}) | {holding(r, QUICK)} | {timing(r)} | {med} | {timing(e.medium)} "
            f"| {r.version} | {sha} | {fig} |"
        )
    lines += sections
    for e in entries:
        if e.record is None:
            continue
        lines += ["", f"## {e.slug}", "", *claims_table(e)]
        for fig in e.record.figures:
            lines += ["", f"![{e.slug} {fig}]({e.slug}/{fig})"]
        for fig in e.medium.figures if e.medium else []:
            lines += ["", f"![{e.slug} medium {fig}]({e.slug}/{MEDIUM}/{fig})"]
    return "\n".join(lines) + "\n"


def performance(out_root: str | Path) -> list[str]:
    """REPORT's Performance section: one row per benchmark and baseline from ``<slug>/bench.json``, with
    the geometric-mean ratio (> 1: the paper's method is better) and the conditions it was measured in."""
    lines = [
        "",
        "## Performance",
        "",
        "Written from `results/<slug>/bench.json` (`make bench`). Each ratio is the paper's method against its",
        "baseline, both measured in the same run: the geometric mean over the benchmark's cases of how many",
        "times better ours is (> 1: ours wins; time and memory: baseline / ours; throughput: ours / baseline).",
        "",
        "| paper | benchmark | compares | against | ratio | cases | threads | load (start → end) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    found = False
    for path in sorted(Path(out_root).glob("*/bench.json")):
        try:
            entries = read_bench(path)
        except ValueError as err:
            found = True
            lines.append(f"| `{path.parent.name}` | - | unreadable: {cell(err)} | - | - | - | - | - |")
            continue
        for script, b in entries.items():
            tiny = " (tiny: not a measurement)" if b["tiny"] else ""
            for against, ratio in b["headlines"].items():
                n = sum(c["against"] == against for c in b["cases"])
                found = True
                lines.append(
                    f"| [`{path.parent.name}`](#{path.parent.name}) | `{script}` | {cell(b['compares'])}{tiny} "
                    f"| {cell(against)} | {ratio:.3g}x | {n} | {b['threads'] or '-'} "
                    f"| {_fmt(b['load_start'])} → {_fmt(b['load_end'])} |"
                )
    return lines if found else []


def reproductions(out_root: str | Path) -> list[str]:
    """REPORT's section on whole reproductions: one column per ``<out_root>/reproduce/<name>.json`` (the
    ``verify.json`` of an ``icml26 verify --all`` run, committed there), with each paper's status, wall and CPU
    seconds and load average in that run, and the run's total wall time, papers at once and machine."""
    paths = sorted((Path(out_root) / REPRODUCE).glob("*.json"))
    if not paths:
        return []
    runs = []
    for path in paths:  # a summary that cannot be read is reported as such in its column, as a results.json is
        try:
            data = json.loads(path.read_text())
            runs.append((path.stem, _whole_run(data), {p["slug"]: p for p in data["papers"]}))
        except (OSError, ValueError, KeyError, TypeError) as err:
            runs.append((path.stem, f"unreadable: {cell(err)}", {}))
    lines = [
        "",
        "## Whole reproductions",
        "",
        f"Written from `results/{REPRODUCE}/<run>.json`, each the `verify.json` of one `icml26 verify --all --out DIR`",
        "run (every paper run afresh and compared claim by claim with its committed record), copied there. A",
        "cell is the paper's status in that run and its wall / CPU seconds (load average at start → end).",
        "",
        "| paper | " + " | ".join(f"`{name}`" for name, _, _ in runs) + " |",
        "|---|" + "---|" * len(runs),
        "| whole run | " + " | ".join(whole for _, whole, _ in runs) + " |",
    ]
    for slug in sorted({s for _, _, papers in runs for s in papers}):
        cells = []
        for _, _, papers in runs:
            p = papers.get(slug)
            cells.append(f"{p['status']}, {_timing(p['wall_seconds'], p.get('timing', {}))}" if p else "-")
        lines.append(f"| [`{slug}`](#{slug}) | " + " | ".join(cells) + " |")
    return lines


def _whole_run(summary: dict) -> str:
    jobs, wall = summary.get("jobs", "?"), summary["wall_seconds"]
    return f"{summary['config']}, {jobs} at a time: {wall:.0f} s wall; {platform_line(summary['platform'])}"


def write_report(out_root: str | Path = "results") -> Path:
    """Write ``<out_root>/REPORT.md`` atomically and return its path."""
    path = Path(out_root) / "REPORT.md"
    atomic_write_text(path, render(collect(out_root), [*performance(out_root), *reproductions(out_root)]))
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


def bench_block(path: str | Path) -> list[str]:
    """The Markdown of one ``bench.json``: per benchmark script what it compares, the conditions it was
    measured under, every case (ours, the baseline, the ratio: > 1 ours better) and the geometric means."""
    lines: list[str] = []
    for script, b in read_bench(path).items():
        n = b["threads"]
        threads = f"{n} thread{'s' if n != 1 else ''}" if n else "no torch thread count"
        tiny = " **Tiny run: its ratios mean nothing.**" if b["tiny"] else ""
        lines += [
            f"`{script}`: {b['compares']}. Measured in {b['wall_seconds']:.0f} s, {threads}, load average "
            f"{_fmt(b['load_start'])} → {_fmt(b['load_end'])}.{tiny}",
            "",
            "| case | against | ours | baseline | unit | ratio (> 1: ours better) |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {cell(c['case'])} | {cell(c['against'])} | {_fmt(c['ours'])} | {_fmt(c['baseline'])} | {c['unit']} "
            f"| {c['ratio']:.3g}x |"
            for c in b["cases"]
        ]
        if len(b["cases"]) > len(b["headlines"]):  # some baseline has several cases: their geometric mean
            means = "; ".join(f"{cell(k)} {v:.3g}x" for k, v in b["headlines"].items())
            lines += ["", f"Geometric mean ratio per baseline: {means}."]
        if b["notes"]:
            lines += ["", b["notes"]]
        lines.append("")
    return lines[:-1]


def update_bench_block(readme: str | Path, bench: str | Path) -> bool:
    """Replace the text between the bench markers of ``readme`` by ``bench_block(bench)``; True if it
    changed. A README without both markers raises ValueError naming them."""
    path = Path(readme)
    text = path.read_text()
    if text.count(BENCH_START) != 1 or text.count(BENCH_END) != 1:
        raise ValueError(f"readme={str(path)!r}: expected one {BENCH_START} and one {BENCH_END}")
    head, rest = text.split(BENCH_START, 1)
    tail = rest.split(BENCH_END, 1)[1]
    new = head + BENCH_START + "\n" + "\n".join(bench_block(bench)) + "\n" + BENCH_END + tail
    if new == text:
        return False
    atomic_write_text(path, new)
    return True
