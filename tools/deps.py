#!/usr/bin/env python3
"""deptry for every package: missing, unused, transitive and misplaced dependencies, in two passes.

Usage: python tools/deps.py [SLUG ...] [--python .venv/bin/python] [--jobs 2]

From ``packages/<slug>``, with the ``--python`` environment's deptry (default: the workspace ``.venv``,
which holds every package and extra, so imports map to distributions through installed metadata):
  1. ``deptry src``: the library code against ``[project] dependencies`` with every rule: DEP001 missing,
     DEP002 declared but unused, DEP003 transitive (imported, installed, not declared), DEP004 a
     dev-group dependency imported by the library;
  2. ``deptry . -e '\\.venv' --ignore DEP002,DEP004 --known-first-party icml26_<module>``: tests and
     benchmarks too, where dev-group dependencies are allowed, so an import no group declares fails.
One environment serves all packages: deptry's findings depend on each package's own pyproject and on
the import-to-distribution map, which is the same in any environment that has the distribution installed.
Prints deptry's findings and one line per package; exits 1 if any package has a finding.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ROOT / "packages"


def passes(slug: str) -> list[list[str]]:
    module = "icml26_" + slug.replace("-", "_")
    return [
        ["src"],
        [".", "-e", r"\.venv", "--ignore", "DEP002,DEP004", "--known-first-party", module],
    ]


def run(slug: str, python: str, packages: Path = PACKAGES) -> tuple[str, list[str]]:
    """deptry's findings for one package (both passes), as printed lines; [] when clean."""
    findings = []
    for args in passes(slug):
        proc = subprocess.run(
            [python, "-m", "deptry", *args, "--no-ansi"],
            cwd=packages / slug,
            capture_output=True,
            text=True,
            check=False,
        )
        lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ": DEP" in ln]
        if proc.returncode != 0 and not lines:
            lines = [f"deptry {' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()[-500:]}"]
        findings += [f"{slug}: {ln.strip()}" for ln in lines if f"{slug}: {ln.strip()}" not in findings]
    return slug, findings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slugs", nargs="*")
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"), help="an env with deptry")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    known = sorted(p.name for p in PACKAGES.iterdir() if (p / "pyproject.toml").is_file())
    unknown = [s for s in args.slugs if s not in known]
    if unknown:
        print(f"deps: unknown packages {unknown}; known: {', '.join(known)}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    failed = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        python = os.path.abspath(args.python)  # deptry runs from each package folder; keep the venv symlink
        for slug, findings in pool.map(lambda s: run(s, python), args.slugs or known):
            for line in findings:
                print(line)
            print(
                f"deptry {'ok    ' if not findings else 'FAILED'} {slug}" + (f" ({len(findings)})" if findings else "")
            )
            if findings:
                failed.append(slug)
    total = len(args.slugs or known)
    print(f"deptry: {total - len(failed)} clean, {len(failed)} with findings in {time.perf_counter() - start:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
