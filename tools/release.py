#!/usr/bin/env python3
"""Prepare one distribution's release: check, build, validate and smoke-test; the upload is not here.

Usage: python tools/release.py TAG [--repo-url URL] [--ref SHA] [--dist DIR] [--dry-run]
       python tools/release.py --dry-run --package SLUG_OR_MEMBER [--repo-url URL]     (the tag it would be)

TAG is ``<distribution>-v<version>`` (e.g. ``icml26-sinkhorn-te-v0.1.0``). In order, each step failing
before the next starts:
  1. the tag, the member's ``project.version`` and a changelog line for that version in its README agree;
  2. the README's relative links (``../../results/<slug>/x.png``, ``../../CONTRIBUTING.md``) become
     absolute URLs at ``--ref`` (default: the commit at HEAD) under ``--repo-url`` (default: the
     repository in the root pyproject.toml's ``[tool.icml26]``); the build runs in a copy of the committed
     tree (``git archive``), so the tracked README is never changed;
  3. ``uv build --package <distribution>`` writes the sdist and the wheel (and the shared wheel beside
     them) to ``--dist``; the long description in the wheel's METADATA must contain no relative link and
     both the sdist and the wheel must carry the LICENSE file;
  4. ``twine check --strict`` validates the metadata and renders the README as the index will;
  5. a clean venv gets the wheel beside the shared wheel (``uv pip install``: resolved from the wheels'
     metadata alone) and runs the paper's smoke config (``icml26 list`` for the shared package).
The upload is the release workflow's next step (trusted publishing: no token exists anywhere here), so
this script never uploads; ``--dry-run`` says what that step would publish.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ci import ROOT, UV, sh

TAG_RE = re.compile(r"^(?P<dist>icml26-[a-z0-9]+(?:-[a-z0-9]+)*)-v(?P<version>\d+\.\d+\.\d+(?:[-.+][0-9A-Za-z.]+)?)$")
# Markdown links and images: [text](target "title") / ![alt](target); reference definitions; HTML src/href.
INLINE_RE = re.compile(r"(?P<bang>!?)\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]+)(?P<title>\s+\"[^\"]*\")?\)")
REFDEF_RE = re.compile(r"(?m)^(?P<lead> {0,3}\[[^\]]+\]:\s*)(?P<target>\S+)")
HTML_RE = re.compile(r"(?P<attr>\b(?:src|href))=\"(?P<target>[^\"]+)\"")
FENCE_RE = re.compile(r"(?ms)^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$")
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp"}


class ReleaseError(Exception):
    """A release precondition that does not hold; the message says which and what was expected."""


def site(root: Path = ROOT) -> dict[str, str]:
    """``[tool.icml26]`` of the root pyproject.toml: ``repository``, ``documentation`` and ``branch``.

    The one place that defines where the repository and its documentation site live: every package's
    ``[project.urls]``, the build's link rewriting and README Install lines (tools/check_package.py checks
    them against it), the Makefile's ``REPO_URL`` and this script's default ``--repo-url`` take it from here.
    """
    table = tomllib.loads((root / "pyproject.toml").read_text()).get("tool", {}).get("icml26", {})
    missing = [key for key in ("repository", "documentation", "branch") if not table.get(key)]
    if missing:
        raise ReleaseError(f"{root / 'pyproject.toml'}: [tool.icml26] lacks {', '.join(missing)}")
    return {key: table[key].rstrip("/") for key in ("repository", "documentation", "branch")}


def raw_base(repo_url: str, ref: str) -> str:
    """Where the files of the repository at ``ref`` are served raw (images on the package index)."""
    repo_url = repo_url.rstrip("/")
    github = re.match(r"^https://github\.com/(?P<slug>[^/]+/[^/]+)$", repo_url)
    return f"https://raw.githubusercontent.com/{github['slug']}/{ref}" if github else f"{repo_url}/raw/{ref}"


def readme_substitutions(member: str, where: dict[str, str]) -> list[dict[str, str]]:
    """The hatch-fancy-pypi-readme substitutions that make a member's README links absolute in every build.

    ``member`` is the member's folder relative to the root (``packages/<slug>`` or ``shared``). Its README links
    repository files as ``../../results/<slug>/fig.png``: images become raw files, other links the file's page,
    at ``where["branch"]`` (the release rewrites them at the tagged commit before building, so these only
    apply to a plain ``uv build`` or a ``pip install`` from git).
    """
    up = re.escape("../" * len(Path(member).parts))
    branch = where["branch"]
    return [
        {"pattern": rf"(!\[[^\]]*\]\(){up}", "replacement": rf"\1{raw_base(where['repository'], branch)}/"},
        {"pattern": rf"(\]\(){up}", "replacement": rf"\1{where['repository']}/blob/{branch}/"},
    ]


def substitute(text: str, substitutions: list[dict[str, str]]) -> str:
    """``text`` after the substitutions, in order, as hatch-fancy-pypi-readme applies them (``re.sub``)."""
    for sub in substitutions:
        text = re.sub(sub["pattern"], sub["replacement"], text)
    return text


@dataclass(frozen=True)
class Member:
    path: Path  # the member folder (shared or packages/<slug>)
    distribution: str
    version: str

    @property
    def slug(self) -> str | None:
        return self.path.name if self.path.parent.name == "packages" else None


def members(root: Path = ROOT) -> dict[str, Member]:
    """Every releasable workspace member by distribution name (shared and packages/*)."""
    found = {}
    for path in [root / "shared", *sorted((root / "packages").glob("*"))]:
        pyproject = path / "pyproject.toml"
        if pyproject.is_file():
            project = tomllib.loads(pyproject.read_text())["project"]
            found[project["name"]] = Member(path, project["name"], project["version"])
    return found


def parse_tag(tag: str) -> tuple[str, str]:
    """``icml26-sinkhorn-te-v0.1.0`` -> (``icml26-sinkhorn-te``, ``0.1.0``)."""
    match = TAG_RE.match(tag)
    if not match:
        raise ReleaseError(f"tag={tag!r}: expected <distribution>-v<version>, e.g. icml26-sinkhorn-te-v0.1.0")
    return match["dist"], match["version"]


def changelog_lines(readme: str) -> list[str]:
    """The lines of the README's ``## Changelog`` section (up to the next heading of level <= 2)."""
    match = re.search(r"(?ims)^##\s+changelog\s*$(?P<body>.*?)(?=^#{1,2}\s|\Z)", readme)
    return match["body"].splitlines() if match else []


def has_changelog_line(readme: str, version: str) -> bool:
    """True when the Changelog section has a bullet (``- 0.1.0: ...``) or heading (``### 0.1.0``) for version."""
    line_re = re.compile(rf"^\s*(?:[-*]|#{{3,6}})\s+\**v?{re.escape(version)}\b")
    return any(line_re.match(line) for line in changelog_lines(readme))


def check_tag(tag: str, root: Path = ROOT) -> Member:
    """Step 1: the tag names a member, its version equals pyproject's, and the README has its changelog line."""
    dist, version = parse_tag(tag)
    known = members(root)
    if dist not in known:
        raise ReleaseError(f"tag={tag!r}: no workspace member is named {dist!r}; known: {', '.join(sorted(known))}")
    member = known[dist]
    if member.version != version:
        rel = member.path.relative_to(root)
        raise ReleaseError(
            f"tag={tag!r}: version {version} disagrees with {rel}/pyproject.toml (version = {member.version!r}); "
            f"bump the version or tag {dist}-v{member.version}"
        )
    readme = member.path / "README.md"
    if not readme.is_file() or not has_changelog_line(readme.read_text(), version):
        raise ReleaseError(
            f"tag={tag!r}: {readme.relative_to(root)} has no changelog line for {version} "
            f"(expected '- {version}: ...' under '## Changelog')"
        )
    return member


def _outside_fences(text: str) -> list[tuple[int, int]]:
    """(start, end) spans of text outside fenced code blocks: links inside code are code, not links."""
    spans, pos = [], 0
    for fence in FENCE_RE.finditer(text):
        spans.append((pos, fence.start()))
        pos = fence.end()
    spans.append((pos, len(text)))
    return spans


def is_relative(target: str) -> bool:
    return not re.match(r"^([a-zA-Z][a-zA-Z0-9+.-]*:|#|//)", target)


def relative_links(text: str) -> list[str]:
    """Every relative link target in a Markdown README (inline, reference-style, HTML), outside code blocks."""
    found = []
    for start, end in _outside_fences(text):
        chunk = text[start:end]
        for regex in (INLINE_RE, REFDEF_RE, HTML_RE):
            found += [m["target"] for m in regex.finditer(chunk) if is_relative(m["target"])]
    return found


def resolve_link(target: str, base: Path, root: Path) -> str:
    """The repository path that a relative link in ``base/README.md`` points at, or ReleaseError.

    The link must stay inside the repository and name a file or folder that exists (a committed
    figure, another README): that is what the release rewriting can turn into a URL.
    """
    path_part = target.split("#", 1)[0].split("?", 1)[0]
    if not path_part:
        raise ReleaseError(f"link={target!r}: empty path")
    resolved = (root / path_part.lstrip("/")) if path_part.startswith("/") else (base / path_part)
    resolved = Path(os.path.normpath(resolved))
    root = Path(os.path.normpath(root))
    if root != resolved and root not in resolved.parents:
        raise ReleaseError(f"link={target!r}: points outside the repository ({resolved})")
    if not resolved.exists():
        raise ReleaseError(f"link={target!r}: {resolved.relative_to(root)} does not exist in the repository")
    return resolved.relative_to(root).as_posix()


def absolute_url(target: str, base: Path, root: Path, repo_url: str, ref: str, image: bool) -> str:
    """The URL at ``ref`` for a relative link: raw content for images, the blob/tree page otherwise."""
    rel = resolve_link(target, base, root)
    fragment = "#" + target.split("#", 1)[1] if "#" in target else ""
    repo_url = repo_url.rstrip("/")
    if image or (Path(rel).suffix.lower() in IMAGE_SUFFIXES and not fragment):
        return f"{raw_base(repo_url, ref)}/{rel}"
    kind = "tree" if (root / rel).is_dir() else "blob"
    return f"{repo_url}/{kind}/{ref}/{rel}{fragment}"


def map_links(text: str, replace: Callable[[str, bool], str]) -> str:
    """``text`` with every relative link target replaced by ``replace(target, is_image)``; code untouched."""

    def inline(m: re.Match) -> str:
        if not is_relative(m["target"]):
            return m[0]
        return f"{m['bang']}[{m['text']}]({replace(m['target'], bool(m['bang']))}{m['title'] or ''})"

    def refdef(m: re.Match) -> str:
        return m["lead"] + replace(m["target"], False) if is_relative(m["target"]) else m[0]

    def html(m: re.Match) -> str:
        return f'{m["attr"]}="{replace(m["target"], m["attr"] == "src")}"' if is_relative(m["target"]) else m[0]

    out, pos = [], 0
    for start, end in _outside_fences(text):
        out.append(text[pos:start])
        out.append(HTML_RE.sub(html, REFDEF_RE.sub(refdef, INLINE_RE.sub(inline, text[start:end]))))
        pos = end
    return "".join(out)


def rewrite_links(text: str, base: Path, root: Path, repo_url: str, ref: str) -> str:
    """``text`` with every relative link made absolute (see ``absolute_url``); code blocks untouched."""
    if not re.match(r"^https?://", repo_url):
        raise ReleaseError(f"repo_url={repo_url!r}: expected an http(s) URL, e.g. https://github.com/OWNER/REPO")
    return map_links(text, lambda target, image: absolute_url(target, base, root, repo_url, ref, image))


def committed_tree(root: Path, ref: str, into: Path) -> Path:
    """The workspace files at ``ref`` (no results/) extracted into ``into``: the release builds from them."""
    archive = subprocess.run(
        [
            "git",
            "archive",
            "--format=tar",
            ref,
            "--",
            ".python-version",
            "pyproject.toml",
            "uv.lock",
            "shared",
            "tools",
            "packages",
        ],
        cwd=root,
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        raise ReleaseError(f"ref={ref!r}: git archive failed: {archive.stderr.decode()[-500:]}")
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def long_description(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        return zf.read(name).decode().split("\n\n", 1)[-1]


def build(member: Member, tree: Path, dist: Path) -> tuple[list[Path], Path]:
    """Step 3: sdist + wheel of the member and the shared wheel, built in ``tree`` into ``dist``."""
    sh(*UV, "build", "--package", member.distribution, "--out-dir", dist, "-q", cwd=tree)
    stem = member.distribution.replace("-", "_") + "-" + member.version
    files = sorted(dist.glob(f"{stem}-*.whl")) + sorted(dist.glob(f"{stem}.tar.gz"))
    if len(files) != 2:
        raise ReleaseError(
            f"uv build made {[f.name for f in files]} for {member.distribution}; expected a wheel and an sdist"
        )
    if member.distribution != "icml26-shared":
        sh(*UV, "build", "--package", "icml26-shared", "--wheel", "--out-dir", dist / "shared", "-q", cwd=tree)
    shared = sorted((dist if member.distribution == "icml26-shared" else dist / "shared").glob("icml26_shared-*.whl"))[
        -1
    ]
    left = relative_links(long_description(files[0]))
    if left:
        raise ReleaseError(f"{files[0].name}: long description still has relative links {left}")
    check_sdist_licence(files[1])
    return files, shared


def check_sdist_licence(sdist: Path) -> None:
    """The sdist carries the LICENSE file at its top (``license-files``; the wheel check covers the wheel)."""
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
    top = names[0].split("/", 1)[0] if names else sdist.name
    if f"{top}/LICENSE" not in names:
        raise ReleaseError(
            f"{sdist.name}: no {top}/LICENSE in the sdist (license-files = ['LICENSE'] in its pyproject)"
        )


def twine_check(files: list[Path], twine: str | None) -> None:
    """Step 4: metadata and README rendering as the package index will do it (warnings are errors)."""
    twine = twine or shutil.which("twine")
    if twine is None:
        raise ReleaseError("twine not found: run from the release environment (make release-check) or pass --twine")
    sh(twine, "check", "--strict", *files)


def smoke(member: Member, wheel: Path, shared_wheel: Path, work: Path) -> str:
    """Step 5: a clean venv with the two wheels only (dependencies from their metadata), then the smoke run."""
    venv = work / "venv"
    sh(*UV, "venv", "-q", "--python", sys.executable, venv)
    env = {**os.environ, "VIRTUAL_ENV": str(venv)}
    wheels = [wheel] if wheel == shared_wheel else [shared_wheel, wheel]
    sh(*UV, "pip", "install", "-q", "--link-mode", "hardlink", *wheels, env=env, cwd=work)
    icml26 = venv / "bin" / "icml26"
    if member.slug is None:
        return sh(icml26, "list", cwd=work)
    return sh(icml26, "run", member.slug, "--config", "smoke", "--out", work / "results", cwd=work)


def release(tag: str, repo_url: str, ref: str | None, dist: Path, twine: str | None, root: Path = ROOT) -> list[Path]:
    member = check_tag(tag, root)
    print(f"release: 1/5 tag, version and changelog agree for {member.distribution} {member.version}", flush=True)
    ref = ref or sh("git", "rev-parse", "HEAD", cwd=root).strip()
    readme = member.path / "README.md"
    rewritten = rewrite_links(readme.read_text(), member.path, root, repo_url, ref)
    with tempfile.TemporaryDirectory(prefix="icml26-release-") as tmp:
        tree = committed_tree(root, ref, Path(tmp) / "tree")
        (tree / member.path.relative_to(root) / "README.md").write_text(rewritten)
        print(f"release: 2/5 README links made absolute at {repo_url} @ {ref[:12]}", flush=True)
        shutil.rmtree(dist, ignore_errors=True)
        dist.mkdir(parents=True)
        files, shared = build(member, tree, dist)
        print(f"release: 3/5 built {', '.join(f.name for f in files)}", flush=True)
        twine_check(files, twine)
        print("release: 4/5 twine check --strict passed", flush=True)
        out = smoke(member, files[0], shared, Path(tmp))
        print(f"release: 5/5 clean-venv smoke run passed: {out.strip().splitlines()[-1] if out.strip() else ''}")
    shutil.rmtree(dist / "shared", ignore_errors=True)  # only the released distribution's files remain in dist/
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tag", nargs="?", help="<distribution>-v<version>")
    parser.add_argument("--package", help="with --dry-run and no tag: the member (slug or 'shared') to check")
    parser.add_argument("--repo-url", help="default: [tool.icml26] repository in pyproject.toml")
    parser.add_argument("--ref", help="commit the links point at and the build uses (default: HEAD)")
    parser.add_argument("--dist", type=Path, default=ROOT / "dist" / "release")
    parser.add_argument("--twine", help="the twine executable (default: twine on PATH)")
    parser.add_argument("--dry-run", action="store_true", help="say what would be uploaded (this script never uploads)")
    args = parser.parse_args(argv)
    try:
        if args.tag is None:
            if not (args.dry_run and args.package):
                raise ReleaseError("tag=None: give a tag, or --dry-run --package SLUG to check the tag it would be")
            path = ROOT / ("shared" if args.package == "shared" else f"packages/{args.package}")
            found = [m for m in members().values() if m.path == path]
            if not found:
                raise ReleaseError(f"package={args.package!r}: no such member; known: shared, packages/*")
            args.tag = f"{found[0].distribution}-v{found[0].version}"
        files = release(args.tag, args.repo_url or site()["repository"], args.ref, args.dist.resolve(), args.twine)
    except (ReleaseError, RuntimeError) as err:  # RuntimeError: a command (uv build, twine, the smoke run) failed
        print(f"release: error: {err}", file=sys.stderr)
        return 1
    verb = "dry run: would upload" if args.dry_run else "ready to upload"
    print(f"release: {verb} {', '.join(str(f) for f in files)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
