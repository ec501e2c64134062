"""The papers installed in this environment, found through the ``icml26.papers`` entry points.

Listing reads package metadata only: it imports no paper, so no torch or jax.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata

from .records import Experiment

GROUP = "icml26.papers"


@dataclass(frozen=True)
class PaperInfo:
    slug: str
    version: str
    summary: str
    target: str  # "module:attribute" of its Experiment


def installed() -> dict[str, PaperInfo]:
    """Slug -> metadata of every installed paper, sorted by slug."""
    found: dict[str, PaperInfo] = {}
    for ep in metadata.entry_points(group=GROUP):
        dist = ep.dist
        found[ep.name] = PaperInfo(
            slug=ep.name,
            version=dist.version if dist else "0+unknown",
            summary=(dist.metadata.get("Summary") or "") if dist else "",
            target=ep.value,
        )
    return dict(sorted(found.items()))


def unknown_paper(slug: str, known: list[str]) -> ValueError:
    return ValueError(f"paper={slug!r}: expected one of the installed papers {known}")


def load(slug: str) -> Experiment:
    """Import a paper's ``Experiment``; an unknown slug raises ValueError listing the known ones."""
    for ep in metadata.entry_points(group=GROUP, name=slug):
        experiment = ep.load()
        if not isinstance(experiment, Experiment):
            raise TypeError(f"entry point {slug!r} -> {ep.value} is a {type(experiment).__name__}, not an Experiment")
        return experiment
    raise unknown_paper(slug, list(installed()))
