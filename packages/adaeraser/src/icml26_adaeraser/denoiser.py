"""A small DiT-style epsilon-denoiser whose self-attention scores can be edited, and its training.

AdaEraser and AttentiveEraser act inside the self-attention layers of a pretrained diffusion model (SDXL's
U-Net). No pretrained model is available offline, so we train a DiT (Peebles & Xie, 2023) on 2x2 patches of the
procedural scenes of ``data.py``: patch embedding + learned positions, ``depth`` blocks of adaLN-Zero
self-attention and MLP conditioned on the timestep, and a linear head back to pixels. Every attention layer
hands its pre-softmax scores ``S = Q K^T / sqrt(d)`` (B, heads, N, N) to an optional ``control`` callable
``control(S, layer) -> S' | None`` (the role of a diffusers attention processor), which is where suppression
happens; without a control, or when the control returns None (it leaves the scores as they are), the layer is
torch's fused ``scaled_dot_product_attention`` (the same attention, faster), so zero suppression is exactly the
unedited model.
The noise schedule is DDPM's (linear betas 1e-4 .. 0.02, T = 1000), diffusers' ``DDPMScheduler`` for training
and the ``DDIMScheduler`` of ``removal.py`` on the same betas for sampling (one schedule: the same float32
``alphas_cumprod``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from icml26_shared import check_int, check_positive, fail
from torch import nn

T = 1000  # DDPM training steps
BETA_1, BETA_T = 1e-4, 0.02  # linear schedule (Ho et al., 2020; diffusers' DDPMScheduler default)

Control = Callable[[torch.Tensor, int], torch.Tensor | None]  # None: the scores are left as they are


def ddpm_scheduler():
    """diffusers' ``DDPMScheduler`` on the linear schedule: ``add_noise`` makes the training inputs."""
    from diffusers import DDPMScheduler

    return DDPMScheduler(num_train_timesteps=T, beta_start=BETA_1, beta_end=BETA_T, beta_schedule="linear")


