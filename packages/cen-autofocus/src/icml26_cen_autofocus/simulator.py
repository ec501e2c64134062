"""A spike-camera simulator over a focus sweep: defocus PSF, illumination drift, motion, a second depth, noise.

Each pixel integrates photons, ``A <- A + N_t`` with ``N_t ~ Poisson(photons * g_k * I(x) + dark)``, emits
``s_t = 1`` when ``A >= theta`` and resets by subtraction ``A <- A - theta`` (the spike camera's
integrate-and-fire; at most one spike per frame). ``integrate_and_fire`` runs this frame by frame;
``block_counts`` gives the block's spike count in closed form, ``floor((A_0 + sum_t N_t) / theta)``, which is
exact whenever a frame adds less than ``theta`` (no backlog; ``check`` in ``SweepSpec``) and the sum of the
per-frame Poisson draws is itself Poisson: the same distribution, at a fraction of the cost.

Arrays: ``scene`` (H, W) intensity in [0, 1]; ``intensity`` (K, H, W) on the sensor per focus position k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from icml26_shared import (
    check_array,
    check_choice,
    check_closed_interval,
    check_int,
    check_number,
    check_positive,
    fail,
)
from scipy import ndimage

DRIFTS = ("none", "linear", "sinusoid", "step")


def defocus_sigma(n_positions: int, k_focus: float, sigma0: float, slope: float) -> np.ndarray:
    """Gaussian PSF width per position: ``sigma_k = sigma0 + slope * |k - k_focus|`` (pixels), (K,)."""
    check_int("n_positions", n_positions, 1)
    check_number("k_focus", k_focus)
    check_closed_interval("sigma0", sigma0, 0.0, math.inf)
    check_positive("slope", slope)
    return sigma0 + slope * np.abs(np.arange(n_positions) - k_focus)


def illumination_drift(n_positions: int, pattern: str, strength: float, rng: np.random.Generator) -> np.ndarray:
    """Multiplicative brightness ``g_k`` over the sweep, (K,), all > 0.

    ``linear``: a ramp from 1 to ``1 - strength`` (or the reverse, at random); ``sinusoid``: ``1 + strength/2 *
    sin(2 pi f k / K + phi)`` with 1-2 periods; ``step``: a sudden change by the factor ``1 - strength`` at a random
    position; ``none``: 1.
    """
    check_int("n_positions", n_positions, 1)
    check_choice("pattern", pattern, DRIFTS)
    check_closed_interval("strength", strength, 0.0, 0.95)
    k = np.arange(n_positions) / max(n_positions - 1, 1)
    if pattern == "none":
        return np.ones(n_positions)
    if pattern == "linear":
        ramp = 1.0 - strength * k
        return ramp if rng.random() < 0.5 else ramp[::-1].copy()
    if pattern == "sinusoid":
        periods, phase = rng.uniform(1.0, 2.0), rng.uniform(0, 2 * math.pi)
        return 1.0 + 0.5 * strength * np.sin(2 * math.pi * periods * k + phase)
    at = rng.integers(1, n_positions)  # step
    g = np.ones(n_positions)
    g[at:] = 1.0 - strength
    return g if rng.random() < 0.5 else g[::-1].copy()


def check_scene(name: str, scene) -> np.ndarray:
    """A finite (H, W) intensity image with values in [0, 1] (no silent clipping)."""
    s = check_array(name, scene, ndim=2)
    if (s < 0).any() or (s > 1).any():
        raise fail(name, scene, "intensities in [0, 1]")
    return s.astype(np.float64)


@dataclass(frozen=True)
class SweepSpec:
    """One focus sweep: optics, nuisances and the sensor.

    ``k_focus`` (fractional index) is where the main object is sharp; ``second_focus``/``second_fraction``
    put a second object (the left ``second_fraction`` of the columns) at another depth, giving two peaks.
    ``motion`` is the standard deviation (pixels) of the scene's random-walk translation per focus step.
    """

    n_positions: int = 41
    k_focus: float = 20.0
    sigma0: float = 0.6
    slope: float = 0.35
    drift: str = "none"
    drift_strength: float = 0.0
    motion: float = 0.0
    second_focus: float | None = None
    second_fraction: float = 0.0
    n_frames: int = 128
    photons: float = 16.0  # photons per frame at intensity 1
    theta: float = 64.0  # photons per spike
    dark: float = 0.2  # dark photons per frame

    def __post_init__(self) -> None:
        check_int("n_positions", self.n_positions, 3)
        k = check_number("k_focus", self.k_focus)
        if not 0 <= k <= self.n_positions - 1:
            raise fail("k_focus", self.k_focus, f"a position in [0, {self.n_positions - 1}]")
        check_closed_interval("sigma0", self.sigma0, 0.0, math.inf)
        check_positive("slope", self.slope)
        check_choice("drift", self.drift, DRIFTS)
        check_closed_interval("drift_strength", self.drift_strength, 0.0, 0.95)
        check_closed_interval("motion", self.motion, 0.0, math.inf)
        if self.second_focus is not None:
            check_closed_interval("second_focus", self.second_focus, 0.0, self.n_positions - 1)
        check_closed_interval("second_fraction", self.second_fraction, 0.0, 0.5)
        check_int("n_frames", self.n_frames, 1)
        check_positive("photons", self.photons)
        check_positive("theta", self.theta)
        check_closed_interval("dark", self.dark, 0.0, math.inf)
        if self.photons + self.dark > 0.5 * self.theta:
            raise fail("theta", self.theta, f"theta >= 2 * (photons + dark) = {2 * (self.photons + self.dark)}")


def render_sweep(scene, spec: SweepSpec, rng: np.random.Generator, second=None) -> np.ndarray:
    """The intensity on the sensor at each focus position, (K, H, W), drift included, before photon noise."""
    scene = check_scene("scene", scene)
    if spec.second_focus is not None:
        second = check_scene("second", scene if second is None else second)
        if second.shape != scene.shape:
            raise fail("second", second, f"an image of the scene's shape {scene.shape}")
    sigma = defocus_sigma(spec.n_positions, spec.k_focus, spec.sigma0, spec.slope)
    gain = illumination_drift(spec.n_positions, spec.drift, spec.drift_strength, rng)
    offsets = np.cumsum(rng.normal(0.0, spec.motion, size=(spec.n_positions, 2)), axis=0) if spec.motion else None
    if spec.second_focus is not None:
        sigma2 = defocus_sigma(spec.n_positions, spec.second_focus, spec.sigma0, spec.slope)
        mask = np.zeros(scene.shape)
        mask[:, : round(spec.second_fraction * scene.shape[1])] = 1.0
    out = np.empty((spec.n_positions, *scene.shape))
    for k in range(spec.n_positions):
        main = scene if offsets is None else ndimage.shift(scene, offsets[k], order=1, mode="reflect")
        image = ndimage.gaussian_filter(main, sigma[k], mode="reflect")
        if spec.second_focus is not None:
            image = mask * ndimage.gaussian_filter(second, sigma2[k], mode="reflect") + (1 - mask) * image
        out[k] = gain[k] * image
    return out


def integrate_and_fire(
    intensity, n_frames: int, photons: float, theta: float, dark: float, rng: np.random.Generator, initial=None
) -> np.ndarray:
    """Binary spike stream of each pixel over ``n_frames`` frames: (..., H, W) intensity -> (T, ..., H, W) bool.

    ``A <- A + Poisson(photons * I + dark)``; ``s_t = [A >= theta]``; ``A <- A - theta s_t``. ``initial`` is the
    accumulator at t = 0 (default: uniform in [0, theta), the residue of earlier integration).
    """
    lam = _photon_rate(intensity, photons, dark)
    check_int("n_frames", n_frames, 1)
    theta = check_positive("theta", theta)
    acc = rng.uniform(0, theta, size=lam.shape) if initial is None else np.array(initial, dtype=np.float64)
    spikes = np.zeros((n_frames, *lam.shape), dtype=bool)
    for t in range(n_frames):
        acc += rng.poisson(lam)
        fired = acc >= theta
        acc[fired] -= theta
        spikes[t] = fired
    return spikes


def block_counts(
    intensity, n_frames: int, photons: float, theta: float, dark: float, rng: np.random.Generator, initial=None
) -> np.ndarray:
    """Spike count of a block of ``n_frames`` frames in closed form, ``floor((A_0 + sum_t N_t) / theta)``.

    Same distribution as ``integrate_and_fire(...).sum(0)`` when a frame adds less than ``theta`` photons.
    """
    lam = _photon_rate(intensity, photons, dark)
    check_int("n_frames", n_frames, 1)
    theta = check_positive("theta", theta)
    acc = rng.uniform(0, theta, size=lam.shape) if initial is None else np.array(initial, dtype=np.float64)
    return np.floor((acc + rng.poisson(lam * n_frames)) / theta).astype(np.int64)


def _photon_rate(intensity, photons: float, dark: float) -> np.ndarray:
    i = check_array("intensity", intensity)
    if (i < 0).any():
        raise fail("intensity", intensity, "non-negative intensities")
    check_positive("photons", photons)
    check_closed_interval("dark", dark, 0.0, math.inf)
    return photons * i.astype(np.float64) + dark


def simulate_sweep(scene, spec: SweepSpec, rng: np.random.Generator, second=None, stream: bool = False) -> np.ndarray:
    """Accumulated spike blocks of a whole focus sweep, (K, H, W) counts.

    ``stream=True`` simulates every binary frame and accumulates it (``integrate_and_fire``); the default uses
    the closed-form block count (same distribution, about 100x faster).
    """
    intensity = render_sweep(scene, spec, rng, second)
    if stream:
        spikes = integrate_and_fire(intensity, spec.n_frames, spec.photons, spec.theta, spec.dark, rng)
        return spikes.sum(axis=0, dtype=np.int64)
    return block_counts(intensity, spec.n_frames, spec.photons, spec.theta, spec.dark, rng)
