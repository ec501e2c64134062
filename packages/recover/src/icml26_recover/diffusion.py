"""The diffusion model RECOVER inspects: an epsilon-predictor, its DDPM training loss and DDIM in both directions.

The noise schedule is diffusers' ``DDPMScheduler`` (linear betas, T = 1000, Ho et al. 2020); the denoiser is
either a small time-conditioned MLP (``EpsMLP``, the quick default: a ``UNet2DModel`` step costs ~50 ms on one
CPU thread for 8x8 digits, too slow for the 120 s budget, see the README) or diffusers' ``UNet2DModel``
(``make_denoiser("unet", ...)``, the paper config). DDIM (Song et al. 2021, eq. 12 with eta = 0) is written
once, ``ddim_step``, and used forwards (reconstruction) and backwards (inversion); a test checks it against
diffusers' ``DDIMScheduler.step``.

Shapes: images are (B, C, H, W) in [-1, 1]; timesteps are integers in [0, T).
"""

from __future__ import annotations

import copy
import itertools
import math

import numpy as np
import torch
from icml26_shared import check_array, check_choice, check_int, check_positive, fail
from torch import nn

T_DEFAULT = 1000  # DDPM's number of diffusion steps (Ho et al. 2020)
DENOISERS = ("mlp", "unet")


def make_scheduler(num_train_timesteps: int = T_DEFAULT):
    """diffusers' DDPM schedule: linear betas 1e-4 .. 0.02 over ``num_train_timesteps`` steps."""
    from diffusers import DDPMScheduler

    check_int("num_train_timesteps", num_train_timesteps, 2)
    return DDPMScheduler(num_train_timesteps=num_train_timesteps, beta_schedule="linear")


def timestep_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoidal embedding (B,) -> (B, dim) of the transformer / DDPM."""
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
    angles = t.float()[:, None] * freqs[None]
    return torch.cat([angles.sin(), angles.cos()], dim=1)


class EpsMLP(nn.Module):
    """epsilon_theta(x_t, t) for small images: flatten, residual MLP blocks with an added time embedding."""

    def __init__(self, image_shape: tuple[int, int, int], hidden: int = 256, blocks: int = 3, time_dim: int = 64):
        super().__init__()
        self.image_shape = tuple(int(s) for s in image_shape)
        dim = int(np.prod(self.image_shape))
        self.time_dim = time_dim
        self.time = nn.Sequential(nn.Linear(time_dim, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.inp = nn.Linear(dim, hidden)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(hidden), nn.SiLU(), nn.Linear(hidden, hidden)) for _ in range(blocks)
        )
        self.out = nn.Sequential(nn.LayerNorm(hidden), nn.SiLU(), nn.Linear(hidden, dim))

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        emb = self.time(timestep_embedding(t, self.time_dim))
        h = self.inp(x.flatten(1))
        for block in self.blocks:
            h = h + block(h + emb)
        return self.out(h).view(x.shape)


class UNetEps(nn.Module):
    """diffusers' ``UNet2DModel`` behind the same ``(x, t) -> eps`` call as ``EpsMLP``."""

    def __init__(self, image_shape: tuple[int, int, int], channels: tuple[int, ...] = (32, 64)):
        super().__init__()
        from diffusers import UNet2DModel

        self.image_shape = tuple(int(s) for s in image_shape)
        c, h, _ = self.image_shape
        self.unet = UNet2DModel(
            sample_size=h,
            in_channels=c,
            out_channels=c,
            block_out_channels=channels,
            layers_per_block=1,
            down_block_types=("DownBlock2D",) * len(channels),
            up_block_types=("UpBlock2D",) * len(channels),
            norm_num_groups=8,
        )

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self.unet(x, t).sample


def make_denoiser(kind: str, image_shape: tuple[int, int, int]) -> nn.Module:
    """An epsilon-predictor for images of ``image_shape`` (C, H, W): ``"mlp"`` or ``"unet"``."""
    check_choice("kind", kind, DENOISERS)
    if len(image_shape) != 3 or any(int(s) < 1 for s in image_shape):
        raise fail("image_shape", image_shape, "(C, H, W) with positive sizes")
    return EpsMLP(image_shape) if kind == "mlp" else UNetEps(image_shape)


def model_device(model: nn.Module) -> torch.device:
    """Where the model's parameters live (CPU for a parameter-free model); inputs are moved there."""
    return next((p.device for p in model.parameters()), torch.device("cpu"))


def check_images(name: str, images, model: nn.Module | None = None) -> torch.Tensor:
    """(B, C, H, W) finite images in [-1, 1], of the model's image shape and on its device where a model is given."""
    arr = images.detach().cpu().numpy() if isinstance(images, torch.Tensor) else images
    arr = check_array(name, arr, ndim=4)
    if arr.min() < -1 - 1e-6 or arr.max() > 1 + 1e-6:
        raise fail(name, arr, f"pixel values in [-1, 1], got [{arr.min():.3g}, {arr.max():.3g}]")
    if model is not None and tuple(arr.shape[1:]) != tuple(model.image_shape):
        raise fail(name, arr, f"images of shape (B, {', '.join(map(str, model.image_shape))}) to match the model")
    x = torch.as_tensor(arr, dtype=torch.float32)
    return x if model is None else x.to(model_device(model))


