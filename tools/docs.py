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
  javascripts/, stylesheets/   MathJax (from the docs group's django-static-mathjax: served by the site
                         itself, no CDN) with its configuration, and the site's CSS (code wraps, wide tables scroll)
Maths is written ``$...$`` / ``$$...$$`` as on GitHub (pymdownx.arithmatex marks it, MathJax renders it as SVG,
so the site works opened from disk too). Every table row must have as many cells as its header, counted as
GitHub counts them (a ``|`` inside a cell, code included, is written ``\\|``): a row that does not fails the
generation, naming the file and line.
Relative links are mapped to the pages above; a link to any other repository file becomes a URL under
``--repo-url`` at ``--branch``; a link to a file that does not exist fails the generation (mkdocs'
strict mode then catches what is left: a link to a page that was not generated).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import sys
from pathlib import Path

from release import ReleaseError, map_links, resolve_link, site

ROOT = Path(__file__).resolve().parents[1]
FIGURES = {".png", ".jpg", ".jpeg", ".gif", ".svg"}
# MathJax's SVG output needs no font files (so the site works from disk); extensions and the menu load lazily.
MATHJAX_PARTS = ("tex-svg.js", "input/tex/extensions", "ui", "a11y")
MATHJAX_CONFIG = r"""// MathJax typesets only what pymdownx.arithmatex marked as maths (generic mode: \( \) and \[ \]).
window.MathJax = {
  tex: {inlineMath: [["\\(", "\\)"]], displayMath: [["\\[", "\\]"]], processEscapes: true, processEnvironments: true},
  options: {ignoreHtmlClass: ".*|", processHtmlClass: "arithmatex"},
};
"""
# At 1280 px a long line of code (the `# ->` outputs) wraps instead of running off the box; table cells (code
# included) break long words and headers drop the theme's 5rem minimum, so a table fits where it can (REPORT's
# summary, its quick-vs-medium claim tables, the Performance section), and one still wider than the text
# scrolls with a visible bar: no column is cut off.
EXTRA_CSS = """.md-typeset pre > code { white-space: pre-wrap; overflow-wrap: anywhere; }
.md-typeset__scrollwrap { overflow-x: auto; scrollbar-width: auto; }
.md-typeset table:not([class]) td, .md-typeset table:not([class]) th { overflow-wrap: anywhere; }
.md-typeset table:not([class]) code { white-space: normal; overflow-wrap: anywhere; }
.md-typeset table:not([class]) th { min-width: 0; }
.md-typeset table:not([class]) :is(th, td) { padding: 0.5em 0.6em; }
.md-typeset table:not([class]) td img { max-width: 100%; }
"""
VIEWING = """
## This site

Built by `make docs` into `build/site` (offline; nothing is fetched). Open `build/site/index.html` in a
browser: every page, figure and equation works from disk, only the search box needs a web server. For
search too, serve the folder: `python3 -m http.server -d build/site 8000`, then open
<http://127.0.0.1:8000/> (or `.venvs/docs/bin/mkdocs serve` after `make docs`). The pages are generated from
the READMEs, so after editing one, run `make docs` again.
"""
SEPARATOR_RE = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
PIPE_RE = re.compile(r"(?<!\\)\|")
CODE_SPAN_RE = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")


class DocsError(Exception):
    """A page that would render wrongly (a misshapen table) or a missing build input (MathJax)."""


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


def table_cells(row: str) -> int:
    """The number of cells in a table row as GitHub counts them: split at every ``|`` not written ``\\|``."""
    body = row.strip().removeprefix("|")
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return len(PIPE_RE.split(body))


def table_rows(text: str) -> list[tuple[int, int]]:
    """(line index, header index) of every table line (header, separator, body) outside fenced code."""
    lines, found, fence, i = text.split("\n"), [], None, 0
    while i < len(lines):
        marker = re.match(r"^\s*(```+|~~~+)", lines[i])
        if marker and (fence is None or (marker[1][0] == fence[0] and len(marker[1]) >= len(fence))):
            fence = marker[1] if fence is None else None
        elif fence is None and "|" in lines[i] and i + 1 < len(lines) and SEPARATOR_RE.match(lines[i + 1]):
            header, i = i, i + 1
            found.append((header, header))
            while i < len(lines) and PIPE_RE.search(lines[i]):
                found.append((i, header))
                i += 1
            continue
        i += 1
    return found


def misshapen_rows(text: str) -> list[tuple[int, int, int]]:
    """(line number, cells, header cells) of each table row whose cell count differs from its header's."""
    lines = text.split("\n")
    counted = ((i, table_cells(lines[i]), table_cells(lines[h])) for i, h in table_rows(text))
    return [(i + 1, n, m) for i, n, m in counted if n != m]


