#!/usr/bin/env python3
"""The per-package CI matrix: each member's tests in an environment synced from its own dependencies.

Usage: python tools/ci.py [SLUG_OR_MEMBER ...] [--timeout 300] [--jobs 2]

For every workspace member with a tests/ folder (shared, tools, packages/*), in order:
  UV_PROJECT_ENVIRONMENT=.venvs/<name> uv sync --locked --package <distribution>
  .venvs/<name>/bin/python -m pytest <member>/tests  (junit XML read for the counts)
so a dependency a package forgot to declare fails its tests. Prints one row per member and, as its
last line, ``tests: N passed, M failed`` summed over all members. Exit 1 if anything failed.
``--jobs`` runs that many members at once (rows still print in member order); their times then
include the contention for the cores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST_BUDGET_S = 40  # per package, on 2 cores (CONVENTIONS section 6)
UV = [shutil.which("uv")] if shutil.which("uv") else [sys.executable, "-m", "uv"]  # pip's uv may not be on PATH


def sh(*cmd: str | Path, **kw) -> str:
    """Run a command; its stdout, or RuntimeError with the command line and the tail of its output."""
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, check=False, **kw)
    if proc.returncode != 0:
        command = " ".join(map(str, cmd))
        raise RuntimeError(f"{command} failed ({proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return proc.stdout


@dataclass
class Result:
    member: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    seconds: float = 0.0
    note: str = ""


def members(root: Path = ROOT) -> list[Path]:
    """Workspace members that have tests: shared, tools, then packages/* in name order."""
    found = [root / "shared", root / "tools", *sorted(p for p in (root / "packages").glob("*") if p.is_dir())]
    return [m for m in found if (m / "pyproject.toml").is_file() and (m / "tests").is_dir()]


def distribution(member: Path) -> str:
    return tomllib.loads((member / "pyproject.toml").read_text())["project"]["name"]


def junit_counts(path: Path) -> tuple[int, int, int]:
    """(passed, failed, skipped) from a pytest junit XML file; errors count as failed."""
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    tests = sum(int(s.get("tests", 0)) for s in suites)
    failed = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    return tests - failed - skipped, failed, skipped


def run_member(member: Path, timeout: int) -> Result:
    name = member.name
    result = Result(name)
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(ROOT / ".venvs" / name), "CI": "true"}
    sync = subprocess.run(
        [*UV, "sync", "--locked", "--package", distribution(member)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if sync.returncode != 0:
        result.failed, result.note = 1, "uv sync failed: " + sync.stderr.strip().splitlines()[-1]
        print(sync.stderr, file=sys.stderr)
        return result
    report = ROOT / ".venvs" / f"{name}.junit.xml"
    report.unlink(missing_ok=True)
    python = ROOT / ".venvs" / name / "bin" / "python"
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [str(python), "-m", "pytest", str(member / "tests"), "-q", "-m", "not slow", f"--junitxml={report}"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        result.failed, result.note = 1, f"timed out after {timeout} s"
        return result
    result.seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1) or not report.is_file():
        print(proc.stdout[-4000:], proc.stderr[-4000:], sep="\n", file=sys.stderr)
        result.failed, result.note = 1, f"pytest exited {proc.returncode}"
        return result
    result.passed, result.failed, result.skipped = junit_counts(report)
    if result.failed:
        print(proc.stdout[-6000:], file=sys.stderr)
    if result.passed + result.failed == 0:
        result.failed, result.note = 1, "ran no test"
    elif result.seconds > TEST_BUDGET_S:
        result.note = f"over the {TEST_BUDGET_S} s budget"
    return result


def select(names: list[str]) -> list[Path]:
    all_members = members()
    if not names:
        return all_members
    by_name = {m.name: m for m in all_members}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise SystemExit(f"ci: unknown members {unknown}; expected some of {sorted(by_name)}")
    return [by_name[n] for n in names]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("members", nargs="*", help="member folder names (default: all)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per member's pytest")
    parser.add_argument("--list-json", action="store_true", help="print the member names as JSON (the CI matrix)")
    parser.add_argument("--jobs", type=int, default=1, help="members tested at once")
    args = parser.parse_args(argv)
    if args.list_json:
        print(json.dumps([m.name for m in select(args.members)]))
        return 0
    results = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for r in pool.map(lambda member: run_member(member, args.timeout), select(args.members)):
            results.append(r)
            counts = f"{r.passed:>4} passed {r.failed:>3} failed {r.skipped:>3} skipped"
            print(f"{r.member:<22} {counts} {r.seconds:>6.1f} s  {r.note}", flush=True)
    passed, failed = sum(r.passed for r in results), sum(r.failed for r in results)
    print(f"tests: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
