"""What CEN is compared with: classic focus measures on reconstructed frames and a spike-count measure.

Frames are reconstructed from the spike blocks by texture-from-playback (TFP): the firing rate
``B_k / T`` of each pixel, proportional to its intensity. Each measure maps a frame (H, W) to a sharpness
score; a full sweep's focus is the position of the largest score (``argmax_peak``).
"""

from __future__ import annotations

import numpy as np
from icml26_shared import check_array, check_choice, check_int, fail
from scipy import ndimage

from .method import _check_blocks


def tfp_reconstruction(blocks, n_frames: int) -> np.ndarray:
    """Texture from playback: firing rate ``B / T`` per pixel (spikes per frame), same shape as ``blocks``."""
    blocks = check_array("blocks", blocks)
    check_int("n_frames", n_frames, 1)
    return blocks.astype(np.float64) / n_frames


def tenengrad(frame: np.ndarray) -> float:
    """Mean squared Sobel gradient magnitude ``mean(G_x^2 + G_y^2)``."""
    gx = ndimage.sobel(frame, axis=1, mode="reflect")
    gy = ndimage.sobel(frame, axis=0, mode="reflect")
    return float(np.mean(gx**2 + gy**2))


def laplacian_variance(frame: np.ndarray) -> float:
    """Variance of the 4-neighbour Laplacian."""
    return float(np.var(ndimage.laplace(frame, mode="reflect")))


def brenner(frame: np.ndarray) -> float:
    """Brenner gradient ``mean((I(x, y + 2) - I(x, y))^2)`` (horizontal, two-pixel difference)."""
    return float(np.mean((frame[:, 2:] - frame[:, :-2]) ** 2))


def normalised_variance(frame: np.ndarray) -> float:
    """``var(I) / mean(I)`` (Groen et al.): variance normalised by brightness."""
    mean = float(frame.mean())
    return float(frame.var() / mean) if mean > 0 else 0.0


def spike_dispersion(counts: np.ndarray) -> float:
    """[INF] spike dispersion: coefficient of variation ``std(B) / mean(B)`` of the per-pixel spike counts.

    Our stand-in for the spike-specific measure SD of Su et al. (CVPR 2024), whose formula is not public: a
    dispersion statistic of spike counts that, like SD, cancels a global brightness factor.
    """
    mean = float(counts.mean())
    return float(counts.std() / mean) if mean > 0 else 0.0


FOCUS_MEASURES = {
    "tenengrad": tenengrad,
    "laplacian_variance": laplacian_variance,
    "brenner": brenner,
    "normalised_variance": normalised_variance,
    "spike_dispersion": spike_dispersion,
}
GRADIENT_MEASURES = ("tenengrad", "laplacian_variance", "brenner")


def focus_curve(blocks, measure: str, n_frames: int = 1) -> np.ndarray:
    """A measure's score at every position of a sweep of spike blocks (K, H, W) -> (K,).

    Frame measures see the TFP reconstruction ``B / n_frames``; ``spike_dispersion`` sees the counts.
    """
    blocks = _check_blocks(blocks)
    check_choice("measure", measure, FOCUS_MEASURES)
    fn = FOCUS_MEASURES[measure]
    frames = blocks if measure == "spike_dispersion" else tfp_reconstruction(blocks, n_frames)
    return np.array([fn(f) for f in frames])


def argmax_peak(curve) -> int:
    """Focus of a full sweep by a classic measure: the position of the largest score."""
    c = check_array("curve", curve, ndim=1)
    if c.size < 1:
        raise fail("curve", curve, "a non-empty curve")
    return int(np.argmax(c))
