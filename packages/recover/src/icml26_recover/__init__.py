"""RECOVER (ICML 2026): detect whether images were used to fine-tune a diffusion model, from that model alone,
by how robustly it reconstructs them after DDIM inversion and a noise perturbation."""

from importlib.metadata import PackageNotFoundError, version

from .baselines import denoising_error, inversion_error, loss_attack, reference_contrast
from .diffusion import (
    EpsMLP,
    ddim_invert,
    ddim_reconstruct,
    ddim_step,
    fine_tune,
    make_denoiser,
    make_scheduler,
    train_ddpm,
)
from .method import Robustness, SetTest, auc, inversion_robustness, perturb, set_level_test, similarity

try:
    __version__ = version("icml26-recover")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "EpsMLP",
    "Robustness",
    "SetTest",
    "auc",
    "ddim_invert",
    "ddim_reconstruct",
    "ddim_step",
    "denoising_error",
    "fine_tune",
    "inversion_error",
    "inversion_robustness",
    "loss_attack",
    "make_denoiser",
    "make_scheduler",
    "perturb",
    "reference_contrast",
    "set_level_test",
    "similarity",
    "train_ddpm",
]
