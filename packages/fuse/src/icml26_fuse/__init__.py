"""FUSE: full-spectrum unlearnable examples via spectral equalization: reference implementation (icml26)."""

from importlib.metadata import PackageNotFoundError, version

from .baselines import error_minimising_noise
from .data import check_images, load_digits_images, split_digits
from .defences import gaussian_blur, jpeg_compress, low_pass_filter
from .method import (
    FuseSettings,
    PerturbationGenerator,
    cross_band_guidance,
    generator_loss,
    make_unlearnable,
    protect,
    train_generator,
)
from .networks import SmallCNN, accuracy, train_classifier
from .spectral import (
    R_MAX,
    cross_band_split,
    low_band_energy_fraction,
    low_pass,
    radial_energy_profile,
    radial_frequency,
    random_spectral_masking,
)

try:
    __version__ = version("icml26-fuse")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "R_MAX",
    "FuseSettings",
    "PerturbationGenerator",
    "SmallCNN",
    "accuracy",
    "check_images",
    "cross_band_guidance",
    "cross_band_split",
    "error_minimising_noise",
    "gaussian_blur",
    "generator_loss",
    "jpeg_compress",
    "load_digits_images",
    "low_band_energy_fraction",
    "low_pass",
    "low_pass_filter",
    "make_unlearnable",
    "protect",
    "radial_energy_profile",
    "radial_frequency",
    "random_spectral_masking",
    "split_digits",
    "train_classifier",
    "train_generator",
]
