"""Make the tool scripts in tools/ importable by their tests; ``repo_root``: a miniature repository root."""

import shutil
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOOLS))

SITE = """[tool.icml26]
repository = "https://github.com/owner/icml26"
documentation = "https://owner.github.io/icml26"
branch = "main"
"""


@pytest.fixture
def repo_root(tmp_path):
    """``tmp_path`` as a repository root: the LICENSE and a pyproject.toml with its ``[tool.icml26]`` address."""
    shutil.copyfile(TOOLS.parent / "LICENSE", tmp_path / "LICENSE")
    (tmp_path / "pyproject.toml").write_text(SITE)
    return tmp_path
