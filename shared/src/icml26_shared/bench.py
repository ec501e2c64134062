"""Benchmarks: the one way a package measures its method against a baseline and keeps the numbers.

A package's ``benchmarks/bench_<what>.py`` defines ``run(tiny: bool) -> Benchmark`` and ends with
``bench_main("<slug>", run)``. ``run`` times the method and its baseline in the same process, case by
case (``Case``: ours and the baseline in one unit); a ratio says how many times better ours is (> 1:
ours wins), whatever the unit: baseline / ours for seconds and bytes, ours / baseline for a throughput.
``bench_main`` prints the table and, with ``--out DIR``, writes ``DIR/<slug>/bench.json`` (one entry per
benchmark script, replaced atomically) with the platform, the thread count and the load average at start
and end, so that a number measured beside other work is visible as such. ``tiny`` runs the same code at
a size that takes a second: the packages' tests call it (``testing.check_benchmarks``) so a benchmark
cannot rot, and its ratios mean nothing. Benchmarks print ratios; nothing asserts a time.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .cache import atomic_write_text
from .records import environment, git_sha, load_average
from .validation import check_int, fail

LOWER_IS_BETTER = ("s", "ms", "B", "MB", "GB", "FLOP", "calls", "evaluations")
HIGHER_IS_BETTER = ("tokens/s", "items/s", "steps/s", "queries/s")
UNITS = LOWER_IS_BETTER + HIGHER_IS_BETTER


@dataclass(frozen=True)
class Case:
    """One measured case: the method (``ours``) and the baseline ``against`` in one ``unit``."""

    case: str
    against: str
    ours: float
    baseline: float
    unit: str = "s"

    def __post_init__(self) -> None:
        if self.unit not in UNITS:
            raise fail("unit", self.unit, f"one of {list(UNITS)}")
        for name in ("ours", "baseline"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise fail(name, value, f"a finite measurement > 0 in {self.unit} (case {self.case!r})")

    @property
    def ratio(self) -> float:
        """How many times better ours is than the baseline (> 1: ours wins)."""
        return self.baseline / self.ours if self.unit in LOWER_IS_BETTER else self.ours / self.baseline


@dataclass(frozen=True)
class Benchmark:
    """What one benchmark script measured: ``compares`` says what against what, in words (e.g. "our
    log-domain Sinkhorn vs POT ``ot.sinkhorn(method='sinkhorn_log')``, time to tol 1e-8")."""

    compares: str
    cases: tuple[Case, ...]
    notes: str = ""
    # the torch threads it timed with, for a script that restores its caller's count before returning
    # (default: the count torch has after ``run``)
    threads: int | None = None

    def __post_init__(self) -> None:
        if not self.cases:
            raise fail("cases", self.cases, "at least one measured Case")
        if self.threads is not None:
            check_int("threads", self.threads, 1)

    def headlines(self) -> dict[str, float]:
        """Per baseline, the geometric mean of its cases' ratios."""
        by_baseline: dict[str, list[float]] = {}
        for c in self.cases:
            by_baseline.setdefault(c.against, []).append(c.ratio)
        return {k: math.exp(statistics.fmean(math.log(r) for r in v)) for k, v in by_baseline.items()}


def best_seconds(fn: Callable[[], Any], repeats: int = 3, clock: Callable[[], float] = time.perf_counter) -> float:
    """The fastest of ``repeats`` timings of ``fn()`` (the least disturbed by other work); ``clock`` is wall
    time by default, ``time.process_time`` for this process's CPU time (steadier beside other work)."""
    check_int("repeats", repeats, 1)
    times = []
    for _ in range(repeats):
        start = clock()
        fn()
        times.append(clock() - start)
    return min(times)


def interleaved_seconds(
    fns: Sequence[Callable[[], Any]], rounds: int = 5, clock: Callable[[], float] = time.perf_counter
) -> list[float]:
    """Median seconds (``clock``, as in ``best_seconds``) of each of ``fns``, timed in turn round after round,
    so that a change in machine load during the run touches them all alike."""
    check_int("rounds", rounds, 1)
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for fn, out in zip(fns, times, strict=True):
            start = clock()
            fn()
            out.append(clock() - start)
    return [statistics.median(t) for t in times]


@dataclass
class BenchRecord:
    """One script's entry in ``bench.json``."""

    paper: str
    script: str
    compares: str
    headlines: dict[str, float]
    cases: list[dict[str, Any]]
    notes: str
    tiny: bool
    threads: int | None
    load_start: float
    load_end: float
    wall_seconds: float
    platform: dict[str, Any] = field(default_factory=dict)
    git_sha: str | None = None


def table(bench: Benchmark) -> str:
    """The cases as a plain-text table, then each baseline's geometric-mean ratio."""
    w = max(len("case"), *(len(c.case) for c in bench.cases))
    v = max(len("against"), *(len(c.against) for c in bench.cases))
    rows = [f"{'case':<{w}} {'against':<{v}} {'ours':>11} {'baseline':>11} {'unit':>11} {'ratio':>7}"]
    for c in bench.cases:
        rows.append(f"{c.case:<{w}} {c.against:<{v}} {c.ours:>11.4g} {c.baseline:>11.4g} {c.unit:>11} {c.ratio:>7.2f}")
    rows += [f"geometric mean ratio vs {k}: {v:.2f} (> 1: ours better)" for k, v in bench.headlines().items()]
    return "\n".join(rows)


def write_bench(record: BenchRecord, out_root: str | Path) -> Path:
    """Put ``record`` into ``<out_root>/<paper>/bench.json``, replacing that script's previous entry."""
    path = Path(out_root) / record.paper / "bench.json"
    entries: dict[str, Any] = {}
    if path.is_file():
        try:
            entries = json.loads(path.read_text())["benchmarks"]
        except (ValueError, KeyError, TypeError) as err:
            raise fail("bench.json", str(path), f"a bench.json written by icml26 ({err}); remove it") from None
    entries[record.script] = asdict(record)
    text = json.dumps({"paper": record.paper, "benchmarks": dict(sorted(entries.items()))}, indent=2) + "\n"
    atomic_write_text(path, text)
    return path


def read_bench(path: str | Path) -> dict[str, dict[str, Any]]:
    """The entries of a ``bench.json`` by script; ValueError when it cannot be read."""
    try:
        return dict(json.loads(Path(path).read_text())["benchmarks"])
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path}: unreadable bench.json ({err})") from None


