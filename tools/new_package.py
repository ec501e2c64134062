#!/usr/bin/env python3
"""Scaffold ``packages/<slug>/`` in the house shape (CONTRIBUTING.md: layout, names, the definition of done).

Usage: python tools/new_package.py <slug> [--title "Paper title"] [--root .]

Writes pyproject.toml (its URLs and README link rewriting from ``[tool.icml26]`` of the root pyproject.toml),
a copy of the root LICENSE, README.md, src/icml26_<slug>/{__init__,__main__,method,experiment}.py and
tests/{test_method,test_experiment,test_readme}.py. Refuses to overwrite an existing folder.
The generated package runs (its smoke config measures a placeholder that its claim checks) so that
every step after scaffolding starts from green; replace the placeholder with the paper's method.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

from check_package import HOUSE_CLASSIFIERS, expected_urls
from release import ReleaseError, readme_substitutions, site

SLUG_RE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")

PYPROJECT = """[project]
name = "icml26-{slug}"
version = "0.1.0"
description = "{title} (ICML 2026): reference implementation"
dynamic = ["readme"]  # README.md with absolute links: [tool.hatch.metadata.hooks.fancy-pypi-readme]
requires-python = ">=3.11"
license = "MIT"
license-files = ["LICENSE"]  # a copy of the root LICENSE (make check keeps it identical)
authors = [{{ name = "icml26 contributors" }}]
keywords = ["icml-2026", "reproduction"]  # + the paper's topics
classifiers = [
{classifiers}]
dependencies = ["icml26-shared>=0.1,<0.2", "numpy>=2.1,<3"]

[project.urls]
Source = "{source}"
Documentation = "{documentation}"
# Paper = "https://arxiv.org/abs/..."

[project.scripts]
icml26-{slug} = "{module}.__main__:main"

[project.entry-points."icml26.papers"]
{slug} = "{module}.experiment:EXPERIMENT"

[dependency-groups]
dev = ["pytest>=8,<10", "hypothesis>=6.100,<7"]

[tool.uv.sources]
icml26-shared = {{ workspace = true }}

[build-system]
requires = ["hatchling>=1.27", "hatch-fancy-pypi-readme>=25.1"]
build-backend = "hatchling.build"

[tool.hatch.build.targets.wheel]
packages = ["src/{module}"]

# The README as the long description, its relative links made absolute (tools/check_package.py checks these
# against [tool.icml26] in the root pyproject.toml): images as raw files, other links as repository pages.
[tool.hatch.metadata.hooks.fancy-pypi-readme]
content-type = "text/markdown"
fragments = [{{ path = "README.md" }}]
substitutions = [
{substitutions}]
"""

README = """# {slug}: {title}

One sentence on what the method does. Paper: ICML 2026. Status: see
[`results/{slug}/results.json`](../../results/{slug}/results.json) once the quick run is committed.

## Install

```bash
# today, from the repository (nothing is on the package index yet), with the shared package it needs:
pip install "icml26-{slug} @ git+{repository}#subdirectory=packages/{slug}" \
            "icml26-shared @ git+{repository}#subdirectory=shared"
# in a clone: pip install ./packages/{slug} ./shared   or, from uv.lock: uv sync --package icml26-{slug}
# after a release: pip install icml26-{slug}
```

## Usage

```python
import numpy as np
from {module} import method

x = np.ones((8, 3))                # (n, d)
print(method(x).shape)             # -> (8,)
print(round(float(method(x)[0]), 4))  # -> 1.7321
```

## Reproduce

```bash
icml26 run {slug} --config quick --out results     # or: make {slug}
```

| claim | paper | ours (quick) | verdict |
|---|---|---|---|

## What is implemented; deviations

## Scaling up

## Changelog

- 0.1.0: first release.

## Citation

```bibtex
```
"""

INIT = '''"""{title}: reference implementation (icml26)."""

from importlib.metadata import PackageNotFoundError, version

from .method import method

try:
    __version__ = version("icml26-{slug}")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = ["method"]
'''

MAIN = '''"""``icml26-{slug}`` / ``python -m {module}``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("{slug}")


if __name__ == "__main__":
    sys.exit(main())
'''

METHOD = '''"""The paper's contribution (placeholder from the scaffold: replace with the method)."""

import numpy as np
from icml26_shared import check_array


def method(x: np.ndarray) -> np.ndarray:
    """Row norms of ``x`` (n, d) -> (n,)."""
    x = check_array("x", x, ndim=2)
    return np.linalg.norm(x, axis=1)
