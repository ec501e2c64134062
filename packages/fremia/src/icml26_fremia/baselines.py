"""The attacks FreMIA plugs into: naive loss, SecMI and PIA, each as a (target, prediction) pair of the
unified paradigm (``method.membership_score`` turns the pair into a score, with or without the filter).

Conventions of the official DDIM attacks: images in [0, 1] are normalised to ``x0 = 2 x - 1``; one attack
step at ``t = interval`` (default 100, ``attack_num = 1``); ``x_t = sqrt(a_t) x0 + sqrt(1 - a_t) eps``.

* naive (Matsumoto et al. 2023): eps ~ N(0, I); target x0, prediction
  ``x^0 = (x_t - sqrt(1 - a_t) eps_theta(x_t, t)) / sqrt(a_t)``; distance lp = 2.
* SecMI (Duan et al. 2023): deterministic DDIM inversion x0 -> x_t with eps_theta(x0, 0), one DDIM step back
  x_t -> x^0 with eps_theta(x_t, t); distance lp = 2 (the t-error).
* PIA (Kong et al. 2024): eps = eps_theta(x0, 0) (proximal initialisation), then as naive; lp = 4.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from icml26_shared import check_choice, check_int, fail

from .method import TAU, S, membership_score

EpsModel = Callable[[torch.Tensor, int], torch.Tensor]
INTERVAL = 100  # official default attack step (--interval)
LP = {"naive": 2.0, "secmi": 2.0, "pia": 4.0}  # distance exponent of each attack
ATTACKS = tuple(LP)


def _check_unit_images(x: torch.Tensor) -> torch.Tensor:
    if not isinstance(x, torch.Tensor) or x.ndim != 4 or x.shape[0] == 0:
        raise fail("images", getattr(x, "shape", x), "a non-empty tensor of images (B, C, H, W)")
    if not x.is_floating_point() or not torch.isfinite(x).all():
        raise fail("images", tuple(x.shape), "finite floating-point pixels")
    if x.min() < 0 or x.max() > 1:
        raise fail("images", f"range [{float(x.min()):.3g}, {float(x.max()):.3g}]", "pixels in [0, 1]")
    return x


def _check_step(t: int, a_bar: torch.Tensor) -> int:
    return check_int("t", t, 1, len(a_bar) - 1)


def ddim_step(x_s: torch.Tensor, eps: torch.Tensor, a_bar: torch.Tensor, s: int, t: int) -> torch.Tensor:
    """Deterministic DDIM move from step s to step t (either direction), eq. (12) of Song et al. (2021):
    ``x_t = sqrt(a_t) x^0 + sqrt(1 - a_t) eps`` with ``x^0 = (x_s - sqrt(1 - a_s) eps) / sqrt(a_s)``;
    written as SecMI's ``y_t = y_s + eps (p_t - p_s)``, ``y = x / sqrt(a)``, ``p = sqrt(1 / a - 1)``."""
    a_s, a_t = a_bar[s].to(x_s.dtype), a_bar[t].to(x_s.dtype)
    y_s = x_s / a_s.sqrt()
    y_t = y_s + eps * ((1 / a_t - 1).sqrt() - (1 / a_s - 1).sqrt())
    return y_t * a_t.sqrt()


def _one_step_x0(eps_model: EpsModel, x0: torch.Tensor, eps: torch.Tensor, a_bar: torch.Tensor, t: int):
    a = a_bar[t].to(x0.dtype)
    x_t = a.sqrt() * x0 + (1 - a).sqrt() * eps  # q(x_t | x_0)
    return (x_t - (1 - a).sqrt() * eps_model(x_t, t)) / a.sqrt()  # x^0 from eps_theta(x_t, t)


@torch.no_grad()
def naive_pair(eps_model: EpsModel, images: torch.Tensor, a_bar: torch.Tensor, t: int = INTERVAL, generator=None):
    """Naive loss attack: (x0, x^0) from a random-noise forward step to ``t``."""
    x0 = _check_unit_images(images) * 2 - 1
    t = _check_step(t, a_bar)
    eps = torch.randn(x0.shape, generator=generator, dtype=x0.dtype)
    return x0, _one_step_x0(eps_model, x0, eps, a_bar, t)


@torch.no_grad()
def pia_pair(eps_model: EpsModel, images: torch.Tensor, a_bar: torch.Tensor, t: int = INTERVAL, generator=None):
    """PIA: (x0, x^0) with the proximal initialisation eps = eps_theta(x0, 0) (deterministic)."""
    x0 = _check_unit_images(images) * 2 - 1
    t = _check_step(t, a_bar)
    return x0, _one_step_x0(eps_model, x0, eps_model(x0, 0), a_bar, t)


@torch.no_grad()
def secmi_pair(eps_model: EpsModel, images: torch.Tensor, a_bar: torch.Tensor, t: int = INTERVAL, generator=None):
    """SecMI (t-error): (x0, x^0) from DDIM inversion 0 -> t and one DDIM denoising step t -> 0."""
    x0 = _check_unit_images(images) * 2 - 1
    t = _check_step(t, a_bar)
    x_t = ddim_step(x0, eps_model(x0, 0), a_bar, 0, t)  # deterministic inversion
    return x0, ddim_step(x_t, eps_model(x_t, t), a_bar, t, 0)  # reconstruction


PAIRS = {"naive": naive_pair, "secmi": secmi_pair, "pia": pia_pair}


def attack_scores(
    attack: str,
    eps_model: EpsModel,
    images: torch.Tensor,
    a_bar: torch.Tensor,
    t: int = INTERVAL,
    use_filter: bool = True,
    tau: int = TAU,
    s: float = S,
    generator: torch.Generator | None = None,
    mask: str = "symmetric",
) -> torch.Tensor:
    """Membership scores (B,) of ``attack`` on ``images`` (B, C, H, W) in [0, 1]; low => member."""
    check_choice("attack", attack, ATTACKS)
    target, prediction = PAIRS[attack](eps_model, images, a_bar, t, generator)
    return membership_score(target, prediction, LP[attack], use_filter, tau, s, mask)
