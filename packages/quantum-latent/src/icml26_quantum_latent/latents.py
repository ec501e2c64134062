"""Latent distributions for the generator: quantum (bosons), distinguishable photons, Gaussian.

A discrete latent is kept as an exact table: every Fock pattern with its probability, standardised per
mode with that distribution's own mean and standard deviation ([INF] ours: the paper feeds photon counts
to the generator; centring and scaling them is our choice so that all latents share the scale of N(0, I)).
The generator then samples latents inside its compiled training loop by a categorical draw over the table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icml26_shared import check_choice, check_int

from .baselines import distinguishable_probabilities, sample_gaussian
from .method import boson_probabilities, sample_from_table

LATENT_KINDS = ("quantum", "distinguishable", "gaussian")


@dataclass(frozen=True)
class LatentTable:
    """A discrete latent: standardised patterns ``z (K, m)``, raw counts ``(K, m)`` and probabilities ``p (K,)``."""

    z: np.ndarray
    counts: np.ndarray
    p: np.ndarray


def standardise(counts: np.ndarray, p: np.ndarray) -> np.ndarray:
    """(counts - mean) / std per mode, with the moments of the distribution ``p`` over the patterns."""
    mean = p @ counts
    std = np.sqrt(p @ (counts - mean) ** 2)
    return (counts - mean) / np.where(std > 0, std, 1.0)


def latent_table(kind: str, U: np.ndarray, s: np.ndarray) -> LatentTable:
    """The exact table of a photonic latent (``kind`` is "quantum" or "distinguishable")."""
    check_choice("kind", kind, LATENT_KINDS[:2])
    probabilities = boson_probabilities if kind == "quantum" else distinguishable_probabilities
    counts, p = probabilities(U, s)
    p = p / p.sum()  # remove the ~1e-15 rounding of the permanents
    return LatentTable(z=standardise(counts, p), counts=counts, p=p)


def sample_latent(kind: str, U: np.ndarray, s: np.ndarray, num_samples: int, rng: np.random.Generator) -> np.ndarray:
    """``(num_samples, m)`` latent vectors of one kind, for the same interferometer ``U`` and input ``s``."""
    check_choice("kind", kind, LATENT_KINDS)
    check_int("num_samples", num_samples, 1)
    if kind == "gaussian":
        return sample_gaussian(num_samples, np.shape(U)[0], rng)
    table = latent_table(kind, U, s)
    return sample_from_table(table.z, table.p, num_samples, rng)
