"""UltraLIF (ICML 2026): fully differentiable spiking neurons from ultradiscretization and max-plus algebra.

Public API: the soft max-plus operator, the four Ultra neurons, the surrogate-gradient baselines, SNNs with
rate/direct encoding, the sparsity-penalised loss, training helpers and the real-data loaders.
"""

from importlib.metadata import PackageNotFoundError, version

from .baselines import LIF, PLIF, DSpike, SigmaLIF
from .data import load_digits_split, load_fashion_mnist, load_fsdd
from .method import (
    SpikingNeuron,
    UltraDLIF,
    UltraDPLIF,
    UltraLIF,
    UltraNeuron,
    UltraPLIF,
    soft_maxplus,
    tropical_membrane,
)
from .networks import NEURONS, SNN, direct_encode, rate_encode, sparse_loss
from .training import Evaluation, evaluate, train

try:
    __version__ = version("icml26-ultralif")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "LIF",
    "NEURONS",
    "PLIF",
    "SNN",
    "DSpike",
    "Evaluation",
    "SigmaLIF",
    "SpikingNeuron",
    "UltraDLIF",
    "UltraDPLIF",
    "UltraLIF",
    "UltraNeuron",
    "UltraPLIF",
    "direct_encode",
    "evaluate",
    "load_digits_split",
    "load_fashion_mnist",
    "load_fsdd",
    "rate_encode",
    "soft_maxplus",
    "sparse_loss",
    "train",
    "tropical_membrane",
]
