"""The frequency side of FUSE: radial frequencies, band masks, the ideal low-pass split, Random Spectral
Masking (RSM) and the spectral diagnostic of where a perturbation's energy sits.

Frequencies are radial and normalised per axis: ``r = sqrt((2 f_y)^2 + (2 f_x)^2)`` with ``f`` in cycles per
pixel (``numpy.fft.fftfreq``), so ``r = 1`` is the Nyquist frequency along an axis and the corner of the
spectrum is ``R_MAX = sqrt(2)``. Non-square images are allowed: each axis is normalised by its own length.
Every mask depends on ``|f|`` only, so it is Hermitian-symmetric and a masked real image stays real.
"""

from __future__ import annotations

import math

import torch
from icml26_shared import check_closed_interval, check_number, fail

R_MAX = math.sqrt(2.0)  # the largest normalised radial frequency (the spectrum's corner)


def radial_frequency(height: int, width: int) -> torch.Tensor:
    """Normalised radial frequency ``r`` (H, W) of every FFT bin, in the unshifted ``fft2`` layout."""
    f_y = torch.fft.fftfreq(height, dtype=torch.float64) * 2
    f_x = torch.fft.fftfreq(width, dtype=torch.float64) * 2
    return torch.sqrt(f_y[:, None] ** 2 + f_x[None, :] ** 2)


def check_cutoff(name: str, cutoff: float) -> float:
    """A radius inside the spectrum, ``0 <= cutoff <= R_MAX``; radii beyond the image are refused."""
    return check_closed_interval(name, cutoff, 0.0, R_MAX)


def apply_spectral_mask(x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """``iFFT2(FFT2(x) * keep)`` over the last two axes; ``keep`` (..., H, W) broadcasts against ``x``."""
    spectrum = torch.fft.fft2(x)
    return torch.fft.ifft2(spectrum * keep.to(spectrum.real.dtype)).real.to(x.dtype)


def low_pass(x: torch.Tensor, cutoff: float) -> torch.Tensor:
    """Ideal radial low-pass: keep the bins with ``r <= cutoff`` (x: (B, C, H, W), any real values).

    Used for the cross-band split of FUSE (``delta_L = LP_rho(delta)``) and as the attacker's filter.
    ``cutoff = 0`` keeps the mean of each image; ``cutoff = R_MAX`` is the identity.
    """
    cutoff = check_cutoff("cutoff", cutoff)
    if not isinstance(x, torch.Tensor) or x.ndim != 4:
        raise fail("x", x, "a torch tensor of shape (B, C, H, W)")
    keep = radial_frequency(x.shape[-2], x.shape[-1]) <= cutoff
    return apply_spectral_mask(x, keep)


def cross_band_split(delta: torch.Tensor, cutoff: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``(delta_L, delta_H)`` with ``delta_L = LP_rho(delta)`` and ``delta_H = delta - delta_L`` (CBG's bands)."""
    delta_low = low_pass(delta, cutoff)
    return delta_low, delta - delta_low


def sample_bands(
    n: int, band_width: tuple[float, float], generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """RSM's random bands: widths ``w ~ U[w_min, w_max]`` and starts ``r0 ~ U[-w, R_MAX]`` ([INF] ours).

    Returns ``(r0, w)``, each (n,). The band is the closed interval ``[r0, r0 + w]``, clipped to the
    spectrum ``[0, R_MAX]``; with the start uniform on ``[-w, R_MAX]`` every radius ``r`` in ``[0, R_MAX]``
    is removed with the same probability ``w / (R_MAX + w)``, the DC bin and the corner bin included (a band
    that had to fit inside the spectrum could never reach the corner ``r = R_MAX``, issue 16.2).
    """
    w_min, w_max = band_width
    check_closed_interval("band_width[0]", w_min, 0.0, R_MAX)
    check_closed_interval("band_width[1]", w_max, 0.0, R_MAX)
    if w_min > w_max:
        raise fail("band_width", band_width, "(w_min, w_max) with w_min <= w_max")
    width = w_min + (w_max - w_min) * torch.rand(n, generator=generator, dtype=torch.float64)
    start = (R_MAX + width) * torch.rand(n, generator=generator, dtype=torch.float64) - width
    return start, width


def band_stop_masks(start: torch.Tensor, width: torch.Tensor, height: int, width_px: int) -> torch.Tensor:
    """Keep-masks (n, 1, H, W) that remove the closed band ``r0 <= r <= r0 + w`` of each sample."""
    r = radial_frequency(height, width_px)
    inside = (r >= start[:, None, None]) & (r <= (start + width)[:, None, None])
    return (~inside)[:, None].to(torch.float64)


def random_spectral_masking(
    delta: torch.Tensor, band_width: tuple[float, float], generator: torch.Generator
) -> torch.Tensor:
    """RSM: ``M_b(delta) = iFFT2(FFT2(delta) * (1 - 1[r0 <= r <= r0 + w]))``, one random band per sample.

    The generator is trained so that ``x + M_b(delta)`` is still error-minimising whichever contiguous band
    was removed: no band may carry the unlearnability alone (the paper's spectral equalisation).
    """
    start, width = sample_bands(delta.shape[0], band_width, generator)
    return apply_spectral_mask(delta, band_stop_masks(start, width, delta.shape[-2], delta.shape[-1]))


def low_band_energy_fraction(delta, cutoff: float) -> float:
    """The spectral diagnostic: the share of ``sum |FFT2(delta)|^2`` in bins with ``r <= cutoff``.

    ``delta`` (B, C, H, W) holds perturbations (any real values, not all zero); by Parseval the share in
    ``[0, 1]`` equals ``||LP(delta)||^2 / ||delta||^2``.
    """
    cutoff = check_cutoff("cutoff", cutoff)
    delta = torch.as_tensor(delta, dtype=torch.float64)
    if delta.ndim != 4 or not torch.isfinite(delta).all():
        raise fail("delta", delta, "a finite (B, C, H, W) array of perturbations")
    power = torch.fft.fft2(delta).abs() ** 2
    total = float(power.sum())
    if total == 0.0:
        raise fail("delta", delta, "perturbations that are not all zero")
    keep = radial_frequency(delta.shape[-2], delta.shape[-1]) <= cutoff
    return float((power * keep).sum()) / total


def radial_energy_profile(delta, n_bins: int = 8) -> torch.Tensor:
    """Share of the perturbations' spectral energy in ``n_bins`` equal radial bins over ``[0, R_MAX]``."""
    delta = torch.as_tensor(delta, dtype=torch.float64)
    power = (torch.fft.fft2(delta).abs() ** 2).sum(dim=(0, 1))
    r = radial_frequency(delta.shape[-2], delta.shape[-1])
    bins = torch.clamp((r / R_MAX * n_bins).long(), max=n_bins - 1)
    profile = torch.zeros(n_bins, dtype=torch.float64).index_add_(0, bins.flatten(), power.flatten())
    return profile / profile.sum()


def check_budget(eps: float) -> float:
    """The L-infinity budget of a perturbation on [0, 1] images: ``0 < eps <= 1``."""
    eps = check_number("eps", eps)
    if not 0.0 < eps <= 1.0:
        raise fail("eps", eps, "an L-infinity budget in (0, 1] for images in [0, 1]")
    return eps


__all__ = [
    "R_MAX",
    "apply_spectral_mask",
    "band_stop_masks",
    "check_budget",
    "check_cutoff",
    "cross_band_split",
    "low_band_energy_fraction",
    "low_pass",
    "radial_energy_profile",
    "radial_frequency",
    "random_spectral_masking",
    "sample_bands",
]
