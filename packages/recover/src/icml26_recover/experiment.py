"""Miniature reproduction: configs, claims and the measurement."""

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from icml26_shared import Claim, Experiment, derive
from icml26_shared import Config as BaseConfig

from .method import method


@dataclass(frozen=True)
class Config(BaseConfig):
    n: int = 64


CONFIGS = {
    "smoke": Config(seeds=(0, 1), n=16),
    "quick": Config(seeds=(0, 1, 2), n=256),
    "paper": Config(seeds=tuple(range(10)), n=4096),
}

CLAIMS = [
    Claim("placeholder", "Row norms are non-negative.", "n/a", "min_norm", ">=", 0.0),
]


def measure(config: Config, out_dir: Path) -> dict[str, list[float]]:
    values = []
    for seed in config.seeds:
        rng = np.random.default_rng(derive(seed, "data"))
        values.append(float(method(rng.normal(size=(config.n, 3))).min()))
    return {"min_norm": values}


EXPERIMENT = Experiment(name="recover", configs=CONFIGS, claims=CLAIMS, measure=measure)


def run(config: Config | str = "quick", out_dir: Path | None = None):
    return EXPERIMENT.run(config, out_dir)
