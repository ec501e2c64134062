import sys

from deps import passes, run

PYPROJECT = """[project]
name = "icml26-demo"
version = "0.1.0"
dependencies = ["icml26-shared>=0.1,<0.2", "pytest>=8", "hypothesis>=6"]
[dependency-groups]
dev = ["deptry"]
"""


def test_passes():
    assert passes("sinkhorn-te") == [
        ["src"],
        [".", "-e", r"\.venv", "--ignore", "DEP002,DEP004", "--known-first-party", "icml26_sinkhorn_te"],
    ]


def test_findings_from_both_passes(tmp_path):
    """src: pytest imported (declared), hypothesis declared but unused, tomli_w undeclared; tests: deptry is dev."""
    pkg = tmp_path / "demo"
    (pkg / "src" / "icml26_demo").mkdir(parents=True)
    (pkg / "tests").mkdir()
    (pkg / "pyproject.toml").write_text(PYPROJECT)
    (pkg / "src" / "icml26_demo" / "__init__.py").write_text("import pytest\nimport icml26_demo\nimport no_such_mod\n")
    (pkg / "tests" / "test_x.py").write_text("import deptry\nimport hypothesis\nimport other_missing\n")
    slug, findings = run("demo", sys.executable, tmp_path)
    assert slug == "demo"
    text = "\n".join(findings)
    assert "DEP002 'hypothesis' defined as a dependency but not used" in text  # pass 1 sees src only
    assert "DEP001 'no_such_mod' imported but missing" in text
    assert "tests/test_x.py:3:8: DEP001 'other_missing' imported but missing" in text  # pass 2 sees the tests
    assert "'deptry'" not in text  # a dev-group import in tests is fine
    assert len(findings) == len(set(findings))


def test_clean_package_and_a_declared_data_only_dependency(tmp_path):
    """hypothesis is declared and never imported, but the package tells deptry so (a data-only dependency)."""
    pkg = tmp_path / "demo"
    (pkg / "src" / "icml26_demo").mkdir(parents=True)
    ignore = '\n[tool.deptry.per_rule_ignores]\nDEP002 = ["hypothesis"]\n'
    (pkg / "pyproject.toml").write_text(PYPROJECT.replace('"icml26-shared>=0.1,<0.2", ', "") + ignore)
    (pkg / "src" / "icml26_demo" / "__init__.py").write_text("import pytest\n")
    assert run("demo", sys.executable, tmp_path) == ("demo", [])
