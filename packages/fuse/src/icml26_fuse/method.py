"""FUSE: a perturbation generator trained error-minimising with Random Spectral Masking and Cross-Band Guidance.

The generator ``G`` maps an image to a bounded perturbation ``delta = eps * tanh(G(x))`` (L-infinity <= eps).
It is trained in the bi-level, error-minimising loop of unlearnable examples (Huang et al., 2021), against a
surrogate classifier ``f_theta`` that learns on the protected images at the same time:

* surrogate step:  ``min_theta CE(f_theta(x + delta), y)``
* generator step:  ``min_G CE(f_theta(x + M_b(delta)), y) + lambda * L_CBG``

``M_b`` is Random Spectral Masking (RSM): a random contiguous radial band ``[r0, r0 + w]`` is removed from
``delta`` (``spectral.random_spectral_masking``), so the remaining bands must keep the images unlearnable.
``L_CBG`` is Cross-Band Guidance: with ``delta_L = LP_rho(delta)`` and ``delta_H = delta - delta_L``, the
surrogate's predictions on ``x + delta_L`` and ``x + delta_H`` must agree (symmetrised KL), which pulls the
low band towards the same shortcut as the high band and ties the high band to it.

The concrete forms (generator architecture, band distribution, the symmetric KL, lambda, rho) are our
reconstruction from the abstract ([INF]); the paper's exact equations are not public in the stored text.
With ``rsm=False, cbg_weight=0`` the same loop is the plain generator error-minimising baseline.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from icml26_shared import check_closed_interval, check_int, check_number, check_positive, fail
from torch import nn

from .data import check_images, check_labels
from .networks import SmallCNN
from .spectral import R_MAX, check_budget, check_cutoff, cross_band_split, random_spectral_masking


class PerturbationGenerator(nn.Module):
    """``G``: a small conv encoder-decoder, (B, C, H, W) -> ``eps * tanh(.)`` of the same shape.

    Two stride-2 convolutions give every output pixel a receptive field over the whole 16 x 16 image (so the
    perturbation can depend on the class, not only on local texture); two transposed convolutions decode.
    """

    def __init__(self, eps: float, channels: int = 1, width: int = 16):
        super().__init__()
        self.eps = check_budget(eps)
        width = check_int("width", width, 1)
        self.net = nn.Sequential(
            nn.Conv2d(channels, width, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(width, 2 * width, 3, stride=2, padding=1),
            nn.ReLU(),
            nn.Conv2d(2 * width, 2 * width, 3, stride=2, padding=1),
            nn.ReLU(),
            nn.ConvTranspose2d(2 * width, 2 * width, 4, stride=2, padding=1),
            nn.ReLU(),
            nn.ConvTranspose2d(2 * width, width, 4, stride=2, padding=1),
            nn.ReLU(),
            nn.Conv2d(width + channels, channels, 3, padding=1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``delta = eps * tanh(G(x))``; the last layer also sees ``x`` (a skip connection)."""
        hidden = self.net[:-1](x)
        return self.eps * torch.tanh(self.net[-1](torch.cat([hidden, x], dim=1)))


@dataclass(frozen=True)
class FuseSettings:
    """What the generator's training depends on; defaults are ours ([INF]) for 16 x 16 images.

    ``eps``: L-infinity budget on [0, 1] images. ``rsm``: Random Spectral Masking on/off; ``band_width``:
    the range of the removed band's width (normalised radius, ``R_MAX = sqrt 2``). ``cbg_weight``: lambda of
    Cross-Band Guidance (0 = off); ``cbg_cutoff``: rho, the low/high split. ``rounds`` outer iterations, each
    ``surrogate_steps`` then ``generator_steps`` minibatches.
    """

    eps: float = 16 / 255
    rsm: bool = True
    band_width: tuple[float, float] = (0.2, 0.8)
    cbg_weight: float = 1.0
    cbg_cutoff: float = 0.5
    rounds: int = 20
    surrogate_steps: int = 10
    generator_steps: int = 10
    batch_size: int = 64
    lr: float = 3e-3

    def __post_init__(self) -> None:
        check_budget(self.eps)
        if not isinstance(self.rsm, bool):
            raise fail("rsm", self.rsm, "True or False")
        if len(self.band_width) != 2:
            raise fail("band_width", self.band_width, "a pair (w_min, w_max)")
        low, high = (check_closed_interval("band_width", w, 0.0, R_MAX) for w in self.band_width)
        if low > high:
            raise fail("band_width", self.band_width, "(w_min, w_max) with w_min <= w_max")
        if check_number("cbg_weight", self.cbg_weight) < 0:
            raise fail("cbg_weight", self.cbg_weight, "a weight >= 0 (0 switches CBG off)")
        check_cutoff("cbg_cutoff", self.cbg_cutoff)
        for name in ("rounds", "surrogate_steps", "generator_steps", "batch_size"):
            check_int(name, getattr(self, name), 1)
        check_positive("lr", self.lr)


