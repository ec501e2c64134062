"""The ``icml26`` command: ``list``, ``run``, ``reproduce``, ``report``; and each paper's own
``icml26-<slug>`` command (``paper_main``) with ``run``, ``configs`` and ``claims``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .log import configure_logging
from .papers import installed, load, unknown_paper
from .records import Record


def _add_run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", default="quick", help="smoke, quick (default) or paper")
    p.add_argument("--out", default="results", help="results root; the paper writes <out>/<slug>/")


def cmd_list(args: argparse.Namespace) -> int:
    papers = installed()
    if not papers:
        print("no icml26 papers installed")
        return 0
    for info in papers.values():
        path = Path(args.out) / info.slug / "results.json"
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
    record = experiment.run(args.config, Path(args.out) / args.slug)
    for c in record.claims:
        print(f"{c['verdict']:<13} {c['id']:<28} {c['measured']['mean']:.4g}  ({c['rule']})")
    print(f"{args.slug}: {record.holding}/{len(record.claims)} claims hold; {Path(args.out) / args.slug}/results.json")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from .runner import reproduce, summary_table

    known = list(installed())
    if args.all == bool(args.slugs):
        raise ValueError(f"papers={args.slugs!r}, --all={args.all}: expected slugs or --all (one of them)")
    slugs = known if args.all else args.slugs
    for s in slugs:
        if s not in known:
            raise unknown_paper(s, known)
    outcomes = reproduce(
        slugs,
        args.config,
        args.out,
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


def cmd_report(args: argparse.Namespace) -> int:
    from .report import collect, update_catalogue, write_report

    path = write_report(args.out)
    entries = collect(args.out)
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
    p.add_argument("--out", default="results")
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
    p = sub.add_parser("report", help="write <out>/REPORT.md from every results.json")
    p.add_argument("--out", default="results")
    p.add_argument("--readme", default=None, help="also update the status column of this README's catalogue")
    p.set_defaults(func=cmd_report)
    return parser


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
                print(f"{name}: {cfg.as_dict()}")
        else:
            for c in experiment.claims:
                print(f"{c.id}: {c.statement}\n    paper: {c.paper}\n    rule: {c.rule}")
    except ValueError as err:
        print(f"icml26-{slug}: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
