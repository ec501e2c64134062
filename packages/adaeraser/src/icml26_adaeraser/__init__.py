"""AdaEraser: adaptive attention suppression for training-free object removal (ICML 2026), reference implementation."""

from importlib.metadata import PackageNotFoundError, version

from .baselines import FixedSuppression, HardSuppression, biharmonic_inpaint
from .data import Scenes, make_scenes
from .denoiser import DiT, train_denoiser
from .method import (
    AdaptiveSuppression,
    AttentionSuppression,
    object_affinity,
    object_presence,
    suppress,
    suppression_bias,
)
from .metrics import object_residual, paired_sign_test, psnr, ssim
from .removal import Removal, remove_object

try:
    __version__ = version("icml26-adaeraser")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "AdaptiveSuppression",
    "AttentionSuppression",
    "DiT",
    "FixedSuppression",
    "HardSuppression",
    "Removal",
    "Scenes",
    "biharmonic_inpaint",
    "make_scenes",
    "object_affinity",
    "object_presence",
    "object_residual",
    "paired_sign_test",
    "psnr",
    "remove_object",
    "ssim",
    "suppress",
    "suppression_bias",
    "train_denoiser",
]
