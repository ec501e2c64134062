"""The ``icml26`` command: ``list``, ``run``, ``reproduce``, ``verify``, ``report``; and each paper's own
``icml26-<slug>`` command (``paper_main``) with ``run``, ``configs`` and ``claims``.

Where results go: ``--out DIR`` when given, else ``$ICML26_RESULTS``, else the user's data folder
(``records.default_results_root``). The repository's committed ``results/`` is written only when a
command is told so (``--out results``; the Makefile does that for ``make reproduce OUT=results``)."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .log import configure_logging
from .papers import installed, load, unknown_paper
from .records import Record, default_results_root
from .validation import fail

OUT_HELP = "results root; a paper writes <out>/<slug>/ (default: $ICML26_RESULTS or the user's data folder)"


def _add_run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", default="quick", help="smoke, quick (default) or paper")
    p.add_argument("--out", default=None, help=OUT_HELP)


def out_root(out: str | None) -> Path:
    """The results root to write into, checked before anything is computed: an existing directory
    that this user can write to, or a path whose nearest existing parent is one (it is created)."""
    path = Path(out).expanduser() if out else default_results_root()
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        raise fail("--out", str(path), f"a directory path ({probe} exists and is not a directory)")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise fail("--out", str(path), f"a directory this user can write to ({probe} is not writable)")
    path.mkdir(parents=True, exist_ok=True)
    return path


def cmd_list(args: argparse.Namespace) -> int:
    papers = installed()
    if not papers:
        print("no icml26 papers installed")
        return 0
    root = Path(args.out).expanduser() if args.out else default_results_root()
    print(f"results from {root}")
    for info in papers.values():
        path = root / info.slug / "results.json"
        state = "no results"
        if path.is_file():
            try:
                rec = Record.load(path)
                state = f"{rec.holding}/{len(rec.claims)} hold ({rec.config_name})"
            except ValueError:
                state = "unreadable results.json"
        print(f"{info.slug:<22} {info.version:<8} {state:<22} {info.summary}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    experiment = load(args.slug)
    experiment.config(args.config)  # a bad config name fails before the folder is touched
    out = out_root(args.out) / args.slug
    record = experiment.run(args.config, out)
    for c in record.claims:
        print(f"{c['verdict']:<13} {c['id']:<28} {c['measured']['mean']:.4g}  ({c['rule']})")
    print(f"{args.slug}: {record.holding}/{len(record.claims)} claims hold; {out}/results.json")
    return 0


def _slugs(args: argparse.Namespace) -> list[str]:
    """The papers named (or every installed one with --all); unknown ones fail, listing the known."""
    known = list(installed())
    if args.all == bool(args.slugs):
        raise ValueError(f"papers={args.slugs!r}, --all={args.all}: expected slugs or --all (one of them)")
    slugs = known if args.all else args.slugs
    for s in slugs:
        if s not in known:
            raise unknown_paper(s, known)
    return slugs


def cmd_reproduce(args: argparse.Namespace) -> int:
    from .runner import reproduce, summary_table

    slugs = _slugs(args)
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
        f"{len(outcomes) - len(failed)} of {len(outcomes)} papers ok"
        + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


def cmd_verify(args: argparse.Namespace) -> int:
    from .verify import platform_line, verification_table, verify, write_summary

    slugs = _slugs(args)
    for s in slugs:
        load(s).config(args.config)  # a bad config fails before anything runs
    scratch = args.out is None
    out = Path(tempfile.mkdtemp(prefix="icml26-verify-")) if scratch else out_root(args.out)
    started = time.time()
    print(f"verify: {len(slugs)} papers, config {args.config!r}, into {out}; reference {args.reference}")
    print(f"platform: {platform_line()}")
    results = verify(slugs, args.config, out, args.reference, args.jobs, args.verbose)
    print(verification_table(results))
    summary = write_summary(results, out / "verify.json", args.config, started)
    print(f"wall {time.time() - started:.0f} s; comparisons and platform in {summary}")
    return 0 if all(r.status == "reproduced" for r in results) else 1


def cmd_report(args: argparse.Namespace) -> int:
    from .report import collect, update_catalogue, write_report

    root = out_root(args.out)
    path = write_report(root)
    entries = collect(root)
    bad = [e.slug for e in entries if e.record is None]
    print(f"wrote {path}: {len(entries)} papers" + (f"; unreadable results: {', '.join(bad)}" if bad else ""))
    if args.readme:
        print(f"updated {update_catalogue(args.readme, entries)} catalogue rows in {args.readme}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="icml26", description="Run and report the icml26 paper reproductions.")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("list", help="installed papers and the state of their results")
    p.add_argument("--out", default=None, help=OUT_HELP)
    p.set_defaults(func=cmd_list)
    p = sub.add_parser("run", help="run one paper's reproduction")
    p.add_argument("slug")
    _add_run_args(p)
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("reproduce", help="run many papers, skipping up-to-date results")
    p.add_argument("slugs", nargs="*")
    p.add_argument("--all", action="store_true", help="every installed paper")
    _add_run_args(p)
    p.add_argument("--jobs", type=int, default=1, help="papers at once")
    p.add_argument("--executor", default="local", choices=["local", "slurm"])
    p.add_argument(
        "--submitit-cluster",
        default="slurm",
        choices=["slurm", "local", "debug"],
        help="submitit backend for --executor slurm (local/debug: test it without a cluster)",
    )
    p.add_argument("--timeout-min", type=int, default=60, help="per-paper job time limit on the cluster")
    p.add_argument("--force", action="store_true", help="rerun papers whose results are up to date")
    p.set_defaults(func=cmd_reproduce)
    p = sub.add_parser(
        "verify", help="re-run papers and compare each claim with the committed results (see icml26_shared.verify)"
    )
    p.add_argument("slugs", nargs="*")
    p.add_argument("--all", action="store_true", help="every installed paper")
    p.add_argument("--config", default="quick", help="smoke, quick (default) or paper")
    p.add_argument("--out", default=None, help="where the new runs go (default: a fresh scratch folder)")
    p.add_argument("--reference", default="results", help="the committed snapshot to compare with")
    p.add_argument("--jobs", type=int, default=1, help="papers at once")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    p.set_defaults(func=cmd_verify)
    p = sub.add_parser("report", help="write <out>/REPORT.md from every results.json")
    p.add_argument("--out", default=None, help=OUT_HELP)
    p.add_argument("--readme", default=None, help="also update the status column of this README's catalogue")
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


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(getattr(args, "verbose", False))
    try:
        return args.func(args)
    except ValueError as err:
        print(f"icml26: error: {err}", file=sys.stderr)
        return 2


def paper_main(slug: str, argv: Sequence[str] | None = None) -> int:
    """``icml26-<slug> run|configs|claims``: one paper's command."""
    parser = argparse.ArgumentParser(prog=f"icml26-{slug}", description=f"Reproduce {slug} in miniature.")
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_run_args(sub.add_parser("run", help="run the reproduction and write results.json"))
    sub.add_parser("configs", help="the configs and their values")
    sub.add_parser("claims", help="the claims and their rules")
    args = parser.parse_args(argv)
    configure_logging(args.verbose)
    experiment = load(slug)
    try:
        if args.command == "run":
            args.slug = slug
            return cmd_run(args)
        if args.command == "configs":
            for name, cfg in experiment.configs.items():
                print(f"{name}: {describe_config(cfg.as_dict())}")
        else:
            for c in experiment.claims:
                print(f"{c.id}: {c.statement}\n    paper: {c.paper}\n    rule: {c.rule}")
    except ValueError as err:
        print(f"icml26-{slug}: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
