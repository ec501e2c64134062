"""What RECOVER is compared against (all score 'higher = more likely a fine-tuning image').

* ``loss_attack``: the loss-based membership inference of Matsumoto et al. (2023) / Carlini et al. (2023) on the
  suspect model: minus the denoising error at a fixed timestep, averaged over noise draws. Reference-free.
* ``inversion_error``: RECOVER without perturbation (sigma = 0 only): plain DDIM inversion-reconstruction
  similarity; the ablation showing what the perturbation adds.
* ``reference_contrast``: an oracle that also has the pre-fine-tuning model (CGI-DM-like, simplified to a loss
  difference): L_pre(x) - L_suspect(x) with paired noise. RECOVER does not get this model.
"""

from __future__ import annotations

import numpy as np
import torch
from icml26_shared import check_int

from .diffusion import check_images, denoising_loss
from .method import image_generators, image_noise, inversion_robustness

LOSS_T = 100  # [INF] fixed timestep of the loss attack (Carlini et al. 2023 found t ~ 100 best on CIFAR-10 DDPMs)


@torch.no_grad()
def denoising_error(
    model, scheduler, images, t: int = LOSS_T, draws: int = 16, seed: int = 0, image_ids=None
) -> np.ndarray:
    """Mean DDPM loss of each image (B, C, H, W) at timestep ``t`` over ``draws`` noise draws -> (B,).

    Image i's draws come from ``(seed, image_ids[i])`` (default ``0..B-1``), as in ``inversion_robustness``."""
    x = check_images("images", images, model)
    check_int("t", t, 0, scheduler.config.num_train_timesteps - 1)
    check_int("draws", draws, 1)
    generators = image_generators(seed, image_ids, len(x))
    tt = torch.full((len(x),), t, device=x.device)
    total = np.zeros(len(x))
    for _ in range(draws):
        noise = image_noise(generators, tuple(x.shape[1:])).to(x.device)
        total += denoising_loss(model, scheduler, x, tt, noise).cpu().numpy()
    return total / draws


def loss_attack(
    model, scheduler, images, t: int = LOSS_T, draws: int = 16, seed: int = 0, image_ids=None
) -> np.ndarray:
    """Membership score = -denoising error of the suspect model (low loss = seen in training)."""
    return -denoising_error(model, scheduler, images, t, draws, seed, image_ids)


def inversion_error(model, scheduler, images, depth: int = 600, num_steps: int = 10, metric="neg_mse") -> np.ndarray:
    """Similarity of the unperturbed inversion-reconstruction round trip (RECOVER with sigmas = (0,))."""
    return inversion_robustness(model, scheduler, images, depth, num_steps, (0.0,), 1, metric).score


def reference_contrast(
    suspect, pretrained, scheduler, images, t: int = LOSS_T, draws: int = 16, seed: int = 0, image_ids=None
) -> np.ndarray:
    """Oracle score L_pretrained(x) - L_suspect(x), same noise draws for both: needs the pre-fine-tuning model."""
    return denoising_error(pretrained, scheduler, images, t, draws, seed, image_ids) - denoising_error(
        suspect, scheduler, images, t, draws, seed, image_ids
    )