'''

EXPERIMENT = '''"""Miniature reproduction: configs, claims and the measurement."""

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from icml26_shared import Claim, Experiment, derive
from icml26_shared import Config as BaseConfig

from .method import method


@dataclass(frozen=True)
class Config(BaseConfig):
    n: int = 64


CONFIGS = {{
    "smoke": Config(seeds=(0, 1), n=16),
    "quick": Config(seeds=(0, 1, 2), n=256),
    "paper": Config(seeds=tuple(range(10)), n=4096),
}}

CLAIMS = [
    Claim("placeholder", "Row norms are non-negative.", "n/a", "min_norm", ">=", 0.0),
]


def measure(config: Config, out_dir: Path) -> dict[str, list[float]]:
    values = []
    for seed in config.seeds:
        rng = np.random.default_rng(derive(seed, "data"))
        values.append(float(method(rng.normal(size=(config.n, 3))).min()))
    return {{"min_norm": values}}


EXPERIMENT = Experiment(name="{slug}", configs=CONFIGS, claims=CLAIMS, measure=measure)


def run(config: Config | str = "quick", out_dir: Path | None = None):
    return EXPERIMENT.run(config, out_dir)
'''

TEST_METHOD = """import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from {module} import method


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 20), st.integers(1, 5))
def test_norms_are_nonnegative(n, d):
    assert (method(np.random.default_rng(n).normal(size=(n, d))) >= 0).all()


def test_rejects_nan():
    with pytest.raises(ValueError, match="x="):
        method(np.array([[np.nan]]))
"""

TEST_EXPERIMENT = """import json

from {module}.experiment import EXPERIMENT


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "{slug}" and data["config_name"] == "smoke"
    assert {{c["id"] for c in data["claims"]}} == {{c.id for c in EXPERIMENT.claims}}
    assert all(c["verdict"] in {{"holds", "fails", "inconclusive"}} for c in data["claims"])
    assert record.claims == data["claims"]
"""

TEST_README = """from pathlib import Path

from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_runs():
    run_readme_usage(Path(__file__).parents[1] / "README.md")
"""


def scaffold(slug: str, title: str, root: Path) -> Path:
    if not SLUG_RE.match(slug):
        raise ValueError(f"slug={slug!r}: expected lowercase words joined by '-' (e.g. sinkhorn-te)")
    pkg = root / "packages" / slug
    if pkg.exists():
        raise FileExistsError(f"slug={slug!r}: {pkg} exists already; refusing to overwrite")
    if not (root / "LICENSE").is_file():
        raise ValueError(
            f"root={str(root)!r}: no LICENSE there; expected the repository root (the package gets a copy)"
        )
    where = site(root)  # the repository's address: URLs, README links and the Install line follow it
    module = "icml26_" + slug.replace("-", "_")
    urls = expected_urls(f"packages/{slug}", where)
    subs = readme_substitutions(f"packages/{slug}", where)
    fields = {
        "slug": slug,
        "title": title,
        "module": module,
        "repository": where["repository"],
        "source": urls["Source"],
        "documentation": urls["Documentation"],
        "classifiers": "".join(f'    "{c}",\n' for c in HOUSE_CLASSIFIERS),
        "substitutions": "".join(
            f"    {{ pattern = '{s['pattern']}', replacement = '{s['replacement']}' }},\n" for s in subs
        ),
    }
    files = {
        "pyproject.toml": PYPROJECT,
        "README.md": README,
        f"src/{module}/__init__.py": INIT,
        f"src/{module}/__main__.py": MAIN,
        f"src/{module}/method.py": METHOD,
        f"src/{module}/experiment.py": EXPERIMENT,
        "tests/test_method.py": TEST_METHOD,
        "tests/test_experiment.py": TEST_EXPERIMENT,
        "tests/test_readme.py": TEST_README,
    }
    for rel, template in files.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.format(**fields))
    shutil.copyfile(root / "LICENSE", pkg / "LICENSE")
    return pkg


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slug")
    parser.add_argument("--title", default="TITLE")
    parser.add_argument("--root", default=".", type=Path)
    args = parser.parse_args(argv)
    try:
        pkg = scaffold(args.slug, args.title, args.root)
    except (ValueError, FileExistsError, ReleaseError) as err:
        print(f"new_package: error: {err}", file=sys.stderr)
        return 2
    print(f"created {pkg}; next: uv lock && make test-{args.slug} && python3 tools/check_package.py {pkg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
