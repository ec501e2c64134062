"""The models PhysicsFormer is compared with, all mapping a window (B, L, S, C) to a forecast (B, H, S, C).

* ``Persistence``: the last observed value at every lead.
* ``DLinear`` (Zeng et al., AAAI 2023): moving-average decomposition (kernel 25, edges padded by repeating the
  first/last value) into trend and seasonal parts, one linear map L -> H on each, shared by all series, weights
  initialised to 1/L (as in the Time-Series-Library code WEATHER-5K builds on); forecast = sum of both.
* ``PatchTST`` (Nie et al., ICLR 2023): channel independence (each series alone), RevIN (instance
  normalisation with a learnable affine map, undone at the output), patches of 16 with stride 8 (the end padded
  by repeating the last value), linear patch embedding + learnable positions, a Transformer encoder, and a
  flatten head (d * patches -> H).
* ``TransformerOnly``: PhysicsFormer's residual Transformer without the dynamic core (the ablation).
"""

from __future__ import annotations

import torch
from einops import rearrange
from icml26_shared import check_int, fail
from torch import nn

from .method import ResidualTransformer, transformer_encoder


class Persistence(nn.Module):
    """x_hat_{t+k} = x_t for k = 1..H."""

    def __init__(self, pred_len: int):
        super().__init__()
        self.pred_len = check_int("pred_len", pred_len, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, -1:].expand(-1, self.pred_len, -1, -1)


def moving_average(x: torch.Tensor, kernel: int) -> torch.Tensor:
    """Trend of series (B, L, N): mean over ``kernel`` steps, the ends padded with the first/last value
    ((kernel - 1) // 2 on each side, as DLinear's ``moving_avg``)."""
    pad = (kernel - 1) // 2
    padded = torch.cat([x[:, :1].expand(-1, pad, -1), x, x[:, -1:].expand(-1, pad, -1)], 1)
    return nn.functional.avg_pool1d(rearrange(padded, "b l n -> b n l"), kernel, stride=1).transpose(1, 2)


class DLinear(nn.Module):
    """DLinear: seasonal = x - moving_average(x), trend = moving_average(x); y = W_s seasonal + W_t trend."""

    def __init__(self, seq_len: int, pred_len: int, kernel: int = 25):
        super().__init__()
        self.seq_len, self.pred_len = check_int("seq_len", seq_len, 1), check_int("pred_len", pred_len, 1)
        self.kernel = check_int("kernel", kernel, 1)
        if kernel % 2 == 0:
            raise fail("kernel", kernel, "an odd moving-average kernel (the trend keeps the window's length)")
        self.seasonal = nn.Linear(seq_len, pred_len)
        self.trend = nn.Linear(seq_len, pred_len)
        for linear in (self.seasonal, self.trend):
            nn.init.constant_(linear.weight, 1.0 / seq_len)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        S = x.shape[2]
        series = rearrange(x, "b l s c -> b l (s c)")
        trend = moving_average(series, self.kernel)
        seasonal = series - trend
        y = self.seasonal(seasonal.transpose(1, 2)) + self.trend(trend.transpose(1, 2))  # (B, N, H)
        return rearrange(y, "b (s c) h -> b h s c", s=S)


class RevIN(nn.Module):
    """Reversible instance normalisation (Kim et al., ICLR 2022) over the time axis of (B, N, L) series."""

    def __init__(self, n_series: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(n_series, 1))
        self.bias = nn.Parameter(torch.zeros(n_series, 1))

    def normalise(self, x: torch.Tensor) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        mean = x.mean(-1, keepdim=True)
        std = (x.var(-1, keepdim=True, unbiased=False) + self.eps).sqrt()
        return (x - mean) / std * self.weight + self.bias, (mean, std)

    def denormalise(self, y: torch.Tensor, stats: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        mean, std = stats
        return (y - self.bias) / (self.weight + self.eps**2) * std + mean


class PatchTST(nn.Module):
    """PatchTST/42-style encoder for ``n_series`` = S*C channels, each forecast on its own."""

    def __init__(
        self,
        seq_len: int,
        pred_len: int,
        n_series: int,
        patch_len: int = 16,
        stride: int = 8,
        d_model: int = 32,
        n_heads: int = 4,
        n_layers: int = 2,
        d_ff: int = 64,
        dropout: float = 0.0,
    ):
        super().__init__()
        self.seq_len, self.pred_len = check_int("seq_len", seq_len, 1), check_int("pred_len", pred_len, 1)
        self.patch_len = check_int("patch_len", patch_len, 1, seq_len)
        self.stride = check_int("stride", stride, 1, patch_len)
        self.n_patches = (seq_len - patch_len) // stride + 2  # + 1 for the padded end, as PatchTST
        self.revin = RevIN(check_int("n_series", n_series, 1))
        self.embed = nn.Linear(patch_len, d_model)
        self.position = nn.Parameter(0.02 * torch.randn(self.n_patches, d_model))
        self.encoder = transformer_encoder(d_model, n_heads, n_layers, d_ff, dropout)
        self.head = nn.Linear(d_model * self.n_patches, pred_len)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, _, S, _ = x.shape
        series, stats = self.revin.normalise(rearrange(x, "b l s c -> b (s c) l"))
        series = torch.cat([series, series[..., -1:].expand(-1, -1, self.stride)], -1)  # pad the end by `stride`
        patches = series.unfold(-1, self.patch_len, self.stride)  # (B, N, P, patch_len)
        tokens = self.embed(rearrange(patches, "b n p k -> (b n) p k")) + self.position
        z = rearrange(self.encoder(tokens), "(b n) p d -> b n (p d)", b=B)
        y = self.revin.denormalise(self.head(z), stats)  # (B, N, H)
        return rearrange(y, "b (s c) h -> b h s c", s=S)


class TransformerOnly(ResidualTransformer):
    """The residual Transformer of PhysicsFormer as a stand-alone forecaster (no dynamic core)."""

    def __init__(self, seq_len: int, pred_len: int, d_model: int = 32, n_heads: int = 4, n_layers: int = 2):
        super().__init__(seq_len, pred_len, d_model, n_heads, n_layers, 2 * d_model, add_mean=True)
