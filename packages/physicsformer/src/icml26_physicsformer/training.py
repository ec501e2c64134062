"""Standardisation, forecast windows, training (MSE + lambda_pw L_pw + lambda_E L_E) and batched prediction."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from icml26_shared import check_array, check_int, check_positive, fail
from torch import nn

from .data import window_starts
from .physics import PressureWindRelation, energy_smoothness_loss, pressure_wind_loss


@dataclass(frozen=True)
class Standardiser:
    """z-score with a mean per station and variable (S, C) and a std per variable pooled over stations (C,):
    pooling keeps the spatial differences of one variable comparable (a pressure gradient stays a gradient)."""

    mean: np.ndarray
    std: np.ndarray

    @classmethod
    def fit(cls, values: np.ndarray) -> Standardiser:
        values = check_array("values", values, ndim=3, finite=False)
        mean = np.nanmean(values, axis=0)
        std = np.sqrt(np.nanmean((values - mean) ** 2, axis=(0, 1)))
        if not (np.isfinite(std).all() and (std > 0).all()):
            raise fail("values", values, "every variable observed with a positive spread")
        return cls(mean, std)

    def transform(self, values: np.ndarray) -> np.ndarray:
        return (values - self.mean) / self.std

    def inverse(self, values: np.ndarray) -> np.ndarray:
        return values * self.std + self.mean


@dataclass(frozen=True)
class Windows:
    """Forecast windows over standardised values (T, S, C): input hours [s, s+L), target hours [s+L, s+L+H) for
    every start s whose whole span avoids excluded gaps (any NaN)."""

    values: np.ndarray
    starts: np.ndarray
    seq_len: int
    pred_len: int

    @classmethod
    def build(cls, values: np.ndarray, seq_len: int, pred_len: int, stride: int = 1) -> Windows:
        check_int("seq_len", seq_len, 1)
        check_int("pred_len", pred_len, 1)
        values = check_array("values", values, ndim=3, finite=False).astype(np.float32)
        if seq_len + pred_len > len(values):
            raise fail("seq_len", seq_len, f"seq_len + pred_len <= the {len(values)} hours of the series")
        starts = window_starts(np.isfinite(values).all(axis=(1, 2)), seq_len + pred_len, stride)
        if not len(starts):
            raise fail("values", values, f"at least one gap-free span of {seq_len + pred_len} hours")
        return cls(values, starts, seq_len, pred_len)

    def __len__(self) -> int:
        return len(self.starts)

    def batch(self, index: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        """x (B, L, S, C), y (B, H, S, C) for the windows ``index``."""
        span = self.starts[index][:, None] + np.arange(self.seq_len + self.pred_len)
        block = torch.from_numpy(self.values[span])
        return block[:, : self.seq_len], block[:, self.seq_len :]


@dataclass(frozen=True)
class PhysicsTerms:
    """What the physics losses need: the fitted relation, the gradient operator and the channel indices."""

    relation: PressureWindRelation
    G: torch.Tensor
    pressure: int
    wind: tuple[int, int]


def objective(
    forecast: torch.Tensor, target: torch.Tensor, physics: PhysicsTerms | None, lambda_pw: float, lambda_E: float
) -> torch.Tensor:
    """MSE + lambda_pw L_pw + lambda_E L_E (the physics terms only where lambda > 0)."""
    for name, lam in (("lambda_pw", lambda_pw), ("lambda_E", lambda_E)):
        if not lam >= 0:
            raise fail(name, lam, "a weight >= 0")
    loss = (forecast - target).square().mean()
    if (lambda_pw > 0 or lambda_E > 0) and physics is None:
        raise fail("physics", physics, "PhysicsTerms (relation, G, channels) when a physics weight is > 0")
    if lambda_pw > 0:
        loss = loss + lambda_pw * pressure_wind_loss(
            forecast, physics.relation, physics.G, physics.pressure, physics.wind
        )
    if lambda_E > 0:
        loss = loss + lambda_E * energy_smoothness_loss(forecast, physics.wind)
    return loss


def train(
    model: nn.Module,
    windows: Windows,
    steps: int,
    batch_size: int = 32,
    lr: float = 1e-3,
    seed: int = 0,
    physics: PhysicsTerms | None = None,
    lambda_pw: float = 0.0,
    lambda_E: float = 0.0,
) -> list[float]:
    """Adam on random training windows (drawn from ``seed``); returns the loss per step."""
    check_int("steps", steps, 1)
    check_int("batch_size", batch_size, 1)
    check_positive("lr", lr)
    rng = np.random.default_rng(seed)
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    losses = []
    for _ in range(steps):
        x, y = windows.batch(rng.integers(0, len(windows), batch_size))
        loss = objective(model(x), y, physics, lambda_pw, lambda_E)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    return losses


@torch.no_grad()
def predict(model: nn.Module, windows: Windows, batch_size: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """Forecasts and targets (N, H, S, C), standardised, for every window."""
    model.eval()
    outs, targets = [], []
    for chunk in np.array_split(np.arange(len(windows)), max(1, len(windows) // batch_size)):
        x, y = windows.batch(chunk)
        outs.append(model(x).numpy())
        targets.append(y.numpy())
    return np.concatenate(outs), np.concatenate(targets)
