"""The attacked model: a DDPM (diffusers' linear schedule, T = 1000) with an epsilon-prediction denoiser.

The official attacks target DDPMs trained by the authors (a 35.7M-parameter UNet on 32 x 32 images,
800k steps). On 2 CPU cores the smallest diffusers ``UNet2DModel`` we measured (channels 16/32, one
layer per block, 16 x 16 images) costs 0.13 s of CPU per batch-64 step, so three seeds of a memorising
model would need ~10 minutes; the quick run therefore trains a hand-written MLP denoiser (~1.1M
parameters, ~6 ms per step) on the same diffusers schedule, and the ``paper`` config swaps in
``UNet2DModel`` through ``UNetDenoiser`` (the attacks only see ``eps_model(x_t, t)``).
"""

from __future__ import annotations

import math

import torch
from icml26_shared import check_int, check_positive, fail
from torch import nn

T = 1000  # DDPM steps (official MODEL_CONFIG)
BETA_1, BETA_T = 1e-4, 0.02  # linear beta schedule (official MODEL_CONFIG)


def alphas_cumprod(num_steps: int = T, beta_1: float = BETA_1, beta_T: float = BETA_T) -> torch.Tensor:
    """``alpha_bar_t = prod_{i <= t} (1 - beta_i)`` (T,) of the linear schedule, from diffusers' DDPMScheduler."""
    from diffusers import DDPMScheduler

    scheduler = DDPMScheduler(num_train_timesteps=num_steps, beta_start=beta_1, beta_end=beta_T, beta_schedule="linear")
    return scheduler.alphas_cumprod.double()


def timestep_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoidal embedding of integer timesteps (B,) -> (B, dim), as in the DDPM UNet."""
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
    angles = t.float()[:, None] * freqs[None]
    return torch.cat([angles.sin(), angles.cos()], dim=1)


def _check_model_input(x: torch.Tensor, channels: int, image_size: int) -> None:
    expected = (channels, image_size, image_size)
    if x.ndim != 4 or tuple(x.shape[1:]) != expected:
        raise fail("x", tuple(x.shape), f"images (B, {', '.join(map(str, expected))}) matching the model")


def _timesteps(t: torch.Tensor | int, x: torch.Tensor) -> torch.Tensor:
    """An int step broadcast to the batch (B,), or the given (B,) tensor."""
    if isinstance(t, int):
        return torch.full((x.shape[0],), t, dtype=torch.long)
    return t


class MLPDenoiser(nn.Module):
    """``eps_theta(x_t, t)`` for (B, C, H, W) images: an MLP on the flattened pixels with a time embedding
    added to every hidden layer (a small stand-in for the DDPM UNet; ours, sized for the CPU budget)."""

    def __init__(self, image_size: int = 16, channels: int = 1, hidden: int = 512, depth: int = 3, emb: int = 64):
        super().__init__()
        self.image_size = check_int("image_size", image_size, 2)
        self.channels = check_int("channels", channels, 1)
        check_int("hidden", hidden, 1)
        check_int("depth", depth, 1)
        self.emb = check_int("emb", emb, 2)
        dim = channels * image_size * image_size
        self.time = nn.Sequential(nn.Linear(emb, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.inp = nn.Linear(dim, hidden)
        self.hidden = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(depth - 1))
        self.out = nn.Linear(hidden, dim)
        self.act = nn.SiLU()

    def forward(self, x: torch.Tensor, t: torch.Tensor | int) -> torch.Tensor:
        _check_model_input(x, self.channels, self.image_size)
        e = self.time(timestep_embedding(_timesteps(t, x), self.emb).to(x.dtype))
        h = self.act(self.inp(x.flatten(1)) + e)
        for layer in self.hidden:
            h = self.act(layer(h) + e)
        return self.out(h).view_as(x)


class UNetDenoiser(nn.Module):
    """diffusers' ``UNet2DModel`` behind the same ``eps_theta(x_t, t)`` call (the ``paper`` config's model)."""

    def __init__(
        self, image_size: int = 32, channels: int = 3, block_out_channels: tuple[int, ...] = (128, 256, 256, 256)
    ):
        super().__init__()
        from diffusers import UNet2DModel

        self.image_size = check_int("image_size", image_size, 8)
        self.channels = check_int("channels", channels, 1)
        n = len(block_out_channels)
        self.unet = UNet2DModel(
            sample_size=image_size,
            in_channels=channels,
            out_channels=channels,
            block_out_channels=block_out_channels,
            down_block_types=("DownBlock2D", "AttnDownBlock2D") + ("DownBlock2D",) * (n - 2),
            up_block_types=("UpBlock2D",) * (n - 2) + ("AttnUpBlock2D", "UpBlock2D"),
            layers_per_block=2,
        )

    def forward(self, x: torch.Tensor, t: torch.Tensor | int) -> torch.Tensor:
        _check_model_input(x, self.channels, self.image_size)
        return self.unet(x, _timesteps(t, x)).sample


def train_denoiser(
    model: nn.Module,
    images: torch.Tensor,
    steps: int,
    seed: int,
    lr: float = 1e-3,
    batch_size: int = 64,
) -> nn.Module:
    """DDPM training (Ho et al. 2020, Alg. 1) on ``images`` (n, C, H, W) in [0, 1], normalised to [-1, 1]:
    minimise ``||eps - eps_theta(sqrt(a_t) x0 + sqrt(1 - a_t) eps, t)||^2`` with t ~ U{0..T-1}, Adam."""
    check_int("steps", steps, 1)
    check_int("batch_size", batch_size, 1)
    check_positive("lr", lr)
    if images.ndim != 4 or images.shape[0] == 0:
        raise fail("images", tuple(images.shape), "a non-empty batch (n, C, H, W)")
    a_bar = alphas_cumprod().float()
    generator = torch.Generator().manual_seed(seed)
    x = images * 2 - 1
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for _ in range(steps):
        idx = torch.randint(0, len(x), (batch_size,), generator=generator)
        t = torch.randint(0, len(a_bar), (batch_size,), generator=generator)
        eps = torch.randn(x[idx].shape, generator=generator)
        a = a_bar[t].view(-1, 1, 1, 1)
        x_t = a.sqrt() * x[idx] + (1 - a).sqrt() * eps  # q(x_t | x_0)
        loss = ((model(x_t, t) - eps) ** 2).mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    return model.eval()
