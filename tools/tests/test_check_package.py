import json

import pytest
from check_package import bounded, check
from new_package import scaffold


@pytest.fixture
def pkg(tmp_path):
    """A freshly scaffolded package with a committed-looking results.json: the check's clean baseline."""
    pkg = scaffold("demo", "Demo", tmp_path)
    (tmp_path / "results" / "demo").mkdir(parents=True)
    claims = [{"id": "placeholder", "verdict": "holds"}]
    (tmp_path / "results" / "demo" / "results.json").write_text(json.dumps({"claims": claims}))
    return pkg


def edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_scaffold_passes(pkg, tmp_path):
    assert check(pkg, tmp_path) == []


@pytest.mark.parametrize(
    ("spec", "ok"),
    [(">=0.1,<0.2", True), ("~=0.1.0", True), ("==0.1.*", True), ("<0.2, >=0.1", True), ("", False), (">=0.1", False)],
)
def test_bounded(spec, ok):
    assert bounded(spec) is ok


def test_shared_with_an_extra_and_a_bounded_range_passes(pkg, tmp_path):
    edit(pkg / "pyproject.toml", '"icml26-shared>=0.1,<0.2"', '"icml26-shared[llm]>=0.1.1,<0.2"')
    assert check(pkg, tmp_path) == []


@pytest.mark.parametrize(
    "dep", ["icml26-shared", "icml26-shared>=0.1", "icml26-shared[llm]", "icml26-shared[llm]>=0.1"]
)
def test_unbounded_shared_range(pkg, tmp_path, dep):
    edit(pkg / "pyproject.toml", '"icml26-shared>=0.1,<0.2"', f'"{dep}"')
    assert check(pkg, tmp_path) == [
        f"demo: icml26-shared needs a bounded range (e.g. 'icml26-shared>=0.1,<0.2'), is {dep!r}"
    ]


def test_depending_on_another_paper(pkg, tmp_path):
    edit(pkg / "pyproject.toml", '"numpy>=2.1,<3"', '"numpy>=2.1,<3", "icml26-atlas>=0.1,<0.2"')
    assert check(pkg, tmp_path) == [
        "demo: depends on other paper packages ['icml26-atlas>=0.1,<0.2']: a package needs nothing from another"
    ]


def test_version_without_changelog_line(pkg, tmp_path):
    edit(pkg / "pyproject.toml", 'version = "0.1.0"', 'version = "0.2.0"')
    assert check(pkg, tmp_path) == [
        "demo: README's '## Changelog' has no line for the current version 0.2.0 ('- 0.2.0: ...')"
    ]


def test_relative_link_that_cannot_be_resolved(pkg, tmp_path):
    edit(
        pkg / "README.md",
        "## Scaling up",
        "![f](../../results/demo/missing.png)\n\n[c](../../../shared/CONVENTIONS.md)\n\n## Scaling up",
    )
    findings = check(pkg, tmp_path)
    assert len(findings) == 2
    assert "link='../../results/demo/missing.png': results/demo/missing.png does not exist" in findings[0]
    assert "link='../../../shared/CONVENTIONS.md': points outside the repository" in findings[1]


def test_missing_results_and_sections(pkg, tmp_path):
    (tmp_path / "results" / "demo" / "results.json").unlink()
    edit(pkg / "README.md", "## Citation", "## References")
    findings = check(pkg, tmp_path)
    assert "demo: README has no 'citation' section" in findings
    assert any("results/demo/results.json missing" in f for f in findings)
