#!/usr/bin/env python3
"""The house-shape check: packages of the icml26 monorepo against CONTRIBUTING.md's definition of done.

Usage: python tools/check_package.py packages/<slug> [packages/<slug> ...]
       python tools/check_package.py --all          (every folder under packages/)
Run it from the repository root. Prints one line per finding; exits 1 if any package falls short.
It checks the shape of a package, not whether its science is right. Beyond the layout, names, configs,
tests and README sections it checks what a release needs (tools/release.py): a bounded
``icml26-shared`` range (``>=0.1,<0.2``), a changelog line for the current version, and README links
that the release rewriting can resolve (relative ones must name a file in the repository). With ``--all``
it checks the shared package's metadata too. The metadata a user of the package index sees is checked
against ``[tool.icml26]`` of the root pyproject.toml (the repository's one address): the LICENSE copy
(identical to the root's) in ``license-files``, authors, keywords, the house classifiers, the Source and
Documentation URLs, the README hook that makes its links absolute in every build, and an Install section
that leads with the git-URL form that works before a release.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

from release import (
    ReleaseError,
    has_changelog_line,
    readme_substitutions,
    relative_links,
    resolve_link,
    site,
    substitute,
)

README_SECTIONS = ["install", "usage", "reproduce", "deviation", "citation"]
HOUSE_CLASSIFIERS = [
    "Development Status :: 3 - Alpha",
    "Intended Audience :: Science/Research",
    "Operating System :: OS Independent",
    "Programming Language :: Python :: 3 :: Only",
    "Programming Language :: Python :: 3.11",
    "Topic :: Scientific/Engineering :: Artificial Intelligence",
]
README_HOOK = "fancy-pypi-readme"  # hatch-fancy-pypi-readme: the README, its links made absolute, in every build


def bounded(spec: str) -> bool:
    """True for a specifier with a lower and an upper bound (``>=0.1,<0.2``, ``~=0.1.0``, ``==0.1.*``)."""
    clauses = [c.strip() for c in spec.split(";")[0].split(",") if c.strip()]
    ops = {m[1] for m in (re.match(r"^(~=|==|>=|<=|>|<|!=)\s*[0-9]", c) for c in clauses) if m}
    return bool(ops & {"~=", "=="}) or (bool(ops & {">=", ">"}) and bool(ops & {"<", "<="}))


def expected_urls(member: str, where: dict[str, str]) -> dict[str, str]:
    """The Source and Documentation URLs of a member (``packages/<slug>`` or ``shared``) under ``[tool.icml26]``."""
    docs = (
        f"{where['documentation']}/api.html"
        if member == "shared"
        else f"{where['documentation']}/papers/{Path(member).name}.html"  # the site's pages end in .html (mkdocs.yml)
    )
    return {"Source": f"{where['repository']}/tree/{where['branch']}/{member}", "Documentation": docs}


def install_section(readme: str) -> str:
    """The text of the README's ``## Install`` section ('' when there is none)."""
    match = re.search(r"(?ms)^## Install[^\n]*$(?P<body>.*?)(?=^## |\Z)", readme)
    return match["body"] if match else ""


