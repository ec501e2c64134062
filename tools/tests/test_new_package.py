import tomllib

import pytest
from new_package import main, scaffold


def test_scaffold_writes_the_house_shape(repo_root):
    pkg = scaffold("my-paper", "My Paper", repo_root)
    meta = tomllib.loads((pkg / "pyproject.toml").read_text())["project"]
    assert meta["name"] == "icml26-my-paper"
    assert meta["entry-points"]["icml26.papers"] == {"my-paper": "icml26_my_paper.experiment:EXPERIMENT"}
    assert meta["scripts"] == {"icml26-my-paper": "icml26_my_paper.__main__:main"}
    assert meta["urls"]["Source"] == "https://github.com/owner/icml26/tree/main/packages/my-paper"
    assert (pkg / "LICENSE").read_bytes() == (repo_root / "LICENSE").read_bytes()
    src = pkg / "src" / "icml26_my_paper"
    for f in ("__init__.py", "__main__.py", "method.py", "experiment.py"):
        compile((src / f).read_text(), f, "exec")
    assert {p.name for p in (pkg / "tests").iterdir()} == {"test_method.py", "test_experiment.py", "test_readme.py"}
    readme = (pkg / "README.md").read_text()
    for heading in ("## Install", "## Usage", "## Reproduce", "## What is implemented; deviations", "## Citation"):
        assert heading in readme


@pytest.mark.parametrize("slug", ["My-Paper", "my_paper", "-x", "x-", "1x", ""])
def test_bad_slug(repo_root, slug):
    with pytest.raises(ValueError, match="slug="):
        scaffold(slug, "t", repo_root)


def test_refuses_to_overwrite(repo_root, capsys):
    scaffold("taken", "t", repo_root)
    assert main(["taken", "--root", str(repo_root)]) == 2
    assert "refusing to overwrite" in capsys.readouterr().err


def test_root_without_licence_or_address(tmp_path, capsys):
    assert main(["demo", "--root", str(tmp_path)]) == 2
    assert "root=" in capsys.readouterr().err and not (tmp_path / "packages").exists()
    (tmp_path / "LICENSE").write_text("MIT\n")
    (tmp_path / "pyproject.toml").write_text("[tool.uv.workspace]\n")
    assert main(["demo", "--root", str(tmp_path)]) == 2
    assert "[tool.icml26] lacks repository, documentation, branch" in capsys.readouterr().err
