import tomllib

import pytest
from new_package import main, scaffold


def test_scaffold_writes_the_house_shape(tmp_path):
    pkg = scaffold("my-paper", "My Paper", tmp_path)
    meta = tomllib.loads((pkg / "pyproject.toml").read_text())["project"]
    assert meta["name"] == "icml26-my-paper"
    assert meta["entry-points"]["icml26.papers"] == {"my-paper": "icml26_my_paper.experiment:EXPERIMENT"}
    assert meta["scripts"] == {"icml26-my-paper": "icml26_my_paper.__main__:main"}
    src = pkg / "src" / "icml26_my_paper"
    for f in ("__init__.py", "__main__.py", "method.py", "experiment.py"):
        compile((src / f).read_text(), f, "exec")
    assert {p.name for p in (pkg / "tests").iterdir()} == {"test_method.py", "test_experiment.py", "test_readme.py"}
    readme = (pkg / "README.md").read_text()
    for heading in ("## Install", "## Usage", "## Reproduce", "## What is implemented; deviations", "## Citation"):
        assert heading in readme


@pytest.mark.parametrize("slug", ["My-Paper", "my_paper", "-x", "x-", "1x", ""])
def test_bad_slug(tmp_path, slug):
    with pytest.raises(ValueError, match="slug="):
        scaffold(slug, "t", tmp_path)


def test_refuses_to_overwrite(tmp_path, capsys):
    scaffold("taken", "t", tmp_path)
    assert main(["taken", "--root", str(tmp_path)]) == 2
    assert "refusing to overwrite" in capsys.readouterr().err
