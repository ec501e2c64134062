"""Standardisation, gap-aware windows, the objective's physics terms, and that training learns."""

import numpy as np
import pytest
import torch
from icml26_physicsformer import (
    DLinear,
    Persistence,
    PhysicsTerms,
    PressureWindRelation,
    Standardiser,
    Windows,
    objective,
    predict,
    train,
)


def test_standardiser_round_trip_and_pooled_std():
    values = np.random.default_rng(0).normal(size=(50, 3, 2)) * [1.0, 2.0] + 5
    scaler = Standardiser.fit(values)
    assert scaler.mean.shape == (3, 2) and scaler.std.shape == (2,)
    np.testing.assert_allclose(scaler.inverse(scaler.transform(values)), values)
    with pytest.raises(ValueError, match="values="):
        Standardiser.fit(np.ones((10, 2, 2)))


def test_windows_skip_excluded_gaps():
    values = np.zeros((20, 2, 1))
    values[7, 1, 0] = np.nan
    windows = Windows.build(values, seq_len=3, pred_len=2)
    assert windows.starts.tolist() == [0, 1, 2, 8, 9, 10, 11, 12, 13, 14, 15]
    x, y = windows.batch(np.array([0, 3]))
    assert x.shape == (2, 3, 2, 1) and y.shape == (2, 2, 2, 1)
    with pytest.raises(ValueError, match="seq_len="):
        Windows.build(values, seq_len=19, pred_len=2)
    with pytest.raises(ValueError, match="values="):
        Windows.build(np.full((10, 1, 1), np.nan), seq_len=2, pred_len=2)


def test_objective_adds_the_weighted_physics_terms():
    G = torch.zeros(3, 2, 3)
    physics = PhysicsTerms(PressureWindRelation(np.eye(2), np.zeros(2)), G, 1, (2, 3))
    forecast, target = torch.randn(2, 5, 3, 4), torch.randn(2, 5, 3, 4)
    mse = (forecast - target).square().mean()
    pw = forecast[..., 2:].square().sum(-1).mean()  # grad p = 0, so the residual is the wind itself
    torch.testing.assert_close(objective(forecast, target, physics, 0.5, 0.0), mse + 0.5 * pw)
    with pytest.raises(ValueError, match="lambda_pw="):
        objective(forecast, target, physics, -0.1, 0.0)
    with pytest.raises(ValueError, match="lambda_E="):
        objective(forecast, target, physics, 0.0, float("nan"))
    with pytest.raises(ValueError, match="physics="):
        objective(forecast, target, None, 0.0, 1.0)


def test_training_dlinear_beats_persistence_on_a_daily_cycle():
    t = np.arange(600)
    values = np.sin(2 * np.pi * t / 24)[:, None, None] * np.ones((1, 2, 1))
    values = values + 0.05 * np.random.default_rng(0).normal(size=values.shape)
    windows = Windows.build(values, seq_len=48, pred_len=24)
    torch.manual_seed(0)
    model = DLinear(48, 24)
    losses = train(model, windows, steps=150, batch_size=16, lr=1e-2, seed=0)
    assert np.mean(losses[-10:]) < 0.2 * np.mean(losses[:10])
    forecast, truth = predict(model, windows)
    persistence, _ = predict(Persistence(24), windows)
    assert np.abs(forecast - truth).mean() < 0.5 * np.abs(persistence - truth).mean()
    with pytest.raises(ValueError, match="steps="):
        train(model, windows, steps=0)
