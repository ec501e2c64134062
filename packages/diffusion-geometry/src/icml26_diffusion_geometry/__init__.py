"""Geometric Decoupling (ICML 2026): local scaling, local complexity and projected high-frequency energy of
the generative Jacobian of a diffusion sampler, with analytic generators and a trained miniature."""

from importlib.metadata import PackageNotFoundError, version

from .analytic import LinearGenerator, RankOneGenerator
from .method import (
    D_LOW,
    EPS,
    Geometry,
    derivative_point,
    generative_geometry,
    geometric_hotspots,
    laplacian,
    principal_stretch,
    projected_high_frequency_energy,
    random_subspace,
    robust_normalise,
    subspace_jacobian,
)

try:
    __version__ = version("icml26-diffusion-geometry")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "D_LOW",
    "EPS",
    "Geometry",
    "LinearGenerator",
    "RankOneGenerator",
    "derivative_point",
    "generative_geometry",
    "geometric_hotspots",
    "laplacian",
    "principal_stretch",
    "projected_high_frequency_energy",
    "random_subspace",
    "robust_normalise",
    "subspace_jacobian",
]
