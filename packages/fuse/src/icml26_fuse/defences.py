"""The attacker's preprocessing: spectral filters a model trainer applies to scraped images before training.

Each takes an image batch (B, C, H, W) in [0, 1] and returns one in [0, 1]:

* ``low_pass_filter``: the ideal radial FFT low-pass (``spectral.low_pass``), clipped back to [0, 1]
  (ringing can overshoot the range; the clip is the attacker's, done on purpose and documented);
* ``gaussian_blur``: ``scipy.ndimage.gaussian_filter`` over the two image axes (reflecting borders);
* ``jpeg_compress``: a real JPEG round trip through Pillow at ``quality`` (8-bit, per channel as grey images).
"""

from __future__ import annotations

import io

import numpy as np
import torch
from icml26_shared import check_int, check_positive
from PIL import Image
from scipy.ndimage import gaussian_filter

from .data import check_images
from .spectral import low_pass


def low_pass_filter(x, cutoff: float) -> torch.Tensor:
    """Keep radial frequencies ``r <= cutoff`` (``r = 1``: Nyquist along an axis), clip to [0, 1]."""
    return low_pass(check_images("x", x), cutoff).clamp(0.0, 1.0)


def gaussian_blur(x, sigma: float) -> torch.Tensor:
    """Gaussian blur with standard deviation ``sigma`` pixels (truncated at 4 sigma, reflecting borders)."""
    x = check_images("x", x)
    sigma = check_positive("sigma", sigma)
    return torch.from_numpy(gaussian_filter(x.numpy(), sigma=(0, 0, sigma, sigma), mode="reflect")).float()


def jpeg_compress(x, quality: int) -> torch.Tensor:
    """JPEG encode + decode each channel at ``quality`` (1..95, Pillow's scale) and return [0, 1] floats."""
    x = check_images("x", x)
    quality = check_int("quality", quality, 1, 95)
    pixels = np.rint(x.numpy() * 255).astype(np.uint8)
    out = np.empty_like(pixels)
    for index in np.ndindex(pixels.shape[:2]):
        buffer = io.BytesIO()
        Image.fromarray(pixels[index], mode="L").save(buffer, format="JPEG", quality=quality)
        out[index] = np.asarray(Image.open(io.BytesIO(buffer.getvalue())))
    return torch.from_numpy(out.astype(np.float32) / 255)