def protect(x: torch.Tensor, delta: torch.Tensor) -> torch.Tensor:
    """The released unlearnable image ``clip(x + delta, 0, 1)``."""
    return (x + delta).clamp(0.0, 1.0)


def cross_band_guidance(model: nn.Module, x: torch.Tensor, delta: torch.Tensor, cutoff: float) -> torch.Tensor:
    """``L_CBG = KL(p_L || p_H) + KL(p_H || p_L)`` with ``p_B = softmax f(x + delta_B)`` ([INF] our form)."""
    delta_low, delta_high = cross_band_split(delta, cutoff)
    log_p_low = torch.log_softmax(model(protect(x, delta_low)), dim=1)
    log_p_high = torch.log_softmax(model(protect(x, delta_high)), dim=1)
    kl = nn.functional.kl_div
    return kl(log_p_high, log_p_low, log_target=True, reduction="batchmean") + kl(
        log_p_low, log_p_high, log_target=True, reduction="batchmean"
    )


def generator_loss(
    model: nn.Module, generator: PerturbationGenerator, x, y, settings: FuseSettings, rng: torch.Generator
) -> torch.Tensor:
    """The generator's objective: ``CE(f(x + M_b(delta)), y) + lambda * L_CBG`` (RSM and CBG as configured)."""
    delta = generator(x)
    masked = random_spectral_masking(delta, settings.band_width, rng) if settings.rsm else delta
    loss = nn.functional.cross_entropy(model(protect(x, masked)), y)
    if settings.cbg_weight > 0:
        loss = loss + settings.cbg_weight * cross_band_guidance(model, x, delta, settings.cbg_cutoff)
    return loss


def train_generator(x, y, settings: FuseSettings, seed: int) -> PerturbationGenerator:
    """Train ``G`` against a surrogate learning on ``x + G(x)`` (the bi-level error-minimising loop).

    ``x`` (n, C, H, W) in [0, 1], ``y`` (n,) labels. Returns the trained generator; ``make_unlearnable``
    applies it.
    """
    x = check_images("x", x)
    y = check_labels("y", y, x.shape[0])
    if not isinstance(settings, FuseSettings):
        raise fail("settings", settings, "a FuseSettings")
    rng = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    surrogate = SmallCNN(x.shape[1])
    generator = PerturbationGenerator(settings.eps, x.shape[1])
    opt_surrogate = torch.optim.Adam(surrogate.parameters(), lr=settings.lr)
    opt_generator = torch.optim.Adam(generator.parameters(), lr=settings.lr)

    def batches(steps: int):
        return torch.randint(len(y), (steps, settings.batch_size), generator=rng)

    for _ in range(settings.rounds):
        for batch in batches(settings.surrogate_steps):  # min_theta CE(f(x + delta), y), delta fixed
            with torch.no_grad():
                poisoned = protect(x[batch], generator(x[batch]))
            loss = nn.functional.cross_entropy(surrogate(poisoned), y[batch])
            opt_surrogate.zero_grad()
            loss.backward()
            opt_surrogate.step()
        for batch in batches(settings.generator_steps):  # min_G CE(f(x + M_b(delta)), y) + lambda L_CBG
            loss = generator_loss(surrogate, generator, x[batch], y[batch], settings, rng)
            opt_generator.zero_grad()
            loss.backward()
            opt_generator.step()
    return generator


@torch.no_grad()
def make_unlearnable(generator: PerturbationGenerator, x) -> tuple[torch.Tensor, torch.Tensor]:
    """``(clip(x + delta, 0, 1), delta)`` for images ``x`` (n, C, H, W) in [0, 1]."""
    x = check_images("x", x)
    delta = torch.cat([generator(xb) for xb in x.split(512)])
    return protect(x, delta), delta
