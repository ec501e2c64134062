"""What the paper compares against: global mean-difference activation steering (CAA / ActAdd; Xie et al.
2025 for TTS) at a matched norm, and the random-feature SAE control. The label-conditioned TTS baseline is
the backbone itself, prompted with the target emotion token."""

from __future__ import annotations

import torch
from icml26_shared import check_int, check_number, fail

from .method import TopKSAE


def mean_difference(h_emotion: torch.Tensor, h_neutral: torch.Tensor) -> torch.Tensor:
    """mu_e - mu_neutral over (N, d) residual states of emotional and neutral speech."""
    for name, h in (("h_emotion", h_emotion), ("h_neutral", h_neutral)):
        if h.ndim != 2 or len(h) == 0 or not torch.isfinite(h).all():
            raise fail(name, tuple(h.shape), "a non-empty, finite (N, d) array of residual states")
    if h_emotion.shape[1] != h_neutral.shape[1]:
        raise fail("h_neutral", tuple(h_neutral.shape), f"d={h_emotion.shape[1]} like h_emotion")
    return h_emotion.mean(0) - h_neutral.mean(0)


def global_steering(direction: torch.Tensor, norm: float):
    """Hook h' = h + norm * direction / ||direction||: the dense global shift, rescaled to ``norm`` so that
    it moves the residual stream exactly as far as the SAE intervention it is compared with."""
    norm = check_number("norm", norm)
    length = direction.norm()
    if not torch.isfinite(length) or length == 0:
        raise fail("direction", tuple(direction.shape), "a finite, non-zero steering direction")
    delta = norm * direction / length

    def hook(h: torch.Tensor) -> torch.Tensor:
        return h + delta

    return hook


def random_features(sae: TopKSAE, m: int, exclude: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """``m`` distinct SAE features drawn uniformly among those not in ``exclude`` (the control)."""
    check_int("m", m, 1, sae.d_sae - len(exclude))
    allowed = torch.ones(sae.d_sae, dtype=torch.bool)
    allowed[torch.as_tensor(exclude, dtype=torch.long)] = False
    pool = allowed.nonzero().squeeze(1)
    return pool[torch.randperm(len(pool), generator=generator)[:m]]
