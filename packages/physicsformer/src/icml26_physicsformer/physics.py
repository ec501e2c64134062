"""Spatial operators on scattered stations and the two physics losses of PhysicsFormer.

The paper names a pressure-wind alignment loss and an energy-aware smoothness loss without public formulas;
both are our reconstruction ([INF], see the README):

* ``pressure_wind_loss``: the forecast wind should follow the pressure-gradient relation
  ``w ~ K grad p + b`` (a 2x2 ``K``: geostrophic flow is a rotation of the gradient, friction turns it towards
  low pressure) fitted by least squares on the training data (``PressureWindRelation.fit``);
  ``L_pw = mean |w_hat - (K grad p_hat + b)|^2``.
* ``energy_smoothness_loss``: high-frequency energy of the forecast, ``L_E = mean (d2 x_hat / dt2)^2`` over
  every variable plus the same for the kinetic energy ``k = (u^2 + v^2) / 2``.

Gradients on stations: a Gaussian-weighted least-squares plane through each station's neighbours (exact for
linear fields), in units per ``GRADIENT_UNIT_KM`` (hPa per 100 km, the synoptic convention).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from icml26_shared import check_array, check_positive, fail

GRADIENT_UNIT_KM = 100.0


def _weights(coords: np.ndarray, length_scale: float) -> np.ndarray:
    coords = check_array("coords", coords, ndim=2)
    if coords.shape[1] != 2 or len(coords) < 3:
        raise fail("coords", coords, "(S >= 3, 2) station positions in km")
    check_positive("length_scale", length_scale)
    d2 = ((coords[:, None] - coords[None]) ** 2).sum(-1)
    return np.exp(-d2 / (2 * length_scale**2))


def gradient_operator(coords: np.ndarray, length_scale: float) -> np.ndarray:
    """G (S, 2, S) with ``(G @ q)[i] = grad q`` at station i (per 100 km): weighted least squares of
    ``q_j - q_i = g . (x_j - x_i)`` over the neighbours j with weights ``exp(-|x_j - x_i|^2 / 2 l^2)``."""
    w = _weights(coords, length_scale)
    d = (coords[None] - coords[:, None]) / GRADIENT_UNIT_KM  # (S, S, 2): x_j - x_i
    G = np.zeros((len(coords), 2, len(coords)))
    for i in range(len(coords)):
        A = (w[i, :, None, None] * d[i, :, :, None] * d[i, :, None, :]).sum(0)  # sum_j w d d^T
        if np.linalg.cond(A) > 1e8:
            raise fail("length_scale", length_scale, f"a scale that gives station {i} non-collinear neighbours")
        rows = np.linalg.solve(A, (w[i, :, None] * d[i]).T)  # (2, S): weights on q_j - q_i
        G[i] = rows
        G[i, :, i] -= rows.sum(1)
    return G


def laplacian_operator(coords: np.ndarray, length_scale: float) -> np.ndarray:
    """Row-normalised graph Laplacian (S, S): ``(L q)_i = sum_j w_ij (q_j - q_i) / sum_j w_ij`` (j != i), with
    eigenvalues in [-2, 0], so an explicit Euler step with diffusion coefficient < 1 is stable."""
    w = _weights(coords, length_scale)
    np.fill_diagonal(w, 0.0)
    w = w / w.sum(1, keepdims=True)
    return w - np.eye(len(w))


def pressure_gradient(G: torch.Tensor, pressure: torch.Tensor) -> torch.Tensor:
    """grad p (..., S, 2) from pressure (..., S) and G (S, 2, S)."""
    return torch.einsum("sdj,...j->...sd", G, pressure)


@dataclass(frozen=True)
class PressureWindRelation:
    """``w = K grad p + b`` at every station: K (2, 2), b (2,), in the units of the data it was fitted on."""

    K: np.ndarray
    b: np.ndarray

    @classmethod
    def fit(cls, pressure: np.ndarray, wind: np.ndarray, G: np.ndarray) -> PressureWindRelation:
        """Least squares over all times and stations: pressure (T, S), wind (T, S, 2), G (S, 2, S)."""
        pressure = check_array("pressure", pressure, ndim=2)
        wind = check_array("wind", wind, ndim=3)
        if wind.shape != (*pressure.shape, 2):
            raise fail("wind", wind, f"shape {(*pressure.shape, 2)} (pressure's shape + 2 components)")
        grad = np.einsum("sdj,tj->tsd", G, pressure).reshape(-1, 2)
        design = np.column_stack([grad, np.ones(len(grad))])
        coef, *_ = np.linalg.lstsq(design, wind.reshape(-1, 2), rcond=None)
        return cls(K=coef[:2].T, b=coef[2])

    def residual(self, pressure: torch.Tensor, wind: torch.Tensor, G: torch.Tensor) -> torch.Tensor:
        """w - (K grad p + b): pressure (..., S), wind (..., S, 2) -> (..., S, 2)."""
        K = torch.as_tensor(self.K, dtype=wind.dtype)
        b = torch.as_tensor(self.b, dtype=wind.dtype)
        return wind - (pressure_gradient(G.to(wind.dtype), pressure) @ K.T + b)


def pressure_wind_loss(
    forecast: torch.Tensor, relation: PressureWindRelation, G: torch.Tensor, pressure: int, wind: tuple[int, int]
) -> torch.Tensor:
    """L_pw = mean |w_hat - (K grad p_hat + b)|^2 over (batch, lead, station); forecast (B, H, S, C), channel
    ``pressure`` and channels ``wind`` = (u, v)."""
    res = relation.residual(forecast[..., pressure], forecast[..., list(wind)], G)
    return res.square().sum(-1).mean()


def energy_smoothness_loss(forecast: torch.Tensor, wind: tuple[int, int]) -> torch.Tensor:
    """L_E = mean (d2 x_hat)^2 over every variable + mean (d2 k_hat)^2, k = (u^2 + v^2) / 2 (kinetic energy);
    second differences along the lead axis of forecast (B, H, S, C)."""
    kinetic = 0.5 * forecast[..., list(wind)].square().sum(-1)
    return second_difference(forecast).square().mean() + second_difference(kinetic).square().mean()


def second_difference(x: torch.Tensor) -> torch.Tensor:
    """x[t+1] - 2 x[t] + x[t-1] along axis 1 (the lead axis)."""
    return x[:, 2:] - 2 * x[:, 1:-1] + x[:, :-2]