def timestep_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoidal embedding (B,) -> (B, dim) float32 of integer timesteps, ``[cos(t w_k), sin(t w_k)]`` with
    ``w_k = 10000^(-k / (dim / 2))``: diffusers' ``get_timestep_embedding`` in this layout (bit-identical to the
    formula; the DiT casts it to its own dtype)."""
    from diffusers.models.embeddings import get_timestep_embedding

    return get_timestep_embedding(t, dim, flip_sin_to_cos=True, downscale_freq_shift=0)


def patchify(x: torch.Tensor, patch: int) -> torch.Tensor:
    """(B, C, H, W) -> (B, N, C p p) tokens in row-major patch order."""
    b, c, h, w = x.shape
    x = x.reshape(b, c, h // patch, patch, w // patch, patch)
    return x.permute(0, 2, 4, 1, 3, 5).reshape(b, (h // patch) * (w // patch), c * patch * patch)


def unpatchify(tokens: torch.Tensor, channels: int, size: int, patch: int) -> torch.Tensor:
    """(B, N, C p p) -> (B, C, H, W), the inverse of ``patchify``."""
    b = tokens.shape[0]
    g = size // patch
    x = tokens.reshape(b, g, g, channels, patch, patch)
    return x.permute(0, 3, 1, 4, 2, 5).reshape(b, channels, size, size)


class SelfAttention(nn.Module):
    """Multi-head self-attention whose scores pass through ``control`` before the softmax.

    Without a control, or with one that returns None for this call (no edit), torch's
    ``scaled_dot_product_attention`` computes ``softmax(Q K^T / sqrt(d)) V`` fused: the same call with and
    without a control, so an edit of zero changes no bit (issue 27). Edited scores S' take the explicit
    ``softmax(S') V`` (equal to the fused path to float round-off when S' = S, tested)."""

    def __init__(self, dim: int, heads: int, layer: int):
        super().__init__()
        self.heads = heads
        self.layer = layer
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, control: Control | None = None) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        edited = None
        if control is not None:
            scores = q @ k.transpose(-1, -2) / math.sqrt(d // self.heads)  # S = Q K^T / sqrt(d), (B, h, N, N)
            edited = control(scores, self.layer)
        if edited is None:
            mixed = nn.functional.scaled_dot_product_attention(q, k, v)
        else:
            mixed = edited.softmax(-1) @ v
        return self.out(mixed.transpose(1, 2).reshape(b, n, d))


def _modulate(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return x * (1 + scale[:, None]) + shift[:, None]


class Block(nn.Module):
    """DiT block with adaLN-Zero conditioning on the timestep embedding."""

    def __init__(self, dim: int, heads: int, layer: int, mlp_ratio: int = 4):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-6)
        self.attention = SelfAttention(dim, heads, layer)
        self.norm2 = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp_ratio * dim), nn.GELU(), nn.Linear(mlp_ratio * dim, dim))
        self.ada = nn.Sequential(nn.SiLU(), nn.Linear(dim, 6 * dim))
        nn.init.zeros_(self.ada[1].weight)
        nn.init.zeros_(self.ada[1].bias)

    def forward(self, x: torch.Tensor, c: torch.Tensor, control: Control | None) -> torch.Tensor:
        shift1, scale1, gate1, shift2, scale2, gate2 = self.ada(c).chunk(6, dim=1)
        x = x + gate1[:, None] * self.attention(_modulate(self.norm1(x), shift1, scale1), control)
        return x + gate2[:, None] * self.mlp(_modulate(self.norm2(x), shift2, scale2))


class DiT(nn.Module):
    """``eps_theta(x_t, t)`` for (B, C, S, S) images in [-1, 1]; ``(S / patch)^2`` tokens."""

    def __init__(
        self, image_size: int = 16, patch: int = 2, channels: int = 3, dim: int = 64, depth: int = 4, heads: int = 4
    ):
        super().__init__()
        self.image_size = check_int("image_size", image_size, 2)
        self.patch = check_int("patch", patch, 1)
        if image_size % patch:
            raise fail("patch", patch, f"a divisor of image_size={image_size}")
        self.channels = check_int("channels", channels, 1)
        self.heads = check_int("heads", heads, 1)
        if check_int("dim", dim, 2) % (2 * heads):
            raise fail("dim", dim, f"a multiple of 2 * heads = {2 * heads}")
        self.depth = check_int("depth", depth, 1)
        self.dim = dim
        self.tokens = (image_size // patch) ** 2
        self.embed = nn.Linear(channels * patch * patch, dim)
        self.position = nn.Parameter(torch.randn(1, self.tokens, dim) * 0.02)
        self.time = nn.Sequential(nn.Linear(dim, dim), nn.SiLU(), nn.Linear(dim, dim))
        self.blocks = nn.ModuleList(Block(dim, heads, layer) for layer in range(depth))
        self.norm = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-6)
        self.ada = nn.Sequential(nn.SiLU(), nn.Linear(dim, 2 * dim))
        self.head = nn.Linear(dim, channels * patch * patch)
        for layer in (self.ada[1], self.head):
            nn.init.zeros_(layer.weight)
            nn.init.zeros_(layer.bias)

    def forward(self, x: torch.Tensor, t: torch.Tensor | int, control: Control | None = None) -> torch.Tensor:
        expected = (self.channels, self.image_size, self.image_size)
        if x.ndim != 4 or tuple(x.shape[1:]) != expected:
            raise fail("x", tuple(x.shape), f"images (B, {', '.join(map(str, expected))})")
        t = torch.full((x.shape[0],), int(t)) if isinstance(t, int) else t
        if t.shape != (x.shape[0],) or t.min() < 0 or t.max() >= T:
            raise fail("t", t.tolist(), f"timesteps in the schedule [0, {T - 1}], one per image")
        c = self.time(timestep_embedding(t, self.dim).to(self.embed.weight.dtype))  # the module's dtype
        h = self.embed(patchify(x, self.patch)) + self.position
        for block in self.blocks:
            h = block(h, c, control)
        shift, scale = self.ada(c).chunk(2, dim=1)
        return unpatchify(self.head(_modulate(self.norm(h), shift, scale)), self.channels, self.image_size, self.patch)


def train_denoiser(
    model: DiT,
    sample_images: Callable[[np.random.Generator, int], np.ndarray],
    steps: int,
    seed: int,
    batch_size: int = 64,
    lr: float = 1e-3,
) -> list[float]:
    """Train ``model`` on the DDPM epsilon loss ``|eps - eps_theta(sqrt(abar) x0 + sqrt(1-abar) eps, t)|^2``
    with fresh images from ``sample_images(rng, n)`` each step (AdamW, cosine decay); the noisy input is
    ``DDPMScheduler.add_noise(x0, eps, t)``. Returns the losses."""
    check_int("steps", steps, 1)
    check_int("batch_size", batch_size, 1)
    check_positive("lr", lr)
    rng = np.random.default_rng(seed)
    generator = torch.Generator().manual_seed(seed)
    schedule_ddpm = ddpm_scheduler()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / 100) * 0.5 * (1 + math.cos(math.pi * s / steps))
    )
    losses = []
    model.train()
    for _ in range(steps):
        x0 = torch.from_numpy(sample_images(rng, batch_size))
        t = torch.randint(0, T, (batch_size,), generator=generator)
        eps = torch.randn(x0.shape, generator=generator)
        loss = (model(schedule_ddpm.add_noise(x0, eps, t), t) - eps).square().mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        schedule.step()
        losses.append(float(loss.detach()))
    model.eval()
    return losses
