"""Helpers for the packages' tests: the one way to execute a README's usage block."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from .validation import fail

USAGE_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def run_readme_usage(readme: str | os.PathLike) -> dict[str, Any]:
    """Execute the first ```python block after the ``## Usage`` heading of ``readme``; return its namespace."""
    path = Path(readme)
    text = path.read_text()
    if "## Usage" not in text:
        raise fail("readme", str(path), "a README with a '## Usage' section")
    match = USAGE_BLOCK.search(text.split("## Usage", 1)[1])
    if match is None:
        raise fail("readme", str(path), "a ```python block in its '## Usage' section")
    namespace: dict[str, Any] = {"__name__": "readme"}
    exec(compile(match.group(1), str(path), "exec"), namespace)
    return namespace
