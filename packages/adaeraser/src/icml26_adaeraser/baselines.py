"""What AdaEraser is compared with: hard blocking (AttentiveEraser's AAS), a fixed soft suppression, and a
classical non-learned inpainting. "No suppression" is the removal sampler run without a control (plain
SDEdit-style inpainting with the same model)."""

from __future__ import annotations

import numpy as np
import torch
from icml26_shared import check_array, check_closed_interval, fail

from .method import AttentionSuppression


class HardSuppression(AttentionSuppression):
    """AttentiveEraser (AAS): every query is blocked from the object's keys, ``S + M`` with ``M_j = finfo.min``
    on the mask: eq. (1) with lambda = 1 everywhere."""

    def strength(self, edit: torch.Tensor, chunks: tuple[torch.Tensor, ...]) -> float:
        return 1.0


class FixedSuppression(AttentionSuppression):
    """One constant strength for every token, layer and step: the ablation separating softness from
    adaptivity (lambda = 1 is ``HardSuppression``, lambda = 0 no suppression)."""

    def __init__(self, token_mask: torch.Tensor, strength: float = 0.5, **kwargs):
        super().__init__(token_mask, **kwargs)
        self.fixed = check_closed_interval("strength", strength, 0.0, 1.0)

    def strength(self, edit: torch.Tensor, chunks: tuple[torch.Tensor, ...]) -> float:
        return self.fixed


def biharmonic_inpaint(image: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """scikit-image's biharmonic inpainting of (n, 3, S, S) images inside (n, S, S) masks: the classical,
    non-learned reference (smooth fill, no texture)."""
    from skimage.restoration import inpaint_biharmonic

    image = check_array("image", image, ndim=4)
    mask = check_array("mask", mask, ndim=3)
    if mask.shape != (image.shape[0], *image.shape[2:]):
        raise fail("mask", mask, f"shape {(image.shape[0], *image.shape[2:])} matching the images")
    out = [inpaint_biharmonic(x.transpose(1, 2, 0), m.astype(bool), channel_axis=-1) for x, m in zip(image, mask)]
    return np.stack(out).transpose(0, 3, 1, 2).astype(np.float32)
