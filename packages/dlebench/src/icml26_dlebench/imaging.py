"""Image helpers shared by the judges and the baselines: input checks, the judge's view, SSIM.

They sit below ``method`` and ``baselines`` so that both import them and neither imports the other's
module for them (no import cycle).

Axis letters: H, W image height and width; C = 3 colour channels.
"""

from __future__ import annotations

import numpy as np
from icml26_shared import fail

SSIM_WINDOW = 7  # skimage's default SSIM window (px)


def check_image(name: str, image, size: tuple[int, int] | None = None) -> np.ndarray:
    """An (H, W, 3) image: float in [0, 1] (finite) or uint8 (divided by 255); returned as float64."""
    arr = np.asarray(image)
    if arr.ndim != 3 or arr.shape[-1] != 3 or (size is not None and arr.shape[:2] != tuple(size)):
        want = f"({size[0]}, {size[1]}, 3)" if size is not None else "(H, W, 3)"
        raise fail(name, arr if arr.dtype != object else type(image).__name__, f"an RGB image of shape {want}")
    if arr.dtype == np.uint8:
        return arr.astype(np.float64) / 255.0
    if not np.issubdtype(arr.dtype, np.floating):
        raise fail(name, arr, "a float image in [0, 1] or a uint8 image")
    if not np.isfinite(arr).all() or arr.min() < 0 or arr.max() > 1:
        raise fail(name, arr, "finite float values in [0, 1]")
    return arr.astype(np.float64)


def zoom(image: np.ndarray, box: tuple[int, int, int, int] | None, size: int) -> np.ndarray:
    """The crop ``box`` of ``image`` (None: the whole image) resized to size x size: the judge's view.
    Bilinear; anti-aliased when the crop is shrunk, as an LMM's image preprocessing does."""
    from skimage.transform import resize

    crop = image if box is None else image[box[0] : box[2], box[1] : box[3]]
    shrink = crop.shape[0] > size or crop.shape[1] > size
    order = 0 if image.dtype == bool else 1
    return resize(crop, (size, size), order=order, anti_aliasing=shrink and order == 1, preserve_range=True)


def ssim(a: np.ndarray, b: np.ndarray) -> float:
    """Whole-image SSIM of two RGB images in [0, 1], as the field computes it: scikit-image's
    ``structural_similarity`` (7 x 7 windows, channels averaged), i.e. the mean of the local SSIM map
    over the windows that lie inside the image (the reflect-padded border is left out)."""
    from skimage.metrics import structural_similarity

    return float(structural_similarity(a, b, win_size=SSIM_WINDOW, channel_axis=-1, data_range=1.0))


def ssim_map(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(H, W) local SSIM of two RGB images in [0, 1] (7 x 7 windows, averaged over channels); at the
    border the windows see the reflect-padded image. Means over a region of it are region SSIMs."""
    from skimage.metrics import structural_similarity

    _, full = structural_similarity(a, b, win_size=SSIM_WINDOW, channel_axis=-1, data_range=1.0, full=True)
    return full.mean(axis=-1)
