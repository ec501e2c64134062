"""``icml26 reproduce``: run many papers, locally in worker processes or on a cluster with submitit.

Each paper runs in a process of its own, so one paper that crashes, even hard, does not stop the
others; a paper whose ``results.json`` is up to date (same fingerprint: config, version and source)
is skipped unless ``force``.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from .log import get_logger
from .papers import load
from .records import Record, run_dir
from .validation import check_choice, check_int

log = get_logger("icml26.reproduce")
EXECUTORS = ("local", "slurm")
SUBMITIT_CLUSTERS = ("slurm", "local", "debug")


@dataclass(frozen=True)
class Outcome:
    slug: str
    status: str  # "ran", "skipped" or "failed"
    holding: int = 0
    total: int = 0
    wall_seconds: float = 0.0
    error: str = ""


def run_paper(slug: str, config: str, out_root: str) -> Outcome:
    """Run one paper in this process and write ``results.json`` into its ``run_dir``."""
    start = time.perf_counter()
    try:
        record = load(slug).run(config, run_dir(out_root, slug, config))
    except Exception as err:  # one paper's failure is an outcome, not a crash
        return Outcome(slug, "failed", wall_seconds=time.perf_counter() - start, error=f"{type(err).__name__}: {err}")
    return Outcome(slug, "ran", record.holding, len(record.claims), record.wall_seconds)


def up_to_date(slug: str, config: str, out_root: str) -> Record | None:
    """The stored record if it was made from the same config, version and source; else None."""
    path = run_dir(out_root, slug, config) / "results.json"
    if not path.is_file():
        return None
    try:
        record = Record.load(path)
        experiment = load(slug)
        current = experiment.fingerprint(experiment.config(config))
    except (ValueError, ImportError) as err:
        log.warning("%s: stored results not reusable (%s)", slug, err)
        return None
    return record if record.config_name == config and record.fingerprint == current else None


class Children:
    """The paper processes a ``reproduce`` call has started, so that Ctrl-C stops them too: ``stop`` sends
    each a SIGINT (the paper exits as after Ctrl-C, its results.json untouched), kills one that has not
    exited after ``grace`` seconds, and keeps new ones from starting."""

    def __init__(self, grace: float = 10.0) -> None:
        self.grace = grace
        self.live: set[subprocess.Popen] = set()
        self.stopping = False
        self.lock = threading.Lock()

    def start(self, cmd: list[str], logfile: IO[str]) -> subprocess.Popen | None:
        """Start ``cmd`` with its output into ``logfile``; None once ``stop`` was called."""
        with self.lock:
            if self.stopping:
                return None
            proc = subprocess.Popen(cmd, stdout=logfile, stderr=subprocess.STDOUT)
            self.live.add(proc)
            return proc

    def wait(self, proc: subprocess.Popen) -> int:
        code = proc.wait()
        with self.lock:
            self.live.discard(proc)
        return code

    def stop(self) -> None:
        with self.lock:
            self.stopping = True
            live = list(self.live)
        for proc in live:
            proc.send_signal(signal.SIGINT)
        for proc in live:
            try:
                proc.wait(self.grace)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _subprocess_run(slug: str, config: str, out_root: str, verbose: bool, children: Children) -> Outcome:
    """Run a paper through ``python -m icml26_shared run`` in a fresh process; its log goes to run.log."""
    out = run_dir(out_root, slug, config)
    out.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "icml26_shared", "run", slug, "--config", config, "--out", out_root]
    if verbose:
        cmd.append("--verbose")
    start = time.perf_counter()
    with open(out / "run.log", "w") as logfile:
        proc = children.start(cmd, logfile)
        if proc is None:
            return Outcome(slug, "failed", error="not started: interrupted")
        code = children.wait(proc)
    wall = time.perf_counter() - start
    if code != 0:
        tail = (out / "run.log").read_text().strip().splitlines()[-1:] or [""]
        return Outcome(slug, "failed", wall_seconds=wall, error=f"exit {code}: {tail[0]} (see {out / 'run.log'})")
    record = Record.load(out / "results.json")
    return Outcome(slug, "ran", record.holding, len(record.claims), record.wall_seconds)


class Progress:
    """A line on stderr per paper that ends (``[3/38 done, 412 s] fuse ran in 95 s; running: ...``), so a
    piped or logged run shows its progress too; on a terminal (or with ``force``) also a line per start."""

    def __init__(self, total: int, force: bool = False) -> None:
        self.total, self.done, self.running = total, 0, []
        self.start = time.perf_counter()
        self.starts = force or sys.stderr.isatty()
        self.lock = threading.Lock()

    def _show(self, event: str) -> None:
        running = ", ".join(self.running) or "-"
        elapsed = time.perf_counter() - self.start
        print(f"[{self.done}/{self.total} done, {elapsed:.0f} s] {event}; running: {running}", file=sys.stderr)

    def track(self, slug: str, fn: Callable[..., Outcome], *args: Any) -> Outcome:
        """Call ``fn(*args)`` for ``slug``, reporting its start (on a terminal) and its end."""
        with self.lock:
            self.running.append(slug)
            if self.starts:
                self._show(f"{slug} started")
        try:
            outcome = fn(*args)
        finally:
            with self.lock:
                self.running.remove(slug)
                self.done += 1
        with self.lock:
            self._show(f"{slug} {outcome.status} in {outcome.wall_seconds:.0f} s")
        return outcome


def expected_seconds(slugs: Sequence[str], config: str, root: str | Path, jobs: int) -> tuple[float, list[str]]:
    """How long running ``slugs`` should take at ``jobs`` papers at once, from the wall times of their
    stored records under ``root``: the larger of (sum / jobs) and the longest one. Also the papers with no
    stored record, which the estimate leaves out."""
    walls, unknown = [], []
    for slug in slugs:
        path = run_dir(root, slug, config) / "results.json"
        try:
            walls.append(Record.load(path).wall_seconds)
        except ValueError:
            unknown.append(slug)
    return (max(sum(walls) / jobs, max(walls)) if walls else 0.0), unknown


def reproduce(
    slugs: Sequence[str],
    config: str = "quick",
    out_root: str = "results",
    jobs: int = 1,
    executor: str = "local",
    force: bool = False,
    submitit_cluster: str = "slurm",
    timeout_min: int = 60,
    verbose: bool = False,
    timing_root: str | Path | None = None,
) -> list[Outcome]:
    """Run ``slugs`` (skipping up-to-date ones unless ``force``); returns one Outcome per paper. Before
    starting, one line on stderr gives the expected time from the records under ``timing_root`` (default:
    ``out_root``)."""
    check_int("jobs", jobs, 1)
    check_choice("executor", executor, EXECUTORS)
    check_choice("submitit_cluster", submitit_cluster, SUBMITIT_CLUSTERS)
    check_int("timeout_min", timeout_min, 1)
    outcomes: dict[str, Outcome] = {}
    todo = []
    for slug in slugs:
        load(slug)  # unknown slugs fail here, before anything runs
        record = None if force else up_to_date(slug, config, out_root)
        if record is not None:
            outcomes[slug] = Outcome(slug, "skipped", record.holding, len(record.claims), record.wall_seconds)
        else:
            todo.append(slug)
    expected, unknown = expected_seconds(todo, config, timing_root or out_root, jobs)
    print(
        f"{len(todo)} to run ({len(outcomes)} up to date), {jobs} at a time: expected ~{expected / 60:.0f} min "
        "from the stored wall times" + (f" (none stored for {', '.join(unknown)})" if unknown else ""),
        file=sys.stderr,
    )
    if executor == "local":
        tracker, children = Progress(len(todo)), Children()
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = {
                s: pool.submit(tracker.track, s, _subprocess_run, s, config, out_root, verbose, children) for s in todo
            }
            try:
                outcomes.update({s: f.result() for s, f in futures.items()})
            except KeyboardInterrupt:  # Ctrl-C: no paper process outlives this one
                children.stop()
                raise
    elif todo:
        import submitit

        ex = submitit.AutoExecutor(folder=Path(out_root) / ".submitit", cluster=submitit_cluster)
        ex.update_parameters(timeout_min=timeout_min, slurm_array_parallelism=jobs, name="icml26")
        submitted = {s: ex.submit(run_paper, s, config, out_root) for s in todo}
        for slug, job in submitted.items():
            try:
                outcomes[slug] = job.result()
            except Exception as err:  # a job that died on the cluster
                outcomes[slug] = Outcome(slug, "failed", error=f"{type(err).__name__}: {err}")
    return [outcomes[s] for s in slugs]


def summary_table(outcomes: Sequence[Outcome]) -> str:
    """A plain-text table of outcomes, one row per paper."""
    rows = [f"{'paper':<22} {'status':<8} {'claims':>7} {'wall s':>8}  error"]
    for o in outcomes:
        claims = f"{o.holding}/{o.total}" if o.total else "-"
        rows.append(f"{o.slug:<22} {o.status:<8} {claims:>7} {o.wall_seconds:>8.1f}  {o.error}")
    return "\n".join(rows)
