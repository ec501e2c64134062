"""Scenes for the focus sweeps: real photographs bundled with scikit-image and generated textures.

All scenes are (size, size) grey-level intensity images mapped to [0.05, 0.95] (a spike camera always sees
some light; no pixel saturates). The photographs are the sample images that ship inside the scikit-image
wheel (no download); the generated textures are a 1/f Gaussian random field and a field of random bars.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from icml26_shared import check_choice, check_int, fail

PHOTOGRAPHS = (
    "camera",
    "astronaut",
    "coins",
    "moon",
    "text",
    "brick",
    "grass",
    "gravel",
    "page",
    "clock",
    "coffee",
    "chelsea",
    "rocket",
    "cell",
    "immunohistochemistry",
)
TEXTURES = ("gaussian_field", "bars")
SCENES = PHOTOGRAPHS + TEXTURES
LOW, HIGH = 0.05, 0.95


@lru_cache(maxsize=len(PHOTOGRAPHS))
def photograph(name: str) -> np.ndarray:
    """A scikit-image sample photograph as grey levels in [0, 1], (H, W)."""
    check_choice("name", name, PHOTOGRAPHS)
    from skimage import color, data

    image = getattr(data, name)()
    if image.ndim == 3:
        image = color.rgb2gray(image[..., :3])
    image = np.asarray(image, dtype=np.float64)
    return image / 255.0 if image.max() > 1 else image


def gaussian_field(size: int, rng: np.random.Generator, exponent: float = 1.0) -> np.ndarray:
    """A random field with amplitude spectrum ``1 / rho^exponent`` (natural-image-like), in [0, 1]."""
    u = np.fft.fftfreq(size)[:, None]
    v = np.fft.fftfreq(size)[None, :]
    rho = np.sqrt(u**2 + v**2)
    amplitude = np.where(rho > 0, 1.0 / np.maximum(rho, 1e-12) ** exponent, 0.0)
    spectrum = amplitude * np.exp(2j * np.pi * rng.random((size, size)))
    field = np.fft.ifft2(spectrum).real
    return (field - field.min()) / (field.max() - field.min())


def bars(size: int, rng: np.random.Generator, n_bars: int = 24) -> np.ndarray:
    """Random axis-aligned bars of random grey levels on a grey background (text-like edges), in [0, 1]."""
    image = np.full((size, size), 0.5)
    for _ in range(n_bars):
        y, x = rng.integers(0, size, 2)
        h, w = rng.integers(2, size // 4, 2) if rng.random() < 0.5 else rng.integers(1, 4, 2) * [8, 1]
        image[y : y + h, x : x + w] = rng.random()
    return image


def scene(name: str, size: int, rng: np.random.Generator) -> np.ndarray:
    """A (size, size) scene in [LOW, HIGH]: a random crop of a photograph, downscaled so that its short side
    is 1.5 * size (keeping real texture at the sensor's scale), or a generated texture."""
    check_choice("name", name, SCENES)
    check_int("size", size, 16, 512)
    if name == "gaussian_field":
        image = gaussian_field(size, rng)
    elif name == "bars":
        image = bars(size, rng)
    else:
        from skimage.transform import rescale

        full = photograph(name)
        factor = 1.5 * size / min(full.shape)
        if factor > 1:
            raise fail("size", size, f"at most {int(min(full.shape) / 1.5)} for the photograph {name!r}")
        small = rescale(full, factor, anti_aliasing=True)
        y = rng.integers(0, small.shape[0] - size + 1)
        x = rng.integers(0, small.shape[1] - size + 1)
        image = small[y : y + size, x : x + size]
    span = image.max() - image.min()
    image = (image - image.min()) / span if span > 0 else np.zeros_like(image)
    return LOW + (HIGH - LOW) * image
