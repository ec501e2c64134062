import importlib.util

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


def _readme(tmp_path, block: str):
    path = tmp_path / "README.md"
    path.write_text(f"# x\n\nintro\n\n## Usage\n\n```python\n{block}```\n")
    return path


def test_comments_are_checked_with_the_precision_they_are_written_in(tmp_path):
    block = (
        "x = 0.01834\n"
        "print(round(x, 4), (4, 3))  # -> 0.0183 (4, 3): prose after the printed text\n"
        "print(f'{x:.1e}', round(x + 1, 4))  # -> 1.8e-02 1.0184\n"
        "print(round(0.7249999, 2))  # -> 0.73: a rounding that flipped on another CPU still passes\n"
        "print(x > 0, 'ok')  # -> True ok\n"
    )
    assert run_readme_usage(_readme(tmp_path, block))["x"] == 0.01834


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("print(0.0185)  # -> 0.0183", "0.0185 differs from 0.0183 by more than 0.0001"),
        ("print((5, 3))  # -> (4, 3)", "5 differs from 4 by more than 0"),  # integers are exact
        ("print('Fals')  # -> False", "'Fals' where the comment has 'False'"),
        ("print(12)  # -> 12a", "the comment goes on with 'a' right after the number"),
        ("x = 1  # -> 1", "nothing printed"),
    ],
)
def test_a_comment_that_disagrees_names_its_readme_line_and_why(tmp_path, line, why):
    with pytest.raises(AssertionError, match="line 9: ") as err:
        run_readme_usage(_readme(tmp_path, f"y = 0\n{line}\n"))
    assert why in str(err.value)


def test_comments_after_a_statement_and_loops_printing_several_lines(tmp_path):
    block = (
        "for name in ('a', 'b'):\n"
        "    print(name, 1.5)\n"
        "# -> a 1.5   (one comment line per printed line)\n"
        "# -> b 1.5\n"
        "for name in ('a', 'b'):\n"
        "    print(name, True)  # -> a True, b True (or all on one comment)\n"
        "print(\n"
        "    'multi-line'\n"
        ")  # -> multi-line\n"
        "print('not checked')\n"
    )
    run_readme_usage(_readme(tmp_path, block))
    with pytest.raises(AssertionError, match="3 lines printed"):
        run_readme_usage(_readme(tmp_path, "for i in range(3):\n    print(i)\n# -> 0\n# -> 1\n"))


def test_tolerances_widen_for_trained_values(tmp_path):
    readme = _readme(tmp_path, "print(0.75, 118)  # -> 0.73 117\n")
    with pytest.raises(AssertionError, match="0.75 differs from 0.73 by more than 0.01"):
        run_readme_usage(readme)
    run_readme_usage(readme, rtol=0.05)  # 5%: 0.73 +- 0.0365, 117 +- 5.85
    with pytest.raises(AssertionError, match="118 differs from 117 by more than 0.05"):
        run_readme_usage(readme, atol=0.05)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
def test_on_default_kernels_runs_torch_on_its_portable_kernels(tmp_path):
    from icml26_shared.testing import on_default_kernels

    assert on_default_kernels(__file__, "torch.backends.cpu.get_cpu_capability()", tmp_path) == "DEFAULT"
