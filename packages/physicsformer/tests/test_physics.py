"""Station operators (exact on linear fields), the pressure-wind relation and the two physics losses."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_physicsformer import (
    PressureWindRelation,
    energy_smoothness_loss,
    gradient_operator,
    laplacian_operator,
    pressure_wind_loss,
    synthetic_stations,
)
from icml26_physicsformer.physics import GRADIENT_UNIT_KM


@given(st.integers(0, 10_000), st.integers(4, 20))
def test_gradient_is_exact_on_linear_fields(seed, n):
    rng = np.random.default_rng(seed)
    coords = rng.uniform(0, 100, (n, 2))
    slope, offset = rng.normal(size=2), rng.normal()
    field = coords @ slope / GRADIENT_UNIT_KM + offset  # slope per 100 km
    grad = np.einsum("sdj,j->sd", gradient_operator(coords, 40.0), field)
    np.testing.assert_allclose(grad, np.broadcast_to(slope, grad.shape), atol=1e-8)


def test_laplacian_annihilates_constants_and_is_stable():
    coords = np.random.default_rng(0).uniform(0, 50, (10, 2))
    L = laplacian_operator(coords, 20.0)
    np.testing.assert_allclose(L @ np.ones(10), 0, atol=1e-12)
    eig = np.linalg.eigvals(L).real
    assert eig.max() < 1e-9 and eig.min() >= -2 - 1e-9


def test_relation_is_recovered_on_synthetic_stations():
    data = synthetic_stations(n_stations=24, hours=300, kappa=0.7, noise=0.1, seed=3)
    G = gradient_operator(data.coords, 50.0)
    relation = PressureWindRelation.fit(data.values[..., 1], data.values[..., 4:6], G)
    np.testing.assert_allclose(relation.K, 0.7 * np.array([[0, -1], [1, 0]]), atol=0.02)
    np.testing.assert_allclose(relation.b, 0, atol=0.02)


def test_pressure_wind_loss_is_noise_level_on_truth_and_large_when_wind_is_flipped():
    data = synthetic_stations(n_stations=16, hours=200, noise=0.1, seed=1)
    G = gradient_operator(data.coords, 50.0)
    relation = PressureWindRelation.fit(data.values[..., 1], data.values[..., 4:6], G)
    x = torch.tensor(data.values[None], dtype=torch.float64)
    loss = pressure_wind_loss(x, relation, torch.tensor(G), 1, (4, 5)).item()
    assert loss == pytest.approx(2 * 0.1**2, rel=0.2)  # two noise components of variance 0.01
    flipped = x.clone()
    flipped[..., 4:6] *= -1
    assert pressure_wind_loss(flipped, relation, torch.tensor(G), 1, (4, 5)).item() > 100 * loss


def test_energy_loss_vanishes_for_steady_forecasts_and_penalises_zigzags():
    steady = torch.ones(2, 10, 3, 6)
    assert energy_smoothness_loss(steady, (4, 5)).item() == 0.0
    zigzag = steady.clone()
    zigzag[:, ::2] += 1.0
    assert energy_smoothness_loss(zigzag, (4, 5)).item() > 1.0


@pytest.mark.parametrize(
    ("coords", "length_scale", "name"),
    [
        (np.zeros((2, 2)), 10.0, "coords"),
        (np.zeros((4, 3)), 10.0, "coords"),
        (np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]]), 0.0, "length_scale"),
    ],
)
def test_operators_reject_bad_inputs(coords, length_scale, name):
    with pytest.raises(ValueError, match=f"{name}="):
        gradient_operator(coords, length_scale)


def test_collinear_stations_are_refused():
    coords = np.column_stack([np.arange(5.0) * 10, np.zeros(5)])
    with pytest.raises(ValueError, match="length_scale="):
        gradient_operator(coords, 20.0)


def test_relation_fit_rejects_mismatched_wind():
    with pytest.raises(ValueError, match="wind="):
        PressureWindRelation.fit(np.zeros((5, 4)), np.zeros((5, 3, 2)), np.zeros((4, 2, 4)))
