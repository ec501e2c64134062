"""How a removal is scored against the known clean background: PSNR and SSIM inside the mask, an object
residual score, PSNR outside the mask, and a paired sign-flip test between two methods."""

from __future__ import annotations

import numpy as np
from icml26_shared import check_array, check_int, fail

DATA_RANGE = 2.0  # images live in [-1, 1]


def _check_pair(result: np.ndarray, truth: np.ndarray, region: np.ndarray) -> tuple[np.ndarray, ...]:
    result = check_array("result", result, ndim=4)
    truth = check_array("truth", truth, ndim=4)
    region = check_array("region", region, ndim=3)
    if result.shape != truth.shape:
        raise fail("result", result, f"the shape of truth {truth.shape}")
    if region.shape != (truth.shape[0], *truth.shape[2:]):
        raise fail("region", region, f"shape {(truth.shape[0], *truth.shape[2:])}")
    if (region.sum((1, 2)) == 0).any():
        raise fail("region", region, "a non-empty region for every image")
    return result.astype(np.float64), truth.astype(np.float64), region.astype(np.float64)


def psnr(result: np.ndarray, truth: np.ndarray, region: np.ndarray) -> np.ndarray:
    """PSNR (dB) per image over the pixels of ``region`` (n, S, S): ``10 log10(range^2 / MSE)``."""
    result, truth, region = _check_pair(result, truth, region)
    mse = ((result - truth) ** 2 * region[:, None]).sum((1, 2, 3)) / (3 * region.sum((1, 2)))
    with np.errstate(divide="ignore"):
        return 10 * np.log10(DATA_RANGE**2 / mse)


def ssim(result: np.ndarray, truth: np.ndarray, region: np.ndarray) -> np.ndarray:
    """Mean of scikit-image's SSIM map (7x7 window, all channels) over the pixels of ``region``, per image."""
    from skimage.metrics import structural_similarity

    result, truth, region = _check_pair(result, truth, region)
    out = []
    for x, y, r in zip(result, truth, region, strict=True):
        _, full = structural_similarity(x, y, data_range=DATA_RANGE, channel_axis=0, full=True)
        out.append((full.mean(0) * r).sum() / r.sum())
    return np.array(out)


def object_residual(
    result: np.ndarray, background: np.ndarray, object_mask: np.ndarray, color: np.ndarray
) -> np.ndarray:
    """How much of the object is left, per image: the error projected on the object's contrast over the
    object's pixels, ``sum <x - b, c - b> / sum |c - b|^2``: 1 for the source image, 0 for the background
    (an error orthogonal to the object's colour, e.g. a wrong texture, does not count as object)."""
    result, background, object_mask = _check_pair(result, background, object_mask)
    color = check_array("color", color, ndim=2)
    if color.shape != (result.shape[0], result.shape[1]):
        raise fail("color", color, f"shape {(result.shape[0], result.shape[1])}: one colour per image")
    contrast = (color[:, :, None, None] - background) * object_mask[:, None]
    return ((result - background) * contrast).sum((1, 2, 3)) / (contrast**2).sum((1, 2, 3))


def paired_sign_test(differences: np.ndarray, rounds: int = 20000, seed: int = 0) -> float:
    """One-sided p-value of a paired sign-flip permutation test that the mean difference is > 0
    (exact enumeration for up to 16 pairs, else ``rounds`` random sign flips)."""
    d = check_array("differences", differences, ndim=1).astype(np.float64)
    check_int("rounds", rounds, 1)
    if d.size < 2:
        raise fail("differences", d, "at least 2 paired differences")
    observed = d.mean()
    if d.size <= 16:
        signs = 1 - 2 * ((np.arange(2**d.size)[:, None] >> np.arange(d.size)) & 1)
    else:
        signs = np.random.default_rng(seed).choice([-1.0, 1.0], (rounds, d.size))
    null = (signs * d).mean(1)
    return float((np.sum(null >= observed - 1e-12) + (d.size > 16)) / (len(null) + (d.size > 16)))
