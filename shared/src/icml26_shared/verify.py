"""``icml26 verify``: re-run papers and say, claim by claim, whether the committed results reproduced.

Each paper's config runs afresh (in a process of its own, into a scratch folder unless told otherwise);
its new ``results.json`` is compared with the reference snapshot (the repository's ``results/``). A
claim is *reproduced* when

* its verdict is the same, and
* its measured mean is within the tolerance of the reference mean: exact up to ``EXACT_RTOL`` (relative)
  when both runs report a standard error of 0 (a deterministic pipeline, or one seed), else within
  ``SEM_FACTOR`` times the larger of the two standard errors of the mean (the spread over seeds).

A paper is ``reproduced`` when every claim is; ``differs`` when one is not (or the claim sets differ);
``no reference`` when the reference is missing, unreadable or of another config; ``failed`` when the run
itself failed. A difference is data to trace, not an error of the tool: the platform is printed, and
each record stores its own (CPU model, torch CPU capability, versions, thread counts).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .cache import atomic_write_text
from .papers import n_papers
from .records import Record, environment, run_dir
from .runner import Outcome, reproduce

EXACT_RTOL = 1e-9
SEM_FACTOR = 2.0
STATUSES = ("reproduced", "differs", "no reference", "failed")


@dataclass(frozen=True)
class ClaimCheck:
    """One claim: the reference and the new verdict and mean, and the tolerance they were held to."""

    id: str
    reference_verdict: str
    verdict: str
    reference_mean: float
    mean: float
    tolerance: float

    @property
    def same_verdict(self) -> bool:
        return self.verdict == self.reference_verdict

    @property
    def within_tolerance(self) -> bool:
        if math.isnan(self.mean) or math.isnan(self.reference_mean):
            return math.isnan(self.mean) and math.isnan(self.reference_mean)
        return abs(self.mean - self.reference_mean) <= self.tolerance

    @property
    def reproduced(self) -> bool:
        return self.same_verdict and self.within_tolerance

    def describe(self) -> str:
        """What differs, in a few words (empty when reproduced)."""
        parts = []
        if not self.same_verdict:
            parts.append(f"{self.reference_verdict} -> {self.verdict}")
        if not self.within_tolerance:
            parts.append(f"mean {self.reference_mean:.4g} -> {self.mean:.4g} (tol {self.tolerance:.2g})")
        return f"{self.id}: {', '.join(parts)}" if parts else ""


@dataclass(frozen=True)
class Verification:
    slug: str
    status: str  # one of STATUSES
    checks: tuple[ClaimCheck, ...] = ()
    wall_seconds: float = 0.0
    detail: str = ""
    environment: dict[str, Any] = field(default_factory=dict)
    timing: dict[str, float] = field(default_factory=dict)  # the new record's CPU seconds and load average

    @property
    def reproduced_claims(self) -> int:
        return sum(c.reproduced for c in self.checks)

    @property
    def differing_claims(self) -> int:
        return sum(not c.reproduced for c in self.checks)


def tolerance(reference: dict[str, Any], measured: dict[str, Any]) -> float:
    """The allowed |mean difference| of one claim: see the module docstring."""
    sem = max(float(reference.get("sem", 0.0)), float(measured.get("sem", 0.0)))
    if sem == 0.0 or math.isnan(sem):
        return EXACT_RTOL * max(1.0, abs(float(reference["mean"])))
    return SEM_FACTOR * sem


def load_reference(path: Path, config: str) -> tuple[Record | None, str]:
    """The reference record, or None with the reason it cannot serve."""
    if not path.is_file():
        return None, f"no {path}"
    try:
        record = Record.load(path)
    except ValueError as err:
        return None, str(err)
    if record.config_name != config:
        return None, f"{path} holds the {record.config_name!r} config, not {config!r}"
    return record, ""


def compare(slug: str, reference: Record, measured: Record, wall_seconds: float) -> Verification:
    """Claim-by-claim comparison of a new record with its reference."""
    new = {c["id"]: c for c in measured.claims}
    checks = []
    for ref in reference.claims:
        if ref["id"] not in new:
            continue
        got = new[ref["id"]]
        checks.append(
            ClaimCheck(
                ref["id"],
                ref["verdict"],
                got["verdict"],
                float(ref["measured"]["mean"]),
                float(got["measured"]["mean"]),
                tolerance(ref["measured"], got["measured"]),
            )
        )
    ref_ids, new_ids = [c["id"] for c in reference.claims], list(new)
    notes = [c.describe() for c in checks if not c.reproduced]
    if set(ref_ids) != set(new_ids):
        notes.append(
            f"claims differ: only in reference {sorted(set(ref_ids) - set(new_ids))}, "
            f"only now {sorted(set(new_ids) - set(ref_ids))}"
        )
    status = "differs" if notes else "reproduced"
    return Verification(
        slug, status, tuple(checks), wall_seconds, "; ".join(notes), measured.environment, dict(measured.timing)
    )


def verify(
    slugs: Sequence[str],
    config: str,
    out_root: str | Path,
    reference_root: str | Path = "results",
    jobs: int = 1,
    verbose: bool = False,
) -> list[Verification]:
    """Run ``slugs`` afresh into ``out_root`` and compare each with its record of ``config`` under
    ``reference_root`` (``<slug>/results.json`` for quick, ``<slug>/<config>/results.json`` otherwise)."""
    out_root, reference_root = Path(out_root), Path(reference_root)
    if out_root.resolve() == reference_root.resolve():
        # Writing into the reference itself: keep a copy of every reference record to compare against.
        references = {s: load_reference(run_dir(reference_root, s, config) / "results.json", config) for s in slugs}
    else:
        references = {}
    outcomes: list[Outcome] = reproduce(
        slugs, config, str(out_root), jobs, force=True, verbose=verbose, timing_root=reference_root
    )
    results = []
    for outcome in outcomes:
        reference, why = references.get(outcome.slug) or load_reference(
            run_dir(reference_root, outcome.slug, config) / "results.json", config
        )
        if outcome.status == "failed":
            results.append(
                Verification(outcome.slug, "failed", wall_seconds=outcome.wall_seconds, detail=outcome.error)
            )
        elif reference is None:
            results.append(Verification(outcome.slug, "no reference", wall_seconds=outcome.wall_seconds, detail=why))
        else:
            measured = Record.load(run_dir(out_root, outcome.slug, config) / "results.json")
            results.append(compare(outcome.slug, reference, measured, outcome.wall_seconds))
    return results


def verification_table(results: Sequence[Verification]) -> str:
    """One row per paper: status, claims reproduced / differing, wall seconds, what differs."""
    rows = [f"{'paper':<22} {'status':<13} {'reproduced':>10} {'differing':>9} {'wall s':>8}  what differs"]
    for r in results:
        rows.append(
            f"{r.slug:<22} {r.status:<13} {r.reproduced_claims:>10} {r.differing_claims:>9} "
            f"{r.wall_seconds:>8.1f}  {r.detail}"
        )
    counts = {s: sum(r.status == s for r in results) for s in STATUSES}
    rows.append(", ".join(f"{n} {s}" for s, n in counts.items() if n) + f" (of {n_papers(len(results))})")
    return "\n".join(rows)


def write_summary(results: Sequence[Verification], path: Path, config: str, started: float, jobs: int = 1) -> Path:
    """``verify.json``: every comparison, each run's wall and CPU seconds and load average, and this machine's
    platform, for tracing a difference later; committed under ``results/reproduce/``, REPORT shows its timings."""
    data = {
        "config": config,
        "jobs": jobs,
        "wall_seconds": round(time.time() - started, 1),
        "platform": environment(),
        "papers": [
            {**asdict(r), "checks": [{**asdict(c), "reproduced": c.reproduced} for c in r.checks]} for r in results
        ],
    }
    atomic_write_text(path, json.dumps(data, indent=2, allow_nan=True) + "\n")
    return path
