"""What information a diffusion model injects, and when: neural entropy, image-label mutual
information through the guidance vector, exact on Gaussian mixtures and estimated on trained models."""

from importlib.metadata import PackageNotFoundError, version

from .gmm import GaussianMixture, kl_to_equilibrium, manifold_mixture, mutual_information
from .method import (
    InformationProfile,
    VPSchedule,
    entropy_production_rate,
    fraction_before,
    information_profile,
    integrate,
    mutual_information_rate,
    time_centroid,
    time_grid,
)

try:
    __version__ = version("icml26-diffusion-info")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "GaussianMixture",
    "InformationProfile",
    "VPSchedule",
    "entropy_production_rate",
    "fraction_before",
    "information_profile",
    "integrate",
    "kl_to_equilibrium",
    "manifold_mixture",
    "mutual_information",
    "mutual_information_rate",
    "time_centroid",
    "time_grid",
]
