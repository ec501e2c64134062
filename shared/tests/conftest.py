"""A fake installed paper distribution (dist-info + module) for the CLI, runner and report tests."""

import importlib
import sys
import textwrap

import pytest

MODULE = """
import os
import time
from dataclasses import dataclass
from icml26_shared import Claim, Config as Base, Experiment


@dataclass(frozen=True)
class Config(Base):
    shift: float = 0.0


def measure(config, out_dir):
    if os.environ.get("FAKE_PAPER_INTERRUPT") == "{slug}":
        raise KeyboardInterrupt
    if os.environ.get("FAKE_PAPER_SLOW") == "{slug}":  # a run to interrupt: says it started, then waits
        with open(os.environ["FAKE_PAPER_STARTED"], "w") as f:
            f.write(str(os.getpid()))
        time.sleep(60)
    if os.environ.get("FAKE_PAPER_CRASH") == "{slug}":
        raise RuntimeError("boom in {slug}")
    counter = out_dir / "calls.txt"
    counter.write_text(counter.read_text() + "x" if counter.exists() else "x")
    return {{"score": [1.0 + config.shift + 0.01 * s for s in config.seeds]}}


CONFIGS = {{
    "smoke": Config(seeds=(0, 1)),
    "quick": Config(seeds=(0, 1, 2)),
    "paper": Config(seeds=(0, 1, 2, 3), shift=-5),{medium}
}}
CLAIMS = [Claim("positive", "The score is positive.", "1.0 (Fig. 1)", "score", ">", 0.0)]
EXPERIMENT = Experiment(name="{slug}", configs=CONFIGS, claims=CLAIMS, measure=measure, distribution="fake-{slug}")
"""


def install_fake(site, slug):
    mod = "fake_" + slug.replace("-", "_")
    medium = '\n    "medium": Config(seeds=(0, 1, 2, 3, 4), shift=1.0),' if slug == "alpha" else ""  # beta has none
    (site / f"{mod}.py").write_text(MODULE.format(slug=slug, medium=medium))
    info = site / f"fake_{slug.replace('-', '_')}-0.3.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: fake-{slug}\nVersion: 0.3.0\nSummary: Fake {slug}\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(f"[icml26.papers]\n{slug} = {mod}:EXPERIMENT\n"))


@pytest.fixture
def fake_papers(tmp_path, monkeypatch):
    """Install fake papers 'alpha' (with a medium config) and 'beta' (without) on sys.path and PYTHONPATH;
    chdir to tmp_path."""
    site = tmp_path / "site"
    site.mkdir()
    for slug in ("alpha", "beta"):
        install_fake(site, slug)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ICML26_RESULTS", str(tmp_path / "results"))  # the default results root
    importlib.invalidate_caches()
    yield site
    for name in ("fake_alpha", "fake_beta"):
        sys.modules.pop(name, None)
