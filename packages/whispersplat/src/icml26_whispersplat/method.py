"""WhisperSplat: a view-specific SH noise key that reveals a hidden image at one view of an unchanged 3DGS model.

The released model ``G`` is never modified (lossless: every view renders bit-identically). The secret is a
key ``Delta`` of the shape of the SH features, ``(N, K, 3)``: rendering the secret view ``v*`` with
``f + Delta`` shows the hidden image ``I_h``. ``Delta`` is learned with Adam, every other attribute frozen:

    L(t) = w(t) L1(R_v*(f + Delta), I~_t) + (1 - w(t)) L_rec(R_v*(f + Delta), I_h)            (GPP)
           + gamma mean_v L1(R_v(f + Delta), R_v(f)) + eta mean(Delta^2)       (other views, small key)
    L_rec = (1 - lambda) L1 + lambda (1 - SSIM),   lambda = 0.2 (3DGS)
    w(t) = (1 + cos(pi t / T_gpp)) / 2 for t < T_gpp, else 0                        (cosine decay)
    I~_t = I_h + sigma w(t) eta_t, eta_t ~ N(0, 1) per pixel and step       (gradual pixel perturbation)

Only the cosine-decay schedule and the L1 + SSIM phase are in the public abstract; the perturbed target
I~_t, sigma, gamma and eta are our reconstruction [INF] (see the README).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from icml26_shared import check_closed_interval, check_int, check_number, check_positive, fail
from pytorch_msssim import ssim as _msssim_ssim
from torch import Tensor

from .render import Camera, Gaussians, Splats, as_splats, render

LAMBDA_SSIM = 0.2  # 3DGS's lambda_dssim
GPP_FRACTION = 0.2  # [INF] T_gpp = 20 % of the iterations
GPP_SIGMA = 0.1  # [INF] amplitude of the pixel perturbation at t = 0
OTHER_WEIGHT = 1.0  # [INF] gamma, weight of the other-view fidelity term
KEY_PENALTY = 1e-3  # [INF] eta, "a small key"
LR = 0.025  # [INF] Adam learning rate on the key (spec: 1e-2 ... 5e-2)


def ssim(x: Tensor, y: Tensor) -> Tensor:
    """SSIM of two (H, W, 3) images in [0, 1]: 11x11 Gaussian window, sigma 1.5, K = (0.01, 0.03), as 3DGS
    (pytorch-msssim, valid windows only)."""
    return _msssim_ssim(x.permute(2, 0, 1)[None], y.permute(2, 0, 1)[None], data_range=1.0, size_average=True)


def psnr(x: Tensor, y: Tensor) -> float:
    """PSNR in dB of x against y (peak 1); inf when identical."""
    mse = float(torch.mean((x.detach().double() - y.detach().double()) ** 2))
    return math.inf if mse == 0 else -10 * math.log10(mse)


def reconstruction_loss(render_: Tensor, target: Tensor, lambda_ssim: float = LAMBDA_SSIM) -> Tensor:
    """3DGS's photometric loss, (1 - lambda) L1 + lambda (1 - SSIM)."""
    l1 = torch.mean(torch.abs(render_ - target))
    return (1 - lambda_ssim) * l1 + lambda_ssim * (1 - ssim(render_, target))


def gpp_weight(t: int, gpp_steps: int) -> float:
    """The GPP cosine decay w(t) = (1 + cos(pi t / T_gpp)) / 2 for t < T_gpp, 0 afterwards (T_gpp = 0: no GPP)."""
    return 0.5 * (1 + math.cos(math.pi * t / gpp_steps)) if t < gpp_steps else 0.0