def denoising_loss(model: nn.Module, scheduler, x0: torch.Tensor, t: torch.Tensor, noise: torch.Tensor):
    """Per-image DDPM loss ||eps - eps_theta(sqrt(abar_t) x0 + sqrt(1 - abar_t) eps, t)||^2 (Ho et al. eq. 14)."""
    x_t = scheduler.add_noise(x0, noise, t)
    return (model(x_t, t) - noise).pow(2).flatten(1).mean(1)


def train_ddpm(
    model: nn.Module,
    scheduler,
    images,
    steps: int,
    seed: int,
    lr: float = 1e-3,
    batch_size: int = 128,
    snapshot_steps: tuple[int, ...] = (),
) -> list[nn.Module]:
    """Train ``model`` in place on ``images`` (B, C, H, W) with the DDPM loss, Adam, uniform t.

    Returns copies of the model after each step count in ``snapshot_steps`` (each in [1, steps]), then the model.
    """
    x = check_images("images", images, model)
    check_int("steps", steps, 1)
    check_int("batch_size", batch_size, 1)
    check_positive("lr", lr)
    for s in snapshot_steps:
        check_int("snapshot_steps", s, 1, steps)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    T = scheduler.config.num_train_timesteps
    snapshots = []
    model.train()
    for step in range(1, steps + 1):
        idx = torch.randint(0, len(x), (min(batch_size, len(x)),), generator=gen)  # drawn on the CPU: the same
        t = torch.randint(0, T, (len(idx),), generator=gen).to(x.device)  # run on every device
        noise = torch.randn((len(idx), *x.shape[1:]), generator=gen).to(x.device)
        loss = denoising_loss(model, scheduler, x[idx.to(x.device)], t, noise).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step in snapshot_steps and step != steps:
            snapshots.append(copy.deepcopy(model).eval())
    model.eval()
    return [*snapshots, model]


def fine_tune(
    pretrained: nn.Module, scheduler, images, steps: tuple[int, ...], seed: int, lr: float, batch_size: int
) -> list[nn.Module]:
    """Suspect models: a copy of ``pretrained`` trained on ``images``, one per step count in ``steps`` (one run,
    snapshots along the way); the pretrained model itself is left untouched."""
    steps = tuple(sorted(set(steps)))
    if not steps:
        raise fail("steps", steps, "at least one fine-tuning step count")
    return train_ddpm(copy.deepcopy(pretrained), scheduler, images, steps[-1], seed, lr, batch_size, steps)


def ddim_timesteps(depth: int, num_steps: int, T: int) -> np.ndarray:
    """The DDIM grid 0 = tau_0 < tau_1 < ... < tau_K = depth (K = ``num_steps``, evenly spaced, rounded)."""
    check_int("depth", depth, 1, T - 1)
    check_int("num_steps", num_steps, 1, depth)
    return np.round(np.linspace(0, depth, num_steps + 1)).astype(int)


def ddim_step(x: torch.Tensor, eps: torch.Tensor, abar_from: float, abar_to: float) -> torch.Tensor:
    """One deterministic DDIM move from noise level abar_from to abar_to (Song et al. 2021, eq. 12, eta = 0).

    x0_hat = (x - sqrt(1 - abar_from) eps) / sqrt(abar_from);  x' = sqrt(abar_to) x0_hat + sqrt(1 - abar_to) eps.
    Going to a noisier level (abar_to < abar_from) is DDIM inversion.
    """
    x0_hat = (x - math.sqrt(1 - abar_from) * eps) / math.sqrt(abar_from)
    return math.sqrt(abar_to) * x0_hat + math.sqrt(1 - abar_to) * eps


def _abar(scheduler, t: int) -> float:
    """abar at a DDIM grid point; the image itself (grid point 0) sits at abar = 1, as in diffusers' DDIM
    (``set_alpha_to_one``), so that a model that predicts the exact noise reconstructs exactly."""
    return 1.0 if t == 0 else float(scheduler.alphas_cumprod[int(t)])


@torch.no_grad()
def ddim_invert(model: nn.Module, scheduler, x0: torch.Tensor, depth: int, num_steps: int) -> torch.Tensor:
    """DDIM inversion x_0 -> x_{t*} (t* = ``depth``) in ``num_steps`` steps with the model's own eps.

    Each step reuses eps_theta at the current point (the usual approximation eps(x_{t+1}) ~ eps(x_t)).
    """
    taus = ddim_timesteps(depth, num_steps, scheduler.config.num_train_timesteps)
    x = x0
    for t_from, t_to in itertools.pairwise(taus):
        eps = model(x, torch.full((len(x),), int(t_from), device=x.device))
        x = ddim_step(x, eps, _abar(scheduler, t_from), _abar(scheduler, t_to))
    return x


@torch.no_grad()
def ddim_reconstruct(model: nn.Module, scheduler, x_t: torch.Tensor, depth: int, num_steps: int) -> torch.Tensor:
    """Deterministic DDIM sampling x_{t*} -> x_0 on the same grid as ``ddim_invert``."""
    taus = ddim_timesteps(depth, num_steps, scheduler.config.num_train_timesteps)
    x = x_t
    for t_from, t_to in itertools.pairwise(taus[::-1]):
        eps = model(x, torch.full((len(x),), int(t_from), device=x.device))
        x = ddim_step(x, eps, _abar(scheduler, t_from), _abar(scheduler, t_to))
    return x
