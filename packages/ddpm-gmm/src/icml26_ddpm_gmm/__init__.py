"""Dimension-Free Convergence of Diffusion Models for Approximate Gaussian Mixtures: reference implementation (icml26).

DDPM with exact Gaussian-mixture scores under the paper's schedule, its comparators (linear/cosine
schedules, DDIM, probability-flow ODE) and the exact total variation of every sampler.
"""

from importlib.metadata import PackageNotFoundError, version

from .baselines import (
    cosine_schedule,
    ddim_coefficients,
    linear_schedule,
    numpy_ddpm_sample,
    probability_flow_coefficients,
)
from .exact import chain_density_1d, orthogonal_variance, tv_1d, tv_d, tv_dims
from .method import (
    Coefficients,
    GaussianMixture,
    alpha_bars,
    ddpm_coefficients,
    ddpm_sample,
    gmm_score,
    paper_schedule,
    sample_chain,
)

try:
    __version__ = version("icml26-ddpm-gmm")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "Coefficients",
    "GaussianMixture",
    "alpha_bars",
    "chain_density_1d",
    "cosine_schedule",
    "ddim_coefficients",
    "ddpm_coefficients",
    "ddpm_sample",
    "gmm_score",
    "linear_schedule",
    "numpy_ddpm_sample",
    "orthogonal_variance",
    "paper_schedule",
    "probability_flow_coefficients",
    "sample_chain",
    "tv_1d",
    "tv_d",
    "tv_dims",
]
