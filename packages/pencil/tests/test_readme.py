import re
from pathlib import Path

README = Path(__file__).parents[1] / "README.md"


def test_readme_usage_block_runs():
    text = README.read_text()
    usage = text.split("## Usage", 1)[1]
    code = re.search(r"```python\n(.*?)```", usage, re.S).group(1)
    exec(compile(code, str(README), "exec"), {"__name__": "readme"})