def check_hidden(hidden: Tensor, camera: Camera) -> Tensor:
    """The hidden image: (H, W, 3) in [0, 1], the size of the secret view."""
    if not isinstance(hidden, Tensor) or not hidden.is_floating_point():
        raise fail("hidden", hidden, "a floating-point torch.Tensor of shape (H, W, 3)")
    if tuple(hidden.shape) != (camera.height, camera.width, 3):
        raise fail("hidden", tuple(hidden.shape), f"shape {(camera.height, camera.width, 3)}, the secret view's size")
    if not torch.isfinite(hidden).all() or hidden.min() < 0 or hidden.max() > 1:
        raise fail("hidden", (float(hidden.min()), float(hidden.max())), "finite values in [0, 1]")
    return hidden


@dataclass(frozen=True)
class Stego:
    """What WhisperSplat hands out: the released cover (the input model, untouched) and the secret key."""

    cover: Gaussians
    key: Tensor  # (N, K, 3) Delta
    secret_view: Camera
    history: tuple[float, ...]  # hidden-image PSNR (dB) at v* after each of the optimisation steps (index 0: none)

    def reveal(self) -> Tensor:
        """Î_h = R_v*(f + Delta): the hidden image, rendered with the key (no decoder)."""
        return render(self.cover, self.secret_view, sh=self.cover.sh + self.key)


def hide(
    cover: Gaussians,
    secret_view: Camera | Splats,
    hidden: Tensor,
    other_views: Sequence[Camera | Splats] = (),
    steps: int = 400,
    lr: float = LR,
    gpp_steps: int | None = None,
    lambda_ssim: float = LAMBDA_SSIM,
    gpp_sigma: float = GPP_SIGMA,
    other_weight: float = OTHER_WEIGHT,
    key_penalty: float = KEY_PENALTY,
    seed: int = 0,
) -> Stego:
    """Learn the view-specific key that shows ``hidden`` at ``secret_view``; ``cover`` is not modified.

    ``other_views`` are the views where the keyed model must still look like the cover (the other-view term,
    weight ``other_weight``; none or weight 0 switches it off). A view is a ``Camera`` or its ``Splats`` of
    ``cover`` (to reuse them across calls: the geometry is frozen, so the compositing weights are constants).
    ``gpp_steps`` is T_gpp (None: 20 % of ``steps``; 0: no GPP, plain L1 + SSIM from the first step).
    """
    secret = as_splats(cover, secret_view)
    check_hidden(hidden, secret.camera)
    check_int("steps", steps, 1)
    check_positive("lr", lr)
    gpp_steps = round(GPP_FRACTION * steps) if gpp_steps is None else check_int("gpp_steps", gpp_steps, 0, steps)
    check_closed_interval("lambda_ssim", lambda_ssim, 0.0, 1.0)
    for name, value in (("gpp_sigma", gpp_sigma), ("other_weight", other_weight), ("key_penalty", key_penalty)):
        if check_number(name, value) < 0:
            raise fail(name, value, "a finite number >= 0")
    f = cover.sh.detach()
    with torch.no_grad():
        others = [(s, s.image(f)) for s in (as_splats(cover, v) for v in other_views if other_weight > 0)]
    key = torch.zeros_like(f, requires_grad=True)  # Delta, init 0: the keyed render starts at the clean one
    optimiser = torch.optim.Adam([key], lr=lr)
    generator = torch.Generator().manual_seed(seed)
    history = []
    for t in range(steps):
        image = secret.image(f + key)
        history.append(psnr(image, hidden))
        w = gpp_weight(t, gpp_steps)
        loss = (1 - w) * reconstruction_loss(image, hidden, lambda_ssim) if w < 1 else 0.0
        if w > 0:  # GPP: L1 to the hidden image under a per-pixel perturbation that fades with w(t)
            noise = torch.randn(hidden.shape, generator=generator)
            loss = loss + w * torch.mean(torch.abs(image - (hidden + gpp_sigma * w * noise)))
        if others:
            fidelity = sum(torch.mean(torch.abs(s.image(f + key) - clean)) for s, clean in others)
            loss = loss + other_weight * fidelity / len(others)
        loss = loss + key_penalty * torch.mean(key**2)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    with torch.no_grad():
        history.append(psnr(secret.image(f + key), hidden))
    return Stego(cover, key.detach(), secret.camera, tuple(history))