def check_metadata(member: Path, root: Path) -> list[str]:
    """What the package index shows of a member: licence, authors, keywords, classifiers, URLs, long description.

    ``member`` is shared/ or packages/<slug>/ under ``root``; every address comes from ``site(root)``.
    """
    rel = member.resolve().relative_to(root.resolve()).as_posix()
    name = member.name
    try:
        where = site(root)
    except ReleaseError as err:
        return [f"{name}: {err}"]
    meta = tomllib.loads((member / "pyproject.toml").read_text())
    proj = meta.get("project", {})
    out = []
    if proj.get("license") != "MIT" or proj.get("license-files") != ["LICENSE"]:
        out.append(
            f"{name}: expected license = 'MIT' and license-files = ['LICENSE'], is "
            f"{proj.get('license')!r} and {proj.get('license-files')!r}"
        )
    licence = root / "LICENSE"
    if (
        not (member / "LICENSE").is_file()
        or not licence.is_file()
        or (member / "LICENSE").read_bytes() != licence.read_bytes()
    ):
        out.append(f"{name}: {rel}/LICENSE must be a copy of the root LICENSE (cp LICENSE {rel}/LICENSE)")
    if not proj.get("authors"):
        out.append(f"{name}: project.authors missing (e.g. [{{ name = 'icml26 contributors' }}])")
    if "icml-2026" not in proj.get("keywords", []):
        out.append(
            f"{name}: project.keywords should include 'icml-2026' and the paper's topics, is {proj.get('keywords')!r}"
        )
    missing = [c for c in HOUSE_CLASSIFIERS if c not in proj.get("classifiers", [])]
    if missing:
        out.append(f"{name}: project.classifiers lacks {missing}")
    urls = proj.get("urls", {})
    for key, url in expected_urls(rel, where).items():
        if urls.get(key) != url:
            out.append(
                f"{name}: project.urls.{key} should be {url!r} ([tool.icml26] in pyproject.toml), is {urls.get(key)!r}"
            )
    if "Paper" in urls and not str(urls["Paper"]).startswith("https://"):
        out.append(f"{name}: project.urls.Paper should be an https URL, is {urls['Paper']!r}")
    hook = meta.get("tool", {}).get("hatch", {}).get("metadata", {}).get("hooks", {}).get(README_HOOK, {})
    subs = readme_substitutions(rel, where)
    expected = {"content-type": "text/markdown", "fragments": [{"path": "README.md"}], "substitutions": subs}
    requires = " ".join(meta.get("build-system", {}).get("requires", []))
    if (
        "readme" not in proj.get("dynamic", [])
        or "readme" in proj
        or hook != expected
        or "hatch-fancy-pypi-readme" not in requires
    ):
        out.append(
            f"{name}: the long description must come from [tool.hatch.metadata.hooks.{README_HOOK}] (dynamic = "
            f"['readme'], hatch-fancy-pypi-readme in build-system.requires) with substitutions {subs}"
        )
    readme = member / "README.md"
    left = relative_links(substitute(readme.read_text(), subs)) if readme.is_file() else []
    if left:
        up = "../" * len(Path(rel).parts)
        out.append(
            f"{name}: README links {left} stay relative in the built long description (write them as {up}<path>)"
        )
    return out


def check_install(pkg: Path, root: Path) -> list[str]:
    """The README's Install section leads with what works before a release: the git URL of ``[tool.icml26]``."""
    try:
        repository = site(root)["repository"]
    except ReleaseError as err:
        return [f"{pkg.name}: {err}"]
    section = install_section((pkg / "README.md").read_text()) if (pkg / "README.md").is_file() else ""
    wanted = [f"git+{repository}#subdirectory=packages/{pkg.name}", f"git+{repository}#subdirectory=shared"]
    out = [
        f"{pkg.name}: README's Install section lacks {w!r} (before a release, the git URL form works)"
        for w in wanted
        if w not in section
    ]
    if "after a release" not in section:
        out.append(f"{pkg.name}: README's Install section should keep the index form as 'after a release'")
    return out


