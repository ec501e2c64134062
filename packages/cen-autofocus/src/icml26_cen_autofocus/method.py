"""CEN (Centroid-based Energy Navigation): spike-camera autofocus by spectral-centroid migration.

The pipeline of the paper, step by step (numbering ours; the formulas marked [INF] are our reconstruction
from the paper's description, see the README):

1. accumulate spike blocks ``B_k = sum_{t in block k} s_t`` (no image reconstruction, no edges);
2. spectrum ``P_k(u, v) = |FFT2(w * (B_k - mean B_k))|^2`` with a Hann window ``w`` [INF];
3. bounded spectral centroid ``C_k(b) = sum_{0<rho<=b} rho P_k / sum_{0<rho<=b} P_k`` [INF formula]:
   spectral energy migrates outward (C rises) approaching focus and recedes under renewed defocus;
4. structure-consistent response identification: among the bounds ``b_1..b_M`` select the one whose
   curve ``k -> C_k(b)`` has the clearest localized interior extremum [INF score], after a 3-position
   running median that removes single-position outliers (an extremum must be consistent over neighbouring
   positions) [INF];
5. robust peak localisation by the weighted near-maximum centroid of the selected curve [INF details].

Arrays: ``spikes`` (T, H, W) binary; ``blocks`` (K, H, W) spike counts, one per focus position k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from icml26_shared import check_array, check_int, check_open_interval, fail
from scipy import ndimage

RHO_MAX = 0.5 * math.sqrt(2.0)  # largest radial frequency of a 2-D DFT, cycles/pixel
BOUNDS = (0.06, 0.09, 0.125, 0.18, 0.25, 0.35, 0.5)  # [INF] frequency bounds b_m, cycles/pixel
DELTA = 0.1  # [INF] near-maximum band, a fraction of the curve's range
SMOOTH = 3  # [INF] running-median window over focus positions before steps 4-5 (1: none)
MIN_POSITIONS = 3  # an interior extremum needs at least one position between two ends


def accumulate_spikes(spikes: np.ndarray, block: int) -> np.ndarray:
    """Spike blocks ``B_k = sum_{t in block k} s_t`` (step 1): (T, H, W) binary -> (T // block, H, W) counts.

    ``block`` must divide T: a partial block would hold fewer frames and bias its counts.
    """
    spikes = check_array("spikes", spikes, ndim=3)
    if not np.isin(spikes, (0, 1)).all():
        raise fail("spikes", spikes, "a binary spike stream (values 0 or 1)")
    n_frames = spikes.shape[0]
    block = check_int("block", block, 1, n_frames)
    if n_frames % block:
        raise fail("block", block, f"a block size that divides the {n_frames} frames")
    h, w = spikes.shape[1:]
    return spikes.reshape(n_frames // block, block, h, w).sum(axis=1, dtype=np.int64)


def radial_frequency(shape: tuple[int, int]) -> np.ndarray:
    """``rho = sqrt(u^2 + v^2)`` in cycles/pixel for an (H, W) DFT grid, in [0, RHO_MAX]."""
    u = np.fft.fftfreq(shape[0])[:, None]
    v = np.fft.fftfreq(shape[1])[None, :]
    return np.sqrt(u**2 + v**2)


def power_spectrum(blocks: np.ndarray, window: bool = True) -> np.ndarray:
    """``|FFT2(w * (B - mean B))|^2`` over the last two axes (step 2), the full (..., H, W) grid.

    Removing the mean drops the DC term, which only measures brightness; the Hann window ``w`` [INF]
    keeps the image border (a discontinuity for the periodic DFT) from leaking energy to high frequencies.
    """
    return np.abs(np.fft.fft2(_centred(blocks, window))) ** 2


def _centred(blocks: np.ndarray, window: bool) -> np.ndarray:
    b = np.asarray(blocks, dtype=np.float64)
    b = b - b.mean(axis=(-2, -1), keepdims=True)
    if window:
        b = b * np.outer(np.hanning(b.shape[-2]), np.hanning(b.shape[-1]))
    return b


@lru_cache(maxsize=32)
def _band_weights(shape: tuple[int, int], bounds: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Band masks on the half (rfft2) grid, (H * (W//2+1), M), each bin counted as often as it appears in the
    full spectrum (Hermitian symmetry: columns 1..ceil(W/2)-1 twice); and the same masks times ``rho``."""
    h, w = shape
    rho = np.sqrt(np.fft.fftfreq(h)[:, None] ** 2 + np.fft.rfftfreq(w)[None, :] ** 2)
    multiplicity = np.full(rho.shape[1], 2.0)
    multiplicity[0] = 1.0
    if w % 2 == 0:
        multiplicity[-1] = 1.0
    rho, mult = rho.ravel(), np.broadcast_to(multiplicity, (h, rho.shape[1])).ravel()
    band = ((rho > 0)[:, None] & (rho[:, None] <= np.array(bounds)[None, :])) * mult[:, None]
    return band, band * rho[:, None]


def _check_blocks(blocks: np.ndarray) -> np.ndarray:
    blocks = check_array("blocks", blocks, ndim=3)
    if blocks.shape[0] < MIN_POSITIONS:
        raise fail("blocks", blocks, f"a focus sweep of at least {MIN_POSITIONS} positions (K, H, W)")
    if min(blocks.shape[1:]) < 4:
        raise fail("blocks", blocks, "images of at least 4 x 4 pixels")
    if (blocks < 0).any():
        raise fail("blocks", blocks, "non-negative spike counts")
    return blocks


def _check_bounds(bounds, shape: tuple[int, int]) -> np.ndarray:
    b = check_array("bounds", bounds, ndim=1)
    if not ((b > 0) & (b <= RHO_MAX)).all():
        raise fail("bounds", bounds, f"frequency bounds in (0, {RHO_MAX:.4f}] cycles/pixel")
    smallest = min(1.0 / shape[0], 1.0 / shape[1])  # first non-zero frequency of the grid
    if b.min() < smallest:
        raise fail("bounds", bounds, f"bounds >= {smallest:.4f}, so that each band holds a frequency for {shape}")
    return b.astype(np.float64)


def bounded_spectral_centroid(blocks: np.ndarray, bounds=BOUNDS, window: bool = True) -> np.ndarray:
    """Centroid curves ``C[m, k] = sum_{0<rho<=b_m} rho P_k / sum_{0<rho<=b_m} P_k`` (step 3): (M, K).

    A ratio of two sums of the same spectrum, so a global brightness factor ``g_k`` (``B -> g B``) cancels.
    A block without structure inside a band (all power 0) gets centroid 0 there.
    """
    blocks = _check_blocks(blocks)
    b = _check_bounds(bounds, blocks.shape[1:])
    band, rho_band = _band_weights(blocks.shape[1:], tuple(float(x) for x in b))
    power = np.abs(np.fft.rfft2(_centred(blocks, window))) ** 2  # half of the symmetric spectrum
    power = power.reshape(blocks.shape[0], -1)  # (K, H * (W//2+1))
    energy = power @ band  # (K, M): sum_{0<rho<=b} P
    moment = power @ rho_band  # (K, M): sum_{0<rho<=b} rho P
    centroid = np.divide(moment, energy, out=np.zeros_like(moment), where=energy > 0)
    return centroid.T


@dataclass(frozen=True)
class ResponseStructure:
    """How clear, localized and interior a curve's maximum is (step 4, [INF] score).

    ``prominence``: how far the curve descends on both sides of its maximum, as a fraction of its range;
    ``width``: half-prominence width around the maximum, in positions; ``score = prominence * (1 - width / K)``
    if the maximum is interior (not at the first or last position), else 0: clear (prominent) first, then
    localized (narrow). (The score ``prominence / width`` of our research notes let one-position noise
    spikes win over real peaks, so we weigh width linearly.)
    """

    peak: int
    prominence: float
    width: int
    interior: bool
    score: float


def response_structure(curve: np.ndarray) -> ResponseStructure:
    """The structure of one focus curve (K,)."""
    c = check_array("curve", curve, ndim=1)
    if c.size < MIN_POSITIONS:
        raise fail("curve", curve, f"a curve of at least {MIN_POSITIONS} positions")
    peak = int(np.argmax(c))
    span = float(c.max() - c.min())
    interior = 0 < peak < c.size - 1
    if span <= 0 or not interior:
        return ResponseStructure(peak, 0.0, c.size, interior, 0.0)
    prominence = float(min(c[peak] - c[:peak].min(), c[peak] - c[peak + 1 :].min())) / span
    level = c[peak] - 0.5 * prominence * span
    lo, hi = peak, peak
    while lo > 0 and c[lo - 1] >= level:
        lo -= 1
    while hi < c.size - 1 and c[hi + 1] >= level:
        hi += 1
    width = hi - lo + 1
    return ResponseStructure(peak, prominence, width, True, prominence * (1.0 - width / c.size))


def select_response(curves: np.ndarray) -> int:
    """Index of the bound whose curve has the clearest localized interior extremum (step 4).

    Highest ``score``; if no curve has an interior maximum, the curve with the largest relative range
    (the most informative one) [INF fallback].
    """
    curves = check_array("curves", curves, ndim=2)
    scores = np.array([response_structure(c).score for c in curves])
    if scores.max() > 0:
        return int(np.argmax(scores))
    spans = (curves.max(1) - curves.min(1)) / np.maximum(np.abs(curves).max(1), 1e-300)
    return int(np.argmax(spans))


class NoFocusSignal(ValueError):
    """A curve (or every curve of a sweep) is flat: no position is sharper than another, so no focus exists.

    Raised instead of a silent k* = 0: a powerless sweep (all blocks without spikes, or without power in any
    band) or identical blocks at every position.
    """


def near_max_centroid(curve: np.ndarray, delta: float = DELTA) -> float:
    """Weighted near-maximum centroid ``k* = sum_K w_k k / sum_K w_k`` (step 5), a sub-step estimate.

    ``K``: the positions around the maximum (contiguous run, [INF]) with ``C_k >= C_max - delta * range``;
    weights ``w_k = C_k - (C_max - delta * range)``, so the maximum weighs most and the band edge zero.
    k* lies in the run: exactly the peak for a one-position run. A flat curve raises ``NoFocusSignal``.
    """
    c = check_array("curve", curve, ndim=1)
    delta = check_open_interval("delta", delta, 0.0, 1.0)
    peak = int(np.argmax(c))
    span = float(c.max() - c.min())
    if span <= 0:
        raise NoFocusSignal(f"curve={c!r}: expected a curve with a maximum, got a flat one (no focus signal)")
    floor = c[peak] - delta * span
    lo, hi = peak, peak
    while lo > 0 and c[lo - 1] >= floor:
        lo -= 1
    while hi < c.size - 1 and c[hi + 1] >= floor:
        hi += 1
    if lo == hi:
        return float(peak)
    w = c[lo : hi + 1] - floor  # >= 0, and > 0 at the peak
    offset = float((w * np.arange(hi - lo + 1)).sum() / w.sum())
    return lo + min(offset, float(hi - lo))  # a weighted mean of 0..hi-lo; min() undoes a last-bit overshoot


def to_lens_position(k_star: float, positions) -> float:
    """Map a fractional sweep index to a lens position by linear interpolation (positions strictly increasing)."""
    p = check_array("positions", positions, ndim=1)
    if p.size < MIN_POSITIONS or not (np.diff(p) > 0).all():
        raise fail("positions", positions, f"a strictly increasing focus sweep of >= {MIN_POSITIONS} positions")
    return float(np.interp(k_star, np.arange(p.size), p))


def consistent_response(curves: np.ndarray, smooth: int = SMOOTH) -> np.ndarray:
    """Running median of width ``smooth`` along the focus positions of each curve, (M, K) -> (M, K) [INF].

    A single-position outlier (a noisy block far from focus) cannot form a peak of its own; a real focus
    response, several positions wide, keeps its place and shape. ``smooth=1`` returns the curves unchanged.
    """
    curves = check_array("curves", curves, ndim=2)
    smooth = check_int("smooth", smooth, 1, curves.shape[1])
    if smooth % 2 == 0:
        raise fail("smooth", smooth, "an odd window (centred on each position)")
    return ndimage.median_filter(curves, size=(1, smooth), mode="nearest")


@dataclass(frozen=True)
class CENResult:
    """What CEN decided for one sweep: the focus estimate and everything behind it."""

    k_star: float  # fractional sweep index of focus
    position: float  # k_star mapped to the lens positions (equals k_star without positions)
    bound: float  # the selected frequency bound b, cycles/pixel
    curves: np.ndarray  # (M, K) centroid curves, one per bound
    responses: np.ndarray  # (M, K) the curves after the running median (what steps 4-5 read)
    scores: np.ndarray  # (M,) structure scores


def cen_autofocus(
    blocks: np.ndarray, bounds=BOUNDS, delta: float = DELTA, positions=None, smooth: int = SMOOTH
) -> CENResult:
    """CEN on accumulated spike blocks (K, H, W) of a focus sweep: steps 2-5.

    Raises ``NoFocusSignal`` (a ValueError) when every centroid curve is flat (powerless or identical blocks).
    """
    delta = check_open_interval("delta", delta, 0.0, 1.0)
    curves = bounded_spectral_centroid(blocks, bounds)
    if positions is not None and len(np.atleast_1d(positions)) != curves.shape[1]:
        raise fail("positions", positions, f"{curves.shape[1]} lens positions, one per block")
    responses = consistent_response(curves, smooth)
    if (responses.max(1) <= responses.min(1)).all():
        raise NoFocusSignal(
            f"blocks=<{curves.shape[1]} blocks>: expected a sweep whose centroid varies with the lens position, "
            "got flat centroid curves at every bound (no power in any band, or identical blocks): no focus signal"
        )
    m = select_response(responses)
    k_star = near_max_centroid(responses[m], delta)
    position = k_star if positions is None else to_lens_position(k_star, positions)
    scores = np.array([response_structure(c).score for c in responses])
    return CENResult(k_star, position, float(np.asarray(bounds)[m]), curves, responses, scores)
