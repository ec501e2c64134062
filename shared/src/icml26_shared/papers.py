"""The papers installed in this environment, found through the ``icml26.papers`` entry points.

Listing reads package metadata only: it imports no paper, so no torch or jax.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata, resources

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


@dataclass(frozen=True)
class CataloguedPaper:
    number: int
    slug: str
    status: str  # "available": a package exists; "planned": not yet written
    title: str


def catalogue() -> dict[str, CataloguedPaper]:
    """Slug -> the 38 papers of the project (``catalogue.tsv``, shipped with this package)."""
    text = resources.files(__package__).joinpath("catalogue.tsv").read_text(encoding="utf-8")
    rows = [line.split("\t") for line in text.splitlines()[1:] if line]
    return {slug: CataloguedPaper(int(n), slug, status, title) for n, slug, status, title in rows}


def n_papers(n: int) -> str:
    """``1 paper``, ``2 papers``: the count in the commands' summary lines."""
    return f"{n} paper" if n == 1 else f"{n} papers"


def unknown_paper(slug: str, known: list[str]) -> ValueError:
    """The error for a slug that is not installed: says whether it is planned or needs installing."""
    paper = catalogue().get(slug)
    if paper is None:
        return ValueError(f"paper={slug!r}: expected one of the installed papers {known}")
    if paper.status == "planned":
        return ValueError(
            f"paper={slug!r} (#{paper.number}, {paper.title}) is planned: it has no package yet; "
            f"installed papers: {known}"
        )
    return ValueError(
        f"paper={slug!r} (#{paper.number}) is not installed in this environment: in a clone of the repository "
        f"`make {slug}` or `uv sync --package icml26-{slug}`; after a release, `pip install icml26-{slug}`"
    )


def load(slug: str) -> Experiment:
    """Import a paper's ``Experiment``; an unknown slug raises ValueError listing the known ones."""
    for ep in metadata.entry_points(group=GROUP, name=slug):
        experiment = ep.load()
        if not isinstance(experiment, Experiment):
            raise TypeError(f"entry point {slug!r} -> {ep.value} is a {type(experiment).__name__}, not an Experiment")
        return experiment
    raise unknown_paper(slug, list(installed()))
