import json
from pathlib import Path

import pytest
from check_package import bounded, check, check_install, check_metadata
from new_package import scaffold

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def pkg(repo_root):
    """A freshly scaffolded package with a committed-looking results.json: the check's clean baseline."""
    pkg = scaffold("demo", "Demo", repo_root)
    (repo_root / "results" / "demo").mkdir(parents=True)
    claims = [{"id": "placeholder", "verdict": "holds"}]
    (repo_root / "results" / "demo" / "results.json").write_text(json.dumps({"claims": claims}))
    return pkg


def edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_scaffold_passes(pkg, repo_root):
    assert check(pkg, repo_root) == []


@pytest.mark.parametrize(
    ("spec", "ok"),
    [(">=0.1,<0.2", True), ("~=0.1.0", True), ("==0.1.*", True), ("<0.2, >=0.1", True), ("", False), (">=0.1", False)],
)
def test_bounded(spec, ok):
    assert bounded(spec) is ok


def test_shared_with_an_extra_and_a_bounded_range_passes(pkg, repo_root):
    edit(pkg / "pyproject.toml", '"icml26-shared>=0.1,<0.2"', '"icml26-shared[llm]>=0.1.1,<0.2"')
    assert check(pkg, repo_root) == []


@pytest.mark.parametrize(
    "dep", ["icml26-shared", "icml26-shared>=0.1", "icml26-shared[llm]", "icml26-shared[llm]>=0.1"]
)
def test_unbounded_shared_range(pkg, repo_root, dep):
    edit(pkg / "pyproject.toml", '"icml26-shared>=0.1,<0.2"', f'"{dep}"')
    assert check(pkg, repo_root) == [
        f"demo: icml26-shared needs a bounded range (e.g. 'icml26-shared>=0.1,<0.2'), is {dep!r}"
    ]


def test_depending_on_another_paper(pkg, repo_root):
    edit(pkg / "pyproject.toml", '"numpy>=2.1,<3"', '"numpy>=2.1,<3", "icml26-atlas>=0.1,<0.2"')
    assert check(pkg, repo_root) == [
        "demo: depends on other paper packages ['icml26-atlas>=0.1,<0.2']: a package needs nothing from another"
    ]


def test_version_without_changelog_line(pkg, repo_root):
    edit(pkg / "pyproject.toml", 'version = "0.1.0"', 'version = "0.2.0"')
    assert check(pkg, repo_root) == [
        "demo: README's '## Changelog' has no line for the current version 0.2.0 ('- 0.2.0: ...')"
    ]


def test_relative_link_that_cannot_be_resolved(pkg, repo_root):
    edit(
        pkg / "README.md",
        "## Scaling up",
        "![f](../../results/demo/missing.png)\n\n[c](../../../shared/CONVENTIONS.md)\n\n## Scaling up",
    )
    findings = check(pkg, repo_root)
    assert len(findings) == 2
    assert "link='../../results/demo/missing.png': results/demo/missing.png does not exist" in findings[0]
    assert "link='../../../shared/CONVENTIONS.md': points outside the repository" in findings[1]


def test_missing_results_and_sections(pkg, repo_root):
    (repo_root / "results" / "demo" / "results.json").unlink()
    edit(pkg / "README.md", "## Citation", "## References")
    findings = check(pkg, repo_root)
    assert "demo: README has no 'citation' section" in findings
    assert any("results/demo/results.json missing" in f for f in findings)


def test_licence_copy_must_match_the_root(pkg, repo_root):
    (pkg / "LICENSE").write_text("All rights reserved.\n")
    assert check(pkg, repo_root) == [
        "demo: packages/demo/LICENSE must be a copy of the root LICENSE (cp LICENSE packages/demo/LICENSE)"
    ]


def test_metadata_follows_the_one_repository_address(pkg, repo_root):
    """Moving the repository in [tool.icml26] makes every URL, README rewrite and Install line that still
    names the old address a finding."""
    edit(repo_root / "pyproject.toml", "github.com/owner/icml26", "github.com/moved/icml26")
    findings = check(pkg, repo_root)
    assert any(
        "project.urls.Source should be 'https://github.com/moved/icml26/tree/main/packages/demo'" in f for f in findings
    )
    assert any("fancy-pypi-readme" in f and "moved" in f for f in findings)
    assert "demo: README's Install section lacks 'git+https://github.com/moved/icml26#subdirectory=packages/demo'" in (
        f.split(" (before")[0] for f in findings
    )


def test_index_metadata_missing(pkg, repo_root):
    for line in ('authors = [{ name = "icml26 contributors" }]\n', 'license-files = ["LICENSE"]'):
        edit(pkg / "pyproject.toml", line, "")
    findings = check(pkg, repo_root)
    assert "demo: project.authors missing (e.g. [{ name = 'icml26 contributors' }])" in findings
    assert "demo: expected license = 'MIT' and license-files = ['LICENSE'], is 'MIT' and None" in findings


def test_readme_link_the_build_leaves_relative(pkg, repo_root):
    edit(pkg / "README.md", "## Scaling up", "[bench](benchmarks/bench.py)\n\n## Scaling up")
    (pkg / "benchmarks").mkdir()
    (pkg / "benchmarks" / "bench.py").write_text("")
    assert check(pkg, repo_root) == [
        "demo: README links ['benchmarks/bench.py'] stay relative in the built long description "
        "(write them as ../../<path>)"
    ]


def test_install_section_leads_with_what_works(pkg, repo_root):
    readme = pkg / "README.md"
    text = readme.read_text()
    start, end = text.index("## Install"), text.index("## Usage")
    readme.write_text(text[:start] + "## Install\n\n```bash\npip install icml26-demo\n```\n\n" + text[end:])
    assert check_install(pkg, repo_root) == [
        "demo: README's Install section lacks 'git+https://github.com/owner/icml26#subdirectory=packages/demo' "
        "(before a release, the git URL form works)",
        "demo: README's Install section lacks 'git+https://github.com/owner/icml26#subdirectory=shared' "
        "(before a release, the git URL form works)",
        "demo: README's Install section should keep the index form as 'after a release'",
    ]


def test_every_member_of_this_repository_has_the_index_metadata():
    """The committed pyprojects, LICENSE copies and Install lines agree with [tool.icml26] (issue 26, items 1-4)."""
    packages = sorted(p.parent for p in (ROOT / "packages").glob("*/pyproject.toml"))
    findings = check_metadata(ROOT / "shared", ROOT)
    for pkg in packages:
        findings += check_metadata(pkg, ROOT) + check_install(pkg, ROOT)
    assert findings == []
    assert len(packages) == 38  # every paper, not an empty glob
