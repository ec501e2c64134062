import pytest
from icml26_shared.testing import run_readme_usage


def test_runs_the_usage_block_only(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(
        "# x\n```python\nraise SystemExit('not this one')\n```\n## Usage\n\n```python\ny = 2 * 21\n```\n"
        "## Other\n```python\nraise SystemExit('nor this')\n```\n"
    )
    assert run_readme_usage(readme)["y"] == 42


def test_a_failing_usage_block_fails(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("## Usage\n```python\n1 / 0\n```\n")
    with pytest.raises(ZeroDivisionError):
        run_readme_usage(readme)


@pytest.mark.parametrize("text", ["# no usage here\n", "## Usage\nprose only\n"])
def test_missing_usage_block(tmp_path, text):
    readme = tmp_path / "README.md"
    readme.write_text(text)
    with pytest.raises(ValueError, match="readme="):
        run_readme_usage(readme)
