"""Scenes, cameras and hidden images: a procedural cover model, a ring of views, scikit-image photographs."""

from __future__ import annotations

import math

import numpy as np
import torch
from icml26_shared import check_choice, check_int, check_positive, fail

from .render import SH_C0, Camera, Gaussians, look_at

HIDDEN_IMAGES = ("astronaut", "coffee", "chelsea", "rocket", "immunohistochemistry")  # RGB, shipped with skimage


def procedural_scene(
    n: int,
    rng: np.random.Generator,
    degree: int = 2,
    extent: float = 1.0,
    scale_range: tuple[float, float] = (0.03, 0.09),
    opacity_range: tuple[float, float] = (0.3, 0.9),
) -> Gaussians:
    """A stand-in for a trained 3DGS model (generated, not trained): ``n`` Gaussians uniform in the cube
    [-extent, extent]^3, log-uniform anisotropic scales, random rotations, and colours from a smooth random
    field (the DC band) plus small random higher bands (view-dependent colour)."""
    check_int("n", n, 1)
    check_int("degree", degree, 0, 2)
    check_positive("extent", extent)
    lo, hi = scale_range
    if not 0 < lo <= hi:
        raise fail("scale_range", scale_range, "0 < low <= high")
    if not 0 < opacity_range[0] <= opacity_range[1] < 1:
        raise fail("opacity_range", opacity_range, "0 < low <= high < 1")
    means = rng.uniform(-extent, extent, (n, 3))
    scales = np.exp(rng.uniform(math.log(lo), math.log(hi), (n, 3)))
    quats = rng.normal(size=(n, 4))
    opacities = rng.uniform(*opacity_range, n)
    freq, phase = rng.normal(0, 2.0, (3, 3)), rng.uniform(0, 2 * math.pi, 3)
    rgb = 0.5 + 0.4 * np.sin(means @ freq + phase)  # smooth colour field, in [0.1, 0.9]
    sh = rng.normal(0, 0.05, (n, (degree + 1) ** 2, 3))
    sh[:, 0] = (rgb - 0.5) / SH_C0  # colour = C0 f_dc + 0.5 seen from any direction, plus the higher bands
    return Gaussians(*(torch.tensor(a, dtype=torch.float32) for a in (means, scales, quats, opacities, sh)))


def orbit_camera(
    azimuth_deg: float, elevation_deg: float, distance: float = 4.0, fov_deg: float = 25.0, size: int = 48
) -> Camera:
    """A (size x size) camera ``distance`` from the origin at the given azimuth and elevation, looking at it."""
    check_positive("distance", distance)
    check_int("size", size, 4)
    if not -90 < elevation_deg < 90:
        raise fail("elevation_deg", elevation_deg, "an elevation in (-90, 90) degrees (z is up)")
    a, e = math.radians(azimuth_deg), math.radians(elevation_deg)
    eye = distance * np.array([math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)])
    return look_at(eye, fov_deg=fov_deg, size=(size, size))


def ring_cameras(
    n_views: int, distance: float = 4.0, elevation_deg: float = 20.0, fov_deg: float = 25.0, size: int = 48
) -> list[Camera]:
    """``n_views`` cameras evenly spaced on a circle around the z axis at ``elevation_deg``, all looking at the
    origin (the usual 360-degree capture of a 3DGS scene)."""
    check_int("n_views", n_views, 1)
    return [orbit_camera(360 * k / n_views, elevation_deg, distance, fov_deg, size) for k in range(n_views)]


def hidden_image(name: str, size: int) -> torch.Tensor:
    """A scikit-image sample photograph, centre-cropped to a square and resized (anti-aliased) to (size, size, 3)
    in [0, 1]: the image to hide."""
    from skimage import data
    from skimage.transform import resize

    check_choice("name", name, HIDDEN_IMAGES)
    check_int("size", size, 4)
    image = getattr(data, name)()[..., :3].astype(np.float64) / 255.0
    h, w = image.shape[:2]
    side = min(h, w)
    top, left = (h - side) // 2, (w - side) // 2
    square = image[top : top + side, left : left + side]
    small = resize(square, (size, size), anti_aliasing=True)
    return torch.tensor(np.clip(small, 0.0, 1.0), dtype=torch.float32)
