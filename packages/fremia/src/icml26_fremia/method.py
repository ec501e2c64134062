"""FreMIA's contribution: the unified membership-score paradigm and the plug-in high-frequency filter.

Every attack of the paradigm computes, per image, a target ``x~`` and the model's prediction ``x^`` of
it and scores membership by a distance between them (low score => member):

    score(x0) = D(F(x~), F(x^))                                    # unified paradigm, F = identity before

FreMIA's filter ``F`` keeps the centred low-frequency square of the 2-D spectrum and scales every other
frequency by ``s`` (official defaults ``tau = 5``, ``s = 0.2``)::

    F(x) = IFFT2(ishift(M * shift(FFT2(x)))),  M = 1 on |k_h|, |k_w| <= tau, M = s elsewhere

It is applied identically to target and prediction before the distance, so it costs no model call.

The official ``Fourier_filter``'s square ``[c - tau, c + tau)`` keeps frequencies ``-tau..tau-1`` (an
asymmetric mask, whose output is complex before ``.real`` is taken: after ``.real`` the boundary frequencies
``k = +-tau`` are weighted ``(1 + s) / 2``). The default here, ``mask="symmetric"``, keeps ``-tau..tau``
(Hermitian-symmetric: the filtered image is real); ``mask="official"`` is the official square, for
reproducing the paper's numbers (issue 20; the README reports both). In either case a ``tau`` beyond half
the image raises (the official slice would wrap or empty silently).
"""

from __future__ import annotations

import torch
from icml26_shared import check_choice, check_closed_interval, check_int, check_positive, fail

TAU = 5  # official default radius of the kept low-frequency square (--t), for 32 x 32 images
S = 0.2  # official default scale of the high frequencies (--s)
MASKS = ("symmetric", "official")  # kept square -tau..tau (ours, default) or the official -tau..tau-1


def _check_images(name: str, x: torch.Tensor) -> torch.Tensor:
    """A floating tensor (..., H, W) with H, W >= 2 and finite values."""
    if not isinstance(x, torch.Tensor):
        raise fail(name, x, "a torch.Tensor of images (..., H, W)")
    if x.ndim < 2 or x.shape[-1] < 2 or x.shape[-2] < 2:
        raise fail(name, tuple(x.shape), "a tensor of shape (..., H, W) with H, W >= 2")
    if not x.is_floating_point():
        raise fail(name, x.dtype, "a floating-point tensor")
    if not torch.isfinite(x).all():
        raise fail(name, tuple(x.shape), "finite values (found NaN or inf)")
    return x


def max_radius(height: int, width: int) -> int:
    """The largest ``tau`` whose symmetric square ``-tau..tau`` fits in an (H, W) spectrum without wrapping."""
    return (min(height, width) - 1) // 2


def frequency_mask(height: int, width: int, tau: int = TAU, s: float = S, mask: str = "symmetric") -> torch.Tensor:
    """The filter mask M (H, W) in fftshift order: 1 on the centred square |k| <= tau, ``s`` elsewhere.

    With ``c = H // 2`` the zero frequency sits at index ``c``; the square covers indices ``c - tau .. c + tau``
    (``mask="symmetric"``) or ``c - tau .. c + tau - 1`` (``mask="official"``, the official slice).
    """
    check_int("height", height, 2)
    check_int("width", width, 2)
    check_int("tau", tau, 0)
    if tau > max_radius(height, width):
        raise fail(
            "tau",
            tau,
            f"a radius in [0, {max_radius(height, width)}] for {height}x{width} images "
            "(the square -tau..tau must fit in the spectrum; larger radii would wrap)",
        )
    s = check_closed_interval("s", s, 0.0, 1.0)
    stop = tau + 1 if check_choice("mask", mask, MASKS) == "symmetric" else tau
    keep = torch.full((height, width), s, dtype=torch.float64)
    ch, cw = height // 2, width // 2
    keep[ch - tau : ch + stop, cw - tau : cw + stop] = 1.0
    return keep


def high_frequency_filter(x: torch.Tensor, tau: int = TAU, s: float = S, mask: str = "symmetric") -> torch.Tensor:
    """FreMIA's filter F over the last two dims of ``x`` (..., H, W): high frequencies scaled by ``s``."""
    x = _check_images("x", x)
    keep = frequency_mask(x.shape[-2], x.shape[-1], tau, s, mask).to(x.device)
    spectrum = torch.fft.fftshift(torch.fft.fft2(x), dim=(-2, -1))  # X = shift(FFT2(x))
    filtered = torch.fft.ifft2(torch.fft.ifftshift(spectrum * keep, dim=(-2, -1)))  # IFFT2(ishift(M * X))
    return filtered.real.to(x.dtype)  # symmetric M: the imaginary part is round-off; official M: dropped


def high_frequency_energy(x: torch.Tensor, tau: int = TAU) -> torch.Tensor:
    """Per-image energy outside the kept square, ``sum |X_k|^2 / (H W)`` over |k|_inf > tau: shape (...,).

    By Parseval this is ``||x - F_{s=0}(x)||^2``, the pixel energy the filter attenuates; the paper's
    diagnostic correlates it with the unfiltered membership score.
    """
    x = _check_images("x", x)
    outside = frequency_mask(x.shape[-2], x.shape[-1], tau, 0.0) == 0.0
    spectrum = torch.fft.fftshift(torch.fft.fft2(x.double()), dim=(-2, -1))
    return (spectrum.abs() ** 2 * outside).sum(dim=(-2, -1)) / (x.shape[-2] * x.shape[-1])


def distance(target: torch.Tensor, prediction: torch.Tensor, lp: float = 2.0) -> torch.Tensor:
    """``D(x~, x^) = sum_pixels |x~ - x^|^lp`` per image: (B, ...) -> (B,). lp = 2 (naive, SecMI), 4 (PIA)."""
    lp = check_positive("lp", lp)
    target, prediction = _check_images("target", target), _check_images("prediction", prediction)
    if target.shape != prediction.shape:
        raise fail("prediction", tuple(prediction.shape), f"the shape of target {tuple(target.shape)}")
    return ((target - prediction).abs() ** lp).flatten(1).sum(dim=1)


def membership_score(
    target: torch.Tensor,
    prediction: torch.Tensor,
    lp: float = 2.0,
    use_filter: bool = True,
    tau: int = TAU,
    s: float = S,
    mask: str = "symmetric",
) -> torch.Tensor:
    """The unified paradigm: ``D(F(x~), F(x^))`` per image (B,), low => member; ``use_filter=False``: F = id.

    ``mask``: ``"symmetric"`` (default, ours) or ``"official"`` (the official square; see the module doc)."""
    if not isinstance(use_filter, bool):
        raise fail("use_filter", use_filter, "True or False")
    if use_filter:
        target, prediction = (high_frequency_filter(x, tau, s, mask) for x in (target, prediction))
    return distance(target, prediction, lp)
