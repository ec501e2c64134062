#!/usr/bin/env python3
"""Generate the documentation site's pages from the repository itself (mkdocs builds them: make docs).

Usage: python tools/docs.py [--out build/docs] [--repo-url URL] [--branch main]

Writes, into ``--out`` (an ignored build folder; nothing generated is committed):
  index.md               the root README: the catalogue, the two commands
  papers/<slug>.md       each package's README, then its claim table from results/<slug>/results.json
                         and every figure in results/<slug>/ (a missing or corrupt results.json is said so)
  results/REPORT.md      the committed report, with the figures it links beside it
  api.md                 the shared package's API (mkdocstrings renders it from the docstrings)
  contributing.md        CONTRIBUTING.md: adding a paper, the definition of done, the commands
Relative links are mapped to the pages above; a link to any other repository file becomes a URL under
``--repo-url`` at ``--branch``; a link to a file that does not exist fails the generation (mkdocs'
strict mode then catches what is left: a link to a page that was not generated).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

from release import ReleaseError, map_links, resolve_link

ROOT = Path(__file__).resolve().parents[1]
FIGURES = {".png", ".jpg", ".jpeg", ".gif", ".svg"}
API = """# Shared API: `icml26_shared`

The thin package every paper builds on: logging, seeding, the dataset cache, experiment records and
claims, validation helpers and the `icml26` command. Generated from its docstrings.

::: icml26_shared
"""


def page_for(rel: str, root: Path) -> str | None:
    """The generated page (docs path) that shows repository path ``rel``, or None if none does."""
    parts = rel.split("/")
    if rel == "README.md":
        return "index.md"
    if rel == "CONTRIBUTING.md":
        return "contributing.md"
    if parts[0] == "packages" and len(parts) >= 2 and (root / "packages" / parts[1] / "pyproject.toml").is_file():
        if len(parts) == 2 or parts[2:] == ["README.md"]:
            return f"papers/{parts[1]}.md"
    if parts[0] == "results" and (root / rel).is_file() and (rel == "results/REPORT.md" or Path(rel).suffix in FIGURES):
        return rel
    return None


def link_mapper(source: str, page: str, root: Path, repo_url: str, branch: str):
    """replace(target, image) for release.map_links: repository-relative -> page-relative or absolute URL."""
    base = (root / source).parent

    def replace(target: str, image: bool) -> str:
        fragment = "#" + target.split("#", 1)[1] if "#" in target else ""
        rel = resolve_link(target, base, root)
        dest = page_for(rel, root)
        if dest is None:
            kind = "tree" if (root / rel).is_dir() else "blob"
            return f"{repo_url.rstrip('/')}/{kind}/{branch}/{rel}{fragment}"
        return os.path.relpath(dest, Path(page).parent).replace(os.sep, "/") + fragment

    return replace


def claim_table(slug: str, root: Path) -> str:
    """The committed quick run's claims as a Markdown table, or a line saying why there is none."""
    path = root / "results" / slug / "results.json"
    if not path.is_file():
        return f"No committed results: run `make {slug}` and commit `results/{slug}/`.\n"
    try:
        record = json.loads(path.read_text())
        claims = record["claims"]
        rows = []
        for c in claims:
            m = c["measured"]
            measured = f"{m['mean']:.4g} ± {m.get('sem', float('nan')):.2g} (n = {m.get('n', '?')})"
            statement = str(c["statement"]).replace("|", "\\|")
            rows.append(f"| `{c['id']}` | {statement} | {measured} | `{c['rule']}` | **{c['verdict']}** |")
    except (ValueError, KeyError, TypeError) as err:
        return f"`results/{slug}/results.json` is unreadable ({type(err).__name__}: {err}).\n"
    holding = sum(c["verdict"] == "holds" for c in claims)
    head = (
        f"{holding}/{len(claims)} claims hold in the committed `{record.get('config_name', '?')}` run "
        f"(version {record.get('version', '?')}, {record.get('wall_seconds', 0):.0f} s).\n\n"
        "| claim | statement | measured (mean ± sem) | rule | verdict |\n|---|---|---|---|---|\n"
    )
    return head + "\n".join(rows) + "\n"


def paper_page(slug: str, root: Path, repo_url: str, branch: str) -> str:
    source = f"packages/{slug}/README.md"
    page = f"papers/{slug}.md"
    text = map_links((root / source).read_text(), link_mapper(source, page, root, repo_url, branch))
    figures = sorted(p.name for p in (root / "results" / slug).glob("*") if p.suffix in FIGURES)
    shown = "".join(f"![{n}](../results/{slug}/{n})\n\n" for n in figures if f"results/{slug}/{n})" not in text)
    results = f"\n## Committed results\n\n{claim_table(slug, root)}\n{shown}"
    return text.rstrip() + "\n" + results


def generate(out: Path, root: Path = ROOT, repo_url: str = "https://github.com/OWNER/icml26", branch: str = "main"):
    """Write every page into ``out`` (emptied first); returns the pages written, relative to ``out``."""
    shutil.rmtree(out, ignore_errors=True)
    pages: dict[str, str] = {}
    for source, page in (("README.md", "index.md"), ("CONTRIBUTING.md", "contributing.md")):
        text = (root / source).read_text()
        pages[page] = map_links(text, link_mapper(source, page, root, repo_url, branch))
    report = root / "results" / "REPORT.md"
    if report.is_file():
        mapper = link_mapper("results/REPORT.md", "results/REPORT.md", root, repo_url, branch)
        pages["results/REPORT.md"] = map_links(report.read_text(), mapper)
    slugs = sorted(p.parent.name for p in (root / "packages").glob("*/pyproject.toml"))
    for slug in slugs:
        pages[f"papers/{slug}.md"] = paper_page(slug, root, repo_url, branch)
    pages["api.md"] = API
    for page, text in pages.items():
        (out / page).parent.mkdir(parents=True, exist_ok=True)
        (out / page).write_text(text)
    for figure in (root / "results").glob("*/*"):
        if figure.suffix in FIGURES:
            dest = out / figure.relative_to(root)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(figure, dest)
    return sorted(pages)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "docs")
    repo = os.environ.get("GITHUB_REPOSITORY", "OWNER/icml26")
    parser.add_argument("--repo-url", default=f"https://github.com/{repo}")
    parser.add_argument("--branch", default="main")
    args = parser.parse_args(argv)
    try:
        pages = generate(args.out, ROOT, args.repo_url, args.branch)
    except ReleaseError as err:
        print(f"docs: error: {err}", file=sys.stderr)
        return 1
    print(f"docs: {len(pages)} pages in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
