"""The ``icml26`` command: ``list``, ``run``, ``reproduce``, ``verify``, ``report``; and each paper's own
``icml26-<slug>`` command (``paper_main``) with ``run``, ``configs`` and ``claims``.

Where results go: ``--out DIR`` when given, else ``$ICML26_RESULTS``, else the user's data folder
(``records.default_results_root``). The repository's committed ``results/`` is written only when a
command is told so (``--out results``; the Makefile does that for ``make reproduce OUT=results``)."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .log import configure_logging
from .papers import installed, load, n_papers, unknown_paper
from .records import QUICK, RESULTS_ENV, Record, default_results_root, run_dir
from .validation import check_int, fail

OUT_HELP = (
    f"results root; a paper writes <out>/<slug>/ for quick, <out>/<slug>/<config>/ for the others "
    f"(default: ${RESULTS_ENV}, else the user's data folder)"
)
CONFIG_HELP = "smoke, quick, paper, or medium where a paper has one (default: quick)"
SLUGS_HELP = "the papers, by slug (`icml26 list` names the installed ones)"


def _add_run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", default="quick", help=CONFIG_HELP)
    p.add_argument("--out", default=None, help=OUT_HELP)


def _add_dry_run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="validate the config, build its model and data pipeline, name what is missing, run one step "
        "where it fits; writes nothing (exit 1 when something is missing or fails)",
    )
    p.add_argument(
        "--device", default="auto", help="with --dry-run: cpu, cuda, or auto: cuda when visible (default: auto)"
    )


def _named_root(out: str | None) -> tuple[Path, str]:
    """The results root and what named it (``--out``, the variable, or the default), for error messages."""
    if out:
        return Path(out).expanduser(), "--out"
    if os.environ.get(RESULTS_ENV):
        return Path(os.environ[RESULTS_ENV]).expanduser(), RESULTS_ENV
    return default_results_root(), "default results root"


def out_root(out: str | None) -> Path:
    """The results root to write into, created and probed with a temporary file before anything is
    computed. Whatever the OS refuses (a file in the way, no permission, /proc) becomes one ValueError
    naming ``--out`` or ``$ICML26_RESULTS`` and the path, never a traceback."""
    path, name = _named_root(out)
    if path.exists() and not path.is_dir():
        raise fail(name, str(path), "a directory (it exists and is not a directory)")
    step = f"creating {path}"
    try:
        path.mkdir(parents=True, exist_ok=True)
        step = f"writing a file in {path}"
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as err:
        raise fail(name, str(path), f"a directory this user can write to ({step}: {err.strerror})") from None
    return path


def results_folder(out: str | None) -> Path | None:
    """The results root to read from: an existing directory. None when the default root (or
    ``$ICML26_RESULTS``) does not exist yet, since nothing has run; a ``--out`` that does not exist, or
    any root that is a file, is a ValueError."""
    path, name = _named_root(out)
    if path.is_dir():
        return path
    if path.exists():
        raise fail(name, str(path), "a results folder (it is a file)")
    if name == "--out":
        raise fail(name, str(path), "an existing results folder (it does not exist)")
    return None


def _state(root: Path, slug: str, config: str) -> str:
    """``5/7 hold (quick)`` for a stored record of ``config``, '' when there is none."""
    path = run_dir(root, slug, config) / "results.json"
    if not path.is_file():
        return ""
    try:
        rec = Record.load(path)
    except ValueError:
        return f"unreadable {path.relative_to(root / slug)}"
    return f"{rec.holding}/{len(rec.claims)} hold ({rec.config_name})"


def cmd_list(args: argparse.Namespace) -> int:
    papers = installed()
    if not papers:
        print("no icml26 papers installed")
        return 0
    root = results_folder(args.out)
    rows = []
    for info in papers.values():
        states = [_state(root, info.slug, config) for config in (QUICK, "medium")] if root else []
        state = "; ".join(s for s in states if s) or "no results"
        rows.append((info.slug, info.version, state, info.summary))
    print(f"results from {root}" if root else f"results from {_named_root(args.out)[0]} (nothing run yet)")
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths, strict=True)) + f"  {row[3]}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    experiment = load(args.slug)
    experiment.config(args.config)  # a bad config name fails before the folder is touched
    if args.dry_run:
        report = experiment.dry_run(args.config, args.device)
        print("\n".join(report.lines()))
        return 0 if report.ok else 1
    if args.device != "auto":
        raise fail("--device", args.device, "no value without --dry-run (a run picks its device from its config)")
    out = run_dir(out_root(args.out), args.slug, args.config)
    record = experiment.run(args.config, out)
    for c in record.claims:
        print(f"{c['verdict']:<13} {c['id']:<28} {c['measured']['mean']:.4g}  ({c['rule']})")
    print(f"{args.slug}: {record.holding}/{len(record.claims)} claims hold; {out}/results.json")
    return 0


def _slugs(args: argparse.Namespace) -> list[str]:
    """The papers named (or every installed one with --all); unknown ones fail, listing the known. With
    --all, a paper without ``--config`` (most have no medium) is left out, named on one line; a named
    paper without it fails, naming the configs it has."""
    known = list(installed())
    if args.all == bool(args.slugs):
        raise ValueError(f"papers={args.slugs!r}, --all={args.all}: expected slugs or --all (one of them)")
    for s in args.slugs:
        if s not in known:
            raise unknown_paper(s, known)
    if not args.all:
        for s in args.slugs:
            load(s).config(args.config)
        return args.slugs
    having = [s for s in known if args.config in load(s).configs]
    if not having:
        raise fail("--config", args.config, "a config at least one installed paper has (smoke, quick, paper)")
    without = [s for s in known if s not in having]
    if without:
        print(f"no {args.config!r} config, left out: {', '.join(without)}", file=sys.stderr)
    return having


def cmd_reproduce(args: argparse.Namespace) -> int:
    from .runner import reproduce, summary_table

    slugs = _slugs(args)
    check_int("--jobs", args.jobs, 1)
    check_int("--timeout-min", args.timeout_min, 1)
    outcomes = reproduce(
        slugs,
        args.config,
        str(out_root(args.out)),
        args.jobs,
        args.executor,
        args.force,
        args.submitit_cluster,
        args.timeout_min,
        args.verbose,
    )
    print(summary_table(outcomes))
    failed = [o.slug for o in outcomes if o.status == "failed"]
    print(
        f"{len(outcomes) - len(failed)} of {n_papers(len(outcomes))} ok"
        + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


def reference_folder(reference: str) -> Path:
    """``--reference``: an existing folder of committed results, checked before anything runs."""
    path = Path(reference).expanduser()
    if not path.is_dir():
        raise fail(
            "--reference",
            reference,
            f"a folder of committed results, <slug>/results.json inside ({path.absolute()} is not a folder): "
            "run from the repository's root, or pass --reference <repository>/results",
        )
    return path


def cmd_verify(args: argparse.Namespace) -> int:
    from .records import platform_line
    from .verify import verification_table, verify, write_summary

    slugs = _slugs(args)  # every argument is checked before anything is printed or created
    check_int("--jobs", args.jobs, 1)
    reference = reference_folder(args.reference)
    scratch = None if args.out else Path(tempfile.mkdtemp(prefix="icml26-verify-"))
    out = scratch or out_root(args.out)
    keep = scratch is None or args.keep  # a scratch folder is removed unless kept or needed to trace a failure
    try:
        started = time.time()
        print(f"verify: {n_papers(len(slugs))}, config {args.config!r}, into {out}; reference {reference}")
        print(f"platform: {platform_line()}")
        results = verify(slugs, args.config, out, reference, args.jobs, args.verbose)
        print(verification_table(results))
        missing = [r.slug for r in results if r.status == "no reference"]
        if missing:
            print(
                f"no reference for {', '.join(missing)} in {reference.absolute()}: pass --reference <committed results>"
            )
        ok = all(r.status == "reproduced" for r in results)
        keep = keep or not ok
        if keep:
            summary = write_summary(results, out / "verify.json", args.config, started, args.jobs)
            print(f"wall {time.time() - started:.0f} s; runs, logs, comparisons and platform in {out} ({summary.name})")
        else:
            print(f"wall {time.time() - started:.0f} s; scratch folder {out} removed (--keep keeps it)")
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0 if ok else 1


def cmd_report(args: argparse.Namespace) -> int:
    from .report import collect, update_bench_block, update_catalogue, write_report

    root = results_folder(args.out)
    path, name = _named_root(args.out)
    if root is None or not any(root.glob("*/results.json")):
        raise fail(name, str(path), "a results folder with <slug>/results.json inside (found none)")
    try:
        report = write_report(root)
    except OSError as err:
        raise fail(name, str(root), f"a folder this user can write REPORT.md into ({err.strerror})") from None
    entries = collect(root)
    bad = [e.slug for e in entries if e.record is None]
    print(f"wrote {report}: {n_papers(len(entries))}" + (f"; unreadable results: {', '.join(bad)}" if bad else ""))
    if args.readme:
        try:
            updated = update_catalogue(args.readme, entries)
        except OSError as err:
            raise fail("--readme", args.readme, f"a README this user can read and write ({err.strerror})") from None
        print(f"updated {updated} catalogue rows in {args.readme}")
        packages = Path(args.readme).parent / "packages"
        for bench in sorted(root.glob("*/bench.json")):
            readme = packages / bench.parent.name / "README.md"
            if readme.is_file() and update_bench_block(readme, bench):
                print(f"updated the benchmark tables in {readme} from {bench}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="icml26", description="Run and report the icml26 paper reproductions.")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, about: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=about, description=about[0].upper() + about[1:] + ".")

    p = command("list", "installed papers and the state of their results")
    p.add_argument("--out", default=None, help=OUT_HELP)
    p.set_defaults(func=cmd_list)
    p = command("run", "run one paper's reproduction")
    p.add_argument("slug", help="the paper, by slug (`icml26 list` names the installed ones)")
    _add_run_args(p)
    _add_dry_run_args(p)
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    p.set_defaults(func=cmd_run)
    p = command("reproduce", "run many papers, skipping those whose results are up to date")
    p.add_argument("slugs", nargs="*", help=SLUGS_HELP)
    p.add_argument("--all", action="store_true", help="every installed paper")
    _add_run_args(p)
    p.add_argument("--jobs", type=int, default=1, help="papers at once (default: 1)")
    p.add_argument("--executor", default="local", choices=["local", "slurm"], help="where papers run (default: local)")
    p.add_argument(
        "--submitit-cluster",
        default="slurm",
        choices=["slurm", "local", "debug"],
        help="submitit backend for --executor slurm; local/debug test it without a cluster (default: slurm)",
    )
    p.add_argument("--timeout-min", type=int, default=60, help="per-paper job time limit on the cluster (default: 60)")
    p.add_argument("--force", action="store_true", help="rerun papers whose results are up to date")
    p.set_defaults(func=cmd_reproduce)
    p = command("verify", "re-run papers and compare each claim with the committed results")
    p.add_argument("slugs", nargs="*", help=SLUGS_HELP)
    p.add_argument("--all", action="store_true", help="every installed paper")
    p.add_argument("--config", default="quick", help=CONFIG_HELP)
    p.add_argument(
        "--out",
        default=None,
        help="where the new runs go (default: a scratch folder, removed when every claim reproduced; see --keep)",
    )
    p.add_argument("--keep", action="store_true", help="keep the scratch folder even when every claim reproduced")
    p.add_argument(
        "--reference",
        default="results",
        help="the folder of committed results to compare with, <slug>/results.json inside "
        "(default: results, relative to the current folder: the repository's results/ from its root)",
    )
    p.add_argument("--jobs", type=int, default=1, help="papers at once (default: 1)")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    p.set_defaults(func=cmd_verify)
    p = command("report", "write <out>/REPORT.md from every <out>/<slug>/results.json")
    p.add_argument(
        "--out",
        default=None,
        help=f"the results folder to report on (default: ${RESULTS_ENV}, else the user's data folder)",
    )
    p.add_argument(
        "--readme",
        default=None,
        help="also update the status column of this README's catalogue and the benchmark tables of "
        "packages/<slug>/README.md beside it from <out>/<slug>/bench.json",
    )
    p.set_defaults(func=cmd_report)
    return parser


def _short(value: Any) -> str:
    """A value for one line: long lists become their ends and length (500 seeds are not 500 numbers)."""
    if isinstance(value, list) and len(value) > 8:
        if all(isinstance(v, int) for v in value) and value == list(range(value[0], value[0] + len(value))):
            return f"{value[0]}..{value[-1]} ({len(value)} values)"
        return f"[{_short(value[0])}, {_short(value[1])}, ..., {_short(value[-1])}] ({len(value)} values)"
    return repr(value)


def describe_config(values: dict[str, Any]) -> str:
    """``name=value`` pairs of a config, long lists summarised."""
    return ", ".join(f"{k}={_short(v)}" for k, v in values.items())


def _dispatch(prog: str, func: Callable[[], int]) -> int:
    """Run a command: a bad argument or path is one line and exit 2; Ctrl-C is one line and exit 130
    (results are written atomically and scratch folders removed on the way out, so nothing is lost)."""
    try:
        return func()
    except ValueError as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted; results written before it are kept", file=sys.stderr)
        return 130


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(getattr(args, "verbose", False))
    return _dispatch("icml26", lambda: args.func(args))


def paper_main(slug: str, argv: Sequence[str] | None = None) -> int:
    """``icml26-<slug> run|configs|claims``: one paper's command."""
    parser = argparse.ArgumentParser(prog=f"icml26-{slug}", description=f"Reproduce {slug} in miniature.")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, about in [
        ("run", "run the reproduction and write results.json"),
        ("configs", "the configs and their values"),
        ("claims", "the claims and their rules"),
    ]:
        sub.add_parser(name, help=about, description=about[0].upper() + about[1:] + ".")
    _add_run_args(sub.choices["run"])
    _add_dry_run_args(sub.choices["run"])
    args = parser.parse_args(argv)
    configure_logging(args.verbose)
    args.slug = slug

    def command() -> int:
        experiment = load(slug)
        if args.command == "run":
            return cmd_run(args)
        if args.command == "configs":
            for name, cfg in experiment.configs.items():
                print(f"{name}: {describe_config(cfg.as_dict())}")
        else:
            for c in experiment.claims:
                print(f"{c.id}: {c.statement}\n    paper: {c.paper}\n    rule: {c.rule}")
        return 0

    return _dispatch(f"icml26-{slug}", command)


if __name__ == "__main__":
    sys.exit(main())