def measure(
    paper: str, script: str, run: Callable[[bool], Benchmark], tiny: bool = False
) -> tuple[Benchmark, BenchRecord]:
    """Run a benchmark; what it measured, and its record with the conditions it was measured under."""
    load_start, start = load_average(), time.perf_counter()
    bench = run(tiny)
    if not isinstance(bench, Benchmark):
        raise fail("run", type(bench).__name__, "a function returning a Benchmark")
    torch = sys.modules.get("torch")
    record = BenchRecord(
        paper=paper,
        script=script,
        compares=bench.compares,
        headlines={k: round(v, 4) for k, v in bench.headlines().items()},
        cases=[{**asdict(c), "ratio": round(c.ratio, 4)} for c in bench.cases],
        notes=bench.notes,
        tiny=tiny,
        threads=bench.threads or (torch.get_num_threads() if torch is not None else None),
        load_start=load_start,
        load_end=load_average(),
        wall_seconds=round(time.perf_counter() - start, 2),
        platform=environment(),
        git_sha=git_sha(),
    )
    return bench, record


def bench_main(paper: str, run: Callable[[bool], Benchmark], argv: Sequence[str] | None = None) -> int:
    """A benchmark script's command line: ``[--tiny] [--out RESULTS_ROOT]``."""
    script = Path(sys.argv[0]).stem
    parser = argparse.ArgumentParser(prog=script, description=(sys.modules["__main__"].__doc__ or "").split("\n")[0])
    parser.add_argument("--tiny", action="store_true", help="the smallest sizes: checks it runs; ratios mean nothing")
    parser.add_argument(
        "--out", default=None, help="results root: write <out>/<paper>/bench.json (default: print only)"
    )
    args = parser.parse_args(argv)
    bench, record = measure(paper, script, run, args.tiny)
    print(table(bench))
    print(f"load average {record.load_start} -> {record.load_end}; {record.wall_seconds:.0f} s")
    if args.out:
        print(f"wrote {write_bench(record, args.out)}")
    return 0