def check(pkg: Path, root: Path) -> list[str]:
    out: list[str] = []
    slug = pkg.name
    mod = "icml26_" + slug.replace("-", "_")
    pp = pkg / "pyproject.toml"
    if not pp.is_file():
        return [f"{slug}: no pyproject.toml"]
    try:
        meta = tomllib.loads(pp.read_text())
    except tomllib.TOMLDecodeError as e:
        return [f"{slug}: pyproject.toml does not parse: {e}"]
    proj = meta.get("project", {})
    if proj.get("name") != f"icml26-{slug}":
        out.append(f"{slug}: project.name should be icml26-{slug}, is {proj.get('name')!r}")
    for key in ("version", "description", "requires-python", "license"):
        if key not in proj:
            out.append(f"{slug}: project.{key} missing")
    out += check_metadata(pkg, root)
    deps = proj.get("dependencies", [])
    shared = [d for d in deps if re.match(r"icml26-shared\b", d)]
    if not shared:
        out.append(f"{slug}: does not depend on icml26-shared")
    elif not bounded(re.sub(r"^icml26-shared(\[[\w,\s-]+\])?", "", shared[0])):
        out.append(f"{slug}: icml26-shared needs a bounded range (e.g. 'icml26-shared>=0.1,<0.2'), is {shared[0]!r}")
    others = [d for d in deps if re.match(r"icml26-", d) and not re.match(r"icml26-shared\b", d)]
    if others:
        out.append(f"{slug}: depends on other paper packages {others}: a package needs nothing from another")
    unbounded = [d for d in deps if not re.search(r"[<>=~]", d) and not d.startswith("icml26-")]
    if unbounded:
        out.append(f"{slug}: dependencies without a version range: {', '.join(unbounded)}")
    eps = proj.get("entry-points", {}).get("icml26.papers", {})
    if slug not in eps:
        out.append(f"{slug}: no entry point '{slug}' in group icml26.papers")
    if f"icml26-{slug}" not in proj.get("scripts", {}):
        out.append(f"{slug}: no console script icml26-{slug}")
    src = pkg / "src" / mod
    for f in ("__init__.py", "__main__.py", "experiment.py"):
        if not (src / f).is_file():
            out.append(f"{slug}: src/{mod}/{f} missing")
    others = [p for p in src.glob("*.py") if p.name not in {"__init__.py", "__main__.py", "experiment.py", "data.py"}]
    if src.is_dir() and not others:
        out.append(f"{slug}: no method module beside experiment.py (method.py or named parts)")
    if src.is_dir():
        exp = (src / "experiment.py").read_text() if (src / "experiment.py").is_file() else ""
        for name in ("smoke", "quick", "paper"):
            if f'"{name}"' not in exp and f"'{name}'" not in exp:
                out.append(f"{slug}: experiment.py defines no '{name}' config")
        for name in ("CLAIMS", "EXPERIMENT"):
            if name not in exp:
                out.append(f"{slug}: experiment.py has no {name}")
    tests = list((pkg / "tests").glob("test_*.py")) if (pkg / "tests").is_dir() else []
    if len(tests) < 3:
        out.append(f"{slug}: only {len(tests)} test files (method, experiment smoke, readme at least)")
    text = "\n".join(t.read_text() for t in tests)
    if tests and "hypothesis" not in text:
        out.append(f"{slug}: no hypothesis property test")
    if tests and "pytest.raises" not in text:
        out.append(f"{slug}: no bad-input test (pytest.raises)")
    if tests and "README" not in text:
        out.append(f"{slug}: README usage is not executed by a test")
    readme = pkg / "README.md"
    if not readme.is_file():
        out.append(f"{slug}: README.md missing")
    else:
        text = readme.read_text()
        heads = [h.lower() for h in re.findall(r"(?m)^#{2,3} (.+)$", text)]
        for s in README_SECTIONS:
            if not any(s in h for h in heads):
                out.append(f"{slug}: README has no '{s}' section")
        version = proj.get("version")
        if version and not has_changelog_line(text, version):
            out.append(
                f"{slug}: README's '## Changelog' has no line for the current version {version} ('- {version}: ...')"
            )
        for target in relative_links(text):
            try:
                resolve_link(target, pkg.resolve(), root.resolve())
            except ReleaseError as err:
                out.append(f"{slug}: README {err} (the release rewriting cannot resolve it)")
    out += check_install(pkg, root)
    res = root / "results" / slug / "results.json"
    if not res.is_file():
        out.append(f"{slug}: results/{slug}/results.json missing (run `icml26 run {slug}` with the quick config)")
    else:
        try:
            rec = json.loads(res.read_text())
            claims = rec.get("claims", [])
            if not claims:
                out.append(f"{slug}: results.json has no claims")
            for c in claims:
                if c.get("verdict") not in {"holds", "fails", "inconclusive"}:
                    out.append(f"{slug}: claim {c.get('id')!r} has verdict {c.get('verdict')!r}")
        except json.JSONDecodeError as e:
            out.append(f"{slug}: results.json does not parse: {e}")
    return out


def main(argv: list[str]) -> int:
    root = Path.cwd()
    if argv == ["--all"]:
        pkgs = sorted(p for p in (root / "packages").iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
    else:
        pkgs = [Path(a).resolve() for a in argv]
    if not pkgs:
        print(__doc__)
        return 2
    findings = [f for p in pkgs for f in check(p, root)]
    if argv == ["--all"]:
        findings += check_metadata(root / "shared", root)
    for f in findings:
        print(f)
    print(f"{len(pkgs)} package(s) checked, {len(findings)} finding(s)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
