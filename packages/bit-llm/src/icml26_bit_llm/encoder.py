"""The subject-agnostic voxel encoder and the stage-(i) contrastive loss.

Axis letters: b batch, n voxels, t fMRI tokens (learned queries), h heads, d channels.

[INF] (MindLLM-like "neuroscience-informed attention", spec section 3): every voxel is a (value, position)
pair; the attention key of a voxel depends on its position only (Fourier features of its 3-D coordinate),
its value is the projected voxel value u_i = W_v v_i + b_v; T learned queries pool the voxels into T fMRI tokens
M = softmax(q K^T / sqrt(d)) U, followed by a per-token MLP. As the pooling weights sum to 1, a head's token
is W_v (sum_i a_ti v_i) + b_v, which is how it is computed (no (batch, voxels, dim) tensor is formed).
Nothing in the encoder depends on the voxel count or order, so one encoder serves every subject, including
one it never saw.
"""

from __future__ import annotations

import math

import torch
from einops import rearrange
from icml26_shared import check_int, fail
from torch import nn
from torch.nn import functional as F


def fourier_features(coords: torch.Tensor, n_frequencies: int) -> torch.Tensor:
    """(n, 3) -> (n, 6 F): [sin(2^k pi p), cos(2^k pi p)] for k = 0..F-1 (NeRF-style positional encoding)."""
    freqs = math.pi * 2.0 ** torch.arange(n_frequencies, dtype=coords.dtype, device=coords.device)
    angles = rearrange(coords[..., None] * freqs, "n c f -> n (c f)")
    return torch.cat([angles.sin(), angles.cos()], dim=-1)


class VoxelEncoder(nn.Module):
    """fMRI of any subject (values (b, n) at coordinates (n, 3)) -> T tokens (b, t, d)."""

    def __init__(self, dim: int = 64, n_tokens: int = 16, heads: int = 8, n_frequencies: int = 6):
        super().__init__()
        check_int("dim", dim, 1)
        check_int("n_tokens", n_tokens, 1)
        check_int("heads", heads, 1)
        check_int("n_frequencies", n_frequencies, 1)
        if dim % heads:
            raise fail("heads", heads, f"a divisor of dim={dim}")
        self.dim, self.n_tokens, self.heads, self.n_frequencies = dim, n_tokens, heads, n_frequencies
        pos = 6 * n_frequencies
        self.to_key = nn.Sequential(nn.Linear(pos, dim), nn.GELU(), nn.Linear(dim, dim))  # k_i = MLP(Fourier(p_i))
        self.to_value = nn.Linear(1, dim)  # u_i = W_v v_i + b_v
        self.queries = nn.Parameter(torch.randn(n_tokens, dim) / math.sqrt(dim))  # q_t, learned
        self.out = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))

    def attention(self, coords: torch.Tensor) -> torch.Tensor:
        """(h, t, n) pooling weights softmax(q K^T / sqrt(d_h)): they depend on voxel positions only."""
        k = rearrange(self.to_key(fourier_features(coords, self.n_frequencies)), "n (h d) -> h n d", h=self.heads)
        q = rearrange(self.queries, "t (h d) -> h t d", h=self.heads)
        return torch.softmax(torch.einsum("htd,hnd->htn", q, k) / math.sqrt(k.shape[-1]), dim=-1)

    def forward(self, fmri: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        check_encoder_inputs(fmri, coords)
        pooled = torch.einsum("htn,bn->bht", self.attention(coords), fmri)  # sum_i a_ti v_i, per head
        w = rearrange(self.to_value.weight[:, 0], "(h d) -> h d", h=self.heads)
        b = rearrange(self.to_value.bias, "(h d) -> h d", h=self.heads)
        tokens = rearrange(pooled[..., None] * w[:, None] + b[:, None], "b h t d -> b t (h d)")  # M_t = sum_i a_ti u_i
        return tokens + self.out(tokens)


def check_encoder_inputs(fmri: torch.Tensor, coords: torch.Tensor) -> None:
    """fmri (b, n) and coords (n, 3) of one subject, n >= 1, finite."""
    if coords.ndim != 2 or coords.shape[1] != 3 or coords.shape[0] == 0:
        raise fail("coords", tuple(coords.shape), "an (n_voxels, 3) tensor with n_voxels >= 1")
    if fmri.ndim != 2 or fmri.shape[1] != coords.shape[0]:
        raise fail("fmri", tuple(fmri.shape), f"a (batch, n_voxels={coords.shape[0]}) tensor")
    if not torch.isfinite(fmri).all():
        raise fail("fmri", tuple(fmri.shape), "finite voxel values (found NaN or inf)")


class ContrastiveHead(nn.Module):
    """Stage (i): pooled fMRI tokens -> the target space, with CLIP's learnable temperature (init 0.07)."""

    def __init__(self, dim: int, d_target: int, tau: float = 0.07):
        super().__init__()
        self.proj = nn.Linear(dim, d_target)
        self.log_scale = nn.Parameter(torch.tensor(math.log(1.0 / tau)))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.proj(tokens.mean(dim=1)), dim=-1)


def info_nce(f: torch.Tensor, g: torch.Tensor, log_scale: torch.Tensor) -> torch.Tensor:
    """L = 1/2 [CE(S/tau, I) + CE(S^T/tau, I)], S_ab = cos(f_a, g_b) (CLIP's symmetric InfoNCE)."""
    logits = log_scale.exp().clamp(max=100.0) * F.normalize(f, dim=-1) @ F.normalize(g, dim=-1).T
    labels = torch.arange(len(f), device=f.device)
    return 0.5 * (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels))
