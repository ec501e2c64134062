"""The miniature generator: a class-conditional epsilon-network on 8x8 digits and its deterministic
DDIM sampler with classifier-free guidance, i.e. the map ``F: z -> x`` the paper analyses.

The network conditions on a vector ``c`` (10,): a one-hot class is in distribution; the zero vector is
the unconditional (null) input that label dropout trains for CFG; anything else (a mixture of two
classes) is out of the training support, the analogue of an impossible prompt.

DDIM (Song et al. 2021, eq. 12 with eta = 0) on the DDPM linear schedule (beta from 1e-4 to 0.02 over
1000 steps, Ho et al. 2020), "leading" timestep spacing and ``alpha_prev = 1`` at the last step, as
``diffusers.DDIMScheduler(clip_sample=False, set_alpha_to_one=True)`` (tests check the equality).
"""

from __future__ import annotations

import math

import torch
from icml26_shared import check_int, check_number, check_positive, fail
from torch import nn

NUM_TRAIN_TIMESTEPS = 1000
BETA_START, BETA_END = 1e-4, 0.02  # DDPM linear schedule (Ho et al. 2020)
LABEL_DROPOUT = 0.1  # probability of the null condition in training (classifier-free guidance)


def alphas_cumprod(num_train_timesteps: int = NUM_TRAIN_TIMESTEPS, dtype=torch.float64) -> torch.Tensor:
    """abar_t = prod_{s<=t} (1 - beta_s), t = 0 .. T-1, on the linear schedule."""
    betas = torch.linspace(BETA_START, BETA_END, num_train_timesteps, dtype=torch.float64)
    return torch.cumprod(1 - betas, 0).to(dtype)


def ddim_timesteps(steps: int, num_train_timesteps: int = NUM_TRAIN_TIMESTEPS) -> list[int]:
    """The sampler's timesteps, high to low: t_i = i * (T // steps), "leading" spacing."""
    steps = check_int("steps", steps, 1, num_train_timesteps)
    ratio = num_train_timesteps // steps
    return [i * ratio for i in reversed(range(steps))]


def sinusoidal(t: torch.Tensor, dim: int) -> torch.Tensor:
    """Transformer-style sinusoidal embedding of timesteps (N,) -> (N, dim)."""
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=t.dtype) / half)
    angles = t[:, None] * freqs[None]
    return torch.cat([angles.sin(), angles.cos()], dim=1)


class EpsilonNet(nn.Module):
    """eps_theta(x_t, t, c): a residual MLP on flattened images with additive time and class embeddings."""

    def __init__(self, pixels: int = 64, cond_dim: int = 10, hidden: int = 128, depth: int = 3, time_dim: int = 64):
        super().__init__()
        self.time_dim = time_dim
        self.cond_dim = cond_dim
        self.inp = nn.Linear(pixels, hidden)
        self.time = nn.Sequential(nn.Linear(time_dim, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.cond = nn.Linear(cond_dim, hidden, bias=False)  # c = 0 -> zero embedding: the null condition
        self.blocks = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(depth))
        self.norms = nn.ModuleList(nn.LayerNorm(hidden) for _ in range(depth))
        self.out = nn.Linear(hidden, pixels)

    def forward(self, x: torch.Tensor, t: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        """x (N, 1, H, W), t (N,), c (N, cond_dim) -> predicted noise (N, 1, H, W)."""
        emb = self.time(sinusoidal(t.to(x.dtype), self.time_dim)) + self.cond(c)
        h = self.inp(x.flatten(1))
        for block, norm in zip(self.blocks, self.norms, strict=True):
            h = h + block(nn.functional.silu(norm(h) + emb))
        return self.out(nn.functional.silu(h)).reshape(x.shape)


def train_epsilon_net(
    images: torch.Tensor,
    labels: torch.Tensor,
    steps: int,
    seed: int,
    hidden: int = 128,
    batch_size: int = 256,
    lr: float = 2e-3,
) -> EpsilonNet:
    """Denoising score matching (the DDPM loss ||eps - eps_theta(x_t, t, c)||^2) with label dropout."""
    steps, batch_size = check_int("steps", steps, 1), check_int("batch_size", batch_size, 1)
    check_positive("lr", lr)
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = EpsilonNet(images[0].numel(), 10, hidden)
    abar = alphas_cumprod(dtype=torch.float32)
    onehot = nn.functional.one_hot(labels, 10).float()
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda i: 1 - i / steps)
    for _ in range(steps):
        idx = torch.randint(0, images.shape[0], (batch_size,), generator=generator)
        x0, c = images[idx], onehot[idx]
        keep = (torch.rand(batch_size, 1, generator=generator) >= LABEL_DROPOUT).float()
        t = torch.randint(0, NUM_TRAIN_TIMESTEPS, (batch_size,), generator=generator)
        noise = torch.randn(x0.shape, generator=generator)
        a = abar[t].view(-1, 1, 1, 1)
        x_t = a.sqrt() * x0 + (1 - a).sqrt() * noise  # q(x_t | x_0)
        loss = nn.functional.mse_loss(model(x_t, t.float(), c * keep), noise)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        schedule.step()
    return model.eval()


class DDIMGenerator:
    """F(z, c): ``steps`` deterministic DDIM steps from the noise z (N, 1, H, W) under condition c (N, 10)
    with classifier-free guidance ``eps = eps_u + w (eps_c - eps_u)``; returns x_0 (N, 1, H, W).

    Rows are independent (no batch statistics), so F of a batch is F of each row: the property the
    batched finite differences of ``generative_geometry`` rely on."""

    def __init__(self, model: EpsilonNet, steps: int = 12, guidance: float = 3.0):
        self.model = model
        self.steps = check_int("steps", steps, 1, NUM_TRAIN_TIMESTEPS)
        self.guidance = check_number("guidance", guidance)
        self.timesteps = ddim_timesteps(self.steps)

    def __call__(self, z: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        if c.ndim != 2 or c.shape[0] != z.shape[0] or c.shape[1] != self.model.cond_dim:
            raise fail("c", tuple(c.shape), f"conditions of shape (N, {self.model.cond_dim}) with N = {z.shape[0]}")
        abar = alphas_cumprod(dtype=z.dtype)
        ratio = NUM_TRAIN_TIMESTEPS // self.steps
        x, null = z, torch.zeros_like(c)
        for t in self.timesteps:
            tt = torch.full((2 * x.shape[0],), float(t), dtype=z.dtype)
            eps_u, eps_c = self.model(torch.cat([x, x]), tt, torch.cat([null, c])).chunk(2)
            eps = eps_u + self.guidance * (eps_c - eps_u)  # classifier-free guidance
            a_t = abar[t]
            a_prev = abar[t - ratio] if t - ratio >= 0 else torch.ones((), dtype=z.dtype)
            x0 = (x - (1 - a_t).sqrt() * eps) / a_t.sqrt()  # predicted x_0 (DDIM eq. 12)
            x = a_prev.sqrt() * x0 + (1 - a_prev).sqrt() * eps  # eta = 0: deterministic
        return x
