"""Quantum latent distributions in deep generative models: reference implementation (icml26)."""

from importlib.metadata import PackageNotFoundError, version

from .baselines import distinguishable_probabilities, sample_distinguishable, sample_gaussian
from .latents import LATENT_KINDS, LatentTable, latent_table, sample_latent, standardise
from .method import (
    apply_loss,
    boson_probabilities,
    check_unitary,
    fock_states,
    haar_unitary,
    loop_unitary,
    permanent,
    sample_boson_clifford,
    sample_from_table,
)

try:
    __version__ = version("icml26-quantum-latent")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "LATENT_KINDS",
    "LatentTable",
    "apply_loss",
    "boson_probabilities",
    "check_unitary",
    "distinguishable_probabilities",
    "fock_states",
    "haar_unitary",
    "latent_table",
    "loop_unitary",
    "permanent",
    "sample_boson_clifford",
    "sample_distinguishable",
    "sample_from_table",
    "sample_gaussian",
    "sample_latent",
    "standardise",
]
