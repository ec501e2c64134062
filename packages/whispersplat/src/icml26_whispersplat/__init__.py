"""WhisperSplat: lossless steganography in 3D Gaussian splatting (ICML 2026), reference implementation."""

from importlib.metadata import PackageNotFoundError, version

from .baselines import Decoder, WeightHiding, hide_in_weights
from .data import HIDDEN_IMAGES, hidden_image, orbit_camera, procedural_scene, ring_cameras
from .method import Stego, gpp_weight, hide, psnr, reconstruction_loss, ssim
from .render import (
    Camera,
    Gaussians,
    Projection,
    Splats,
    as_splats,
    covariance_3d,
    look_at,
    project,
    quat_to_rotmat,
    render,
    sh_basis,
    sh_to_rgb,
    splat,
)

try:
    __version__ = version("icml26-whispersplat")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "HIDDEN_IMAGES",
    "Camera",
    "Decoder",
    "Gaussians",
    "Projection",
    "Splats",
    "Stego",
    "WeightHiding",
    "as_splats",
    "covariance_3d",
    "gpp_weight",
    "hidden_image",
    "hide",
    "hide_in_weights",
    "look_at",
    "orbit_camera",
    "procedural_scene",
    "project",
    "psnr",
    "quat_to_rotmat",
    "reconstruction_loss",
    "render",
    "ring_cameras",
    "sh_basis",
    "sh_to_rgb",
    "splat",
    "ssim",
]
