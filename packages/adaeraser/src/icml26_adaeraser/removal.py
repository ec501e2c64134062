"""Training-free object removal with a pretrained denoiser: the inpainting sampler AttentiveEraser and
AdaEraser plug their attention control into.

As in AttentiveEraser's pipeline: the source image is noised to ``strength`` (SDEdit), denoised with DDIM
(diffusers' ``DDIMScheduler``, eta = 0), and after every step the region outside the mask is replaced by the
source noised to the next timestep (the clean source after the last step). With a control, each step runs the
denoiser on a batch of branches (the source at the current timestep when the control needs it, the current
image with plain attention, the current image with edited attention) and combines the last two by
self-attention redirection guidance (SARG): ``eps = eps_plain + w (eps_edit - eps_plain)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from icml26_shared import check_array, check_closed_interval, check_int, check_positive, fail

from .denoiser import BETA_1, BETA_T, DiT, T
from .method import AttentionSuppression

ControlFactory = Callable[[torch.Tensor], AttentionSuppression]


@dataclass
class Removal:
    """``image`` (n, 3, S, S) the result, ``unblended`` (n, 3, S, S) the last denoiser step before the final
    paste of the source outside the mask, ``trace`` the control's (step, layer, mean strength on the mask)."""

    image: np.ndarray
    unblended: np.ndarray
    trace: list[tuple[int, int, float]] = field(default_factory=list)


def scheduler(steps: int):
    """diffusers' DDIM scheduler on the denoiser's DDPM schedule, set to ``steps`` inference steps."""
    from diffusers import DDIMScheduler

    check_int("steps", steps, 1, T)
    sched = DDIMScheduler(
        num_train_timesteps=T, beta_start=BETA_1, beta_end=BETA_T, beta_schedule="linear", clip_sample=True
    )
    sched.set_timesteps(steps)
    return sched


def token_mask_of(mask: torch.Tensor, patch: int) -> torch.Tensor:
    """Pixel masks (n, S, S) -> token masks (n, N): max-pooled to the patch grid, as AAS down-samples masks."""
    return torch.nn.functional.max_pool2d(mask[:, None].float(), patch).flatten(1)


def check_removal_inputs(image: np.ndarray, mask: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Images (n, 3, S, S) in [-1, 1] and binary, non-empty, not-full masks (n, S, S) of the same size."""
    image = check_array("image", image, ndim=4).astype(np.float32)
    if image.shape[1:] != (3, size, size):
        raise fail("image", image, f"images (n, 3, {size}, {size}) matching the denoiser")
    if image.min() < -1 or image.max() > 1:
        raise fail("image", image, "values in [-1, 1]")
    mask = check_array("mask", mask, ndim=3).astype(np.float32)
    if mask.shape != (image.shape[0], size, size):
        raise fail("mask", mask, f"shape {(image.shape[0], size, size)}: one (S, S) mask per image")
    if not np.isin(mask, (0.0, 1.0)).all():
        raise fail("mask", mask, "a binary mask with values in {0, 1}")
    area = mask.sum((1, 2))
    if (area == 0).any():
        raise fail("mask", mask, "a non-empty mask for every image")
    if (area == size * size).any():
        raise fail("mask", mask, "a mask that leaves some background visible")
    return image, mask


@torch.no_grad()
def remove_object(
    model: DiT,
    image: np.ndarray,
    mask: np.ndarray,
    control: ControlFactory | None = None,
    strength: float = 0.8,
    steps: int = 20,
    guidance: float = 1.0,
    seed: int = 0,
) -> Removal:
    """Remove the masked object from ``image`` (n, 3, S, S) with ``model``; ``control(token_mask)`` builds the
    attention control (None: no suppression). ``strength`` in (0, 1] is the SDEdit noise level, ``steps`` the
    DDIM steps for strength 1 and ``guidance`` the SARG scale w (1: the edited branch alone)."""
    image, mask = check_removal_inputs(image, mask, model.image_size)
    check_closed_interval("strength", strength, 0.0, 1.0)
    if strength == 0:
        raise fail("strength", strength, "a noise level in (0, 1]")
    check_positive("guidance", guidance)
    sched = scheduler(steps)
    start = steps - int(steps * strength)  # diffusers img2img: skip the first (1 - strength) of the steps
    timesteps = sched.timesteps[start:]
    if len(timesteps) == 0:
        raise fail("strength", strength, f"a noise level leaving at least one of steps={steps} to run")
    x_src, m = torch.from_numpy(image), torch.from_numpy(mask)[:, None]
    editor = None if control is None else control(token_mask_of(m[:, 0], model.patch))
    noise = torch.randn(x_src.shape, generator=torch.Generator().manual_seed(seed))
    x = sched.add_noise(x_src, noise, timesteps[:1])
    unblended = x
    for i, t in enumerate(timesteps):
        if editor is None:
            eps = model(x, int(t))
        else:
            editor.step = i
            branches = [x, x]
            if editor.needs_source:
                branches.insert(0, sched.add_noise(x_src, noise, t[None]))
            eps_plain, eps_edit = model(torch.cat(branches), int(t), editor).split(len(x))[-2:]
            eps = eps_plain + guidance * (eps_edit - eps_plain)  # SARG
        x = sched.step(eps, t, x).prev_sample
        unblended = x
        proper = sched.add_noise(x_src, noise, timesteps[i + 1 : i + 2]) if i + 1 < len(timesteps) else x_src
        x = (1 - m) * proper + m * x
    trace = [] if editor is None else [(s, layer, float(v)) for s, layer, v in editor.trace]
    return Removal(x.clamp(-1, 1).numpy(), unblended.clamp(-1, 1).numpy(), trace)