def for_python_markdown(text: str) -> str:
    """GitHub's table pipes for Python-Markdown: it keeps a code span whole, so ``\\|`` there would show its ``\\``."""
    lines = text.split("\n")
    for i, _ in table_rows(text):
        lines[i] = CODE_SPAN_RE.sub(lambda m: m[0].replace("\\|", "|"), lines[i])
    return "\n".join(lines)


def cell(text: object) -> str:
    """``text`` for a table cell: a ``|`` escaped, as GitHub and Python-Markdown both read it outside code."""
    return str(text).replace("|", "\\|")


def claim_table(slug: str, root: Path, config: str = "quick") -> str:
    """A committed run's claims as a Markdown table (quick: ``results/<slug>/results.json``; medium:
    ``results/<slug>/medium/results.json``), or a line saying why there is none."""
    rel = f"results/{slug}/results.json" if config == "quick" else f"results/{slug}/{config}/results.json"
    path = root / rel
    if not path.is_file():
        return f"No committed results: run `make {slug}` and commit `results/{slug}/`.\n"
    try:
        record = json.loads(path.read_text())
        claims = record["claims"]
        rows = []
        for c in claims:
            m = c["measured"]
            measured = f"{m['mean']:.4g} ± {m.get('sem', float('nan')):.2g} (n = {m.get('n', '?')})"
            rule = f"`{cell(c['rule'])}`"
            rows.append(f"| `{cell(c['id'])}` | {cell(c['statement'])} | {measured} | {rule} | **{c['verdict']}** |")
    except (ValueError, KeyError, TypeError) as err:
        return f"`{rel}` is unreadable ({type(err).__name__}: {err}).\n"
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
    if (root / "results" / slug / "medium" / "results.json").is_file():
        results += (
            f"\n### Medium (the scale ladder)\n\n{claim_table(slug, root, 'medium')}\n"
            f"Quick and medium side by side, with the metric's movement: [report](../results/REPORT.md#{slug}).\n"
        )
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
    pages["index.md"] = pages["index.md"].rstrip() + "\n" + VIEWING
    pages["api.md"] = API
    for page, text in pages.items():
        bad = misshapen_rows(text)
        if bad:
            line, n, m = bad[0]
            raise DocsError(
                f"{source_of(page)}: line {line}: a table row has {n} cells where its header has {m} "
                f"({len(bad)} such rows): write a `|` inside a cell, code included, as `\\|`"
            )
    for page, text in pages.items():
        (out / page).parent.mkdir(parents=True, exist_ok=True)
        (out / page).write_text(for_python_markdown(text))
    for figure in [*(root / "results").glob("*/*"), *(root / "results").glob("*/medium/*")]:
        if figure.suffix in FIGURES:
            dest = out / figure.relative_to(root)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(figure, dest)
    write_assets(out)
    return sorted(pages)


def source_of(page: str) -> str:
    """The repository file a generated page starts from (its line numbers are that file's)."""
    if page.startswith("papers/"):
        return f"packages/{Path(page).stem}/README.md"
    return {"index.md": "README.md", "contributing.md": "CONTRIBUTING.md"}.get(page, page)


def write_assets(out: Path) -> None:
    """The MathJax configuration and the site's CSS into ``out``."""
    for rel, text in (("javascripts/mathjax-config.js", MATHJAX_CONFIG), ("stylesheets/extra.css", EXTRA_CSS)):
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)


def copy_mathjax(out: Path) -> Path:
    """Copy MathJax (SVG output) from the installed django-static-mathjax into ``out/javascripts/mathjax``."""
    spec = importlib.util.find_spec("mathjax")
    source = Path(spec.submodule_search_locations[0]) / "static" / "mathjax" / "es5" if spec else None
    if source is None or not (source / MATHJAX_PARTS[0]).is_file():
        raise DocsError(
            "MathJax not found: the docs environment needs django-static-mathjax "
            "(UV_PROJECT_ENVIRONMENT=.venvs/docs uv sync --locked --only-group docs, as make docs does)"
        )
    dest = out / "javascripts" / "mathjax"
    for part in MATHJAX_PARTS:
        if (source / part).is_dir():
            shutil.copytree(source / part, dest / part, dirs_exist_ok=True)
        else:
            (dest / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / part, dest / part)
    licence = [f for f in importlib.metadata.distribution("django-static-mathjax").files or [] if f.name == "LICENSE"]
    if licence:
        shutil.copyfile(licence[0].locate(), dest / "LICENSE")
    return dest


def default_repo_url() -> str:
    """Where links to repository files point by default: the one address in ``[tool.icml26]`` (as the Makefile)."""
    return site()["repository"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "docs")
    parser.add_argument("--repo-url", default=default_repo_url())
    parser.add_argument("--branch", default="main")
    args = parser.parse_args(argv)
    try:
        pages = generate(args.out, ROOT, args.repo_url, args.branch)
        copy_mathjax(args.out)
    except (ReleaseError, DocsError) as err:
        print(f"docs: error: {err}", file=sys.stderr)
        return 1
    print(f"docs: {len(pages)} pages in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
