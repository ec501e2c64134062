#!/usr/bin/env python3
"""Build every wheel with ``uv build`` and install each paper's wheel with pip, beside the shared
wheel, into a clean venv; then import it and run ``icml26 list`` there.

Usage: python tools/check_wheels.py [SLUG ...] [--jobs 2] [--dist dist] [--venvs /tmp/icml26-wheels]

This is the user's path (`pip install icml26-<slug>`): it fails when a package's wheel misses a
file or its metadata misses a dependency that the workspace happened to provide.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ci import ROOT, UV, distribution

PACKAGES = ROOT / "packages"


def sh(*cmd: str | Path, **kw) -> str:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, check=False, **kw)
    if proc.returncode != 0:
        command = " ".join(map(str, cmd))
        raise RuntimeError(f"{command} failed ({proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return proc.stdout


def build(dist_name: str, out: Path) -> Path:
    sh(*UV, "build", "--package", dist_name, "--wheel", "-o", out, cwd=ROOT)
    wheels = sorted(out.glob(dist_name.replace("-", "_") + "-*.whl"))
    if not wheels:
        raise RuntimeError(f"uv build made no wheel for {dist_name} in {out}")
    return wheels[-1]


def check(slug: str, shared_wheel: Path, wheel: Path, venvs: Path) -> None:
    """A clean venv, pip install of the two wheels (dependencies resolved by pip), import, icml26 list."""
    venv = venvs / slug
    shutil.rmtree(venv, ignore_errors=True)
    sh(sys.executable, "-m", "venv", venv)
    py = venv / "bin" / "python"
    sh(py, "-m", "pip", "install", "-q", "--no-compile", shared_wheel, wheel)
    module = "icml26_" + slug.replace("-", "_")
    sh(py, "-c", f"import {module}, {module}.experiment as e; assert e.EXPERIMENT.name == {slug!r}", cwd=venvs)
    listing = sh(venv / "bin" / "icml26", "list", cwd=venvs)
    if slug not in listing:
        raise RuntimeError(f"icml26 list in the wheel venv does not show {slug}:\n{listing}")
    shutil.rmtree(venv, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slugs", nargs="*")
    parser.add_argument("--jobs", type=int, default=2, help="venvs installed at once (pip is mostly I/O)")
    parser.add_argument("--dist", default=str(ROOT / "dist"))
    parser.add_argument("--venvs", default=str(Path(tempfile.gettempdir()) / "icml26-wheels"))
    args = parser.parse_args(argv)
    out, venvs = Path(args.dist), Path(args.venvs)
    out.mkdir(parents=True, exist_ok=True)
    venvs.mkdir(parents=True, exist_ok=True)
    slugs = args.slugs or sorted(p.name for p in PACKAGES.iterdir() if (p / "pyproject.toml").is_file())
    shared_wheel = build("icml26-shared", out)
    wheels = {slug: build(distribution(PACKAGES / slug), out) for slug in slugs}

    def one(slug: str) -> str:
        start = time.perf_counter()
        try:
            check(slug, shared_wheel, wheels[slug], venvs)
        except RuntimeError as err:
            return f"wheel FAILED  {slug}: {err}"
        return f"wheel ok      {slug} ({time.perf_counter() - start:.0f} s)"

    failed = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for slug, line in zip(slugs, pool.map(one, slugs)):
            print(line, flush=True)
            if "FAILED" in line:
                failed.append(slug)
    print(f"wheels: {len(slugs) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
