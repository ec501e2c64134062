"""The dynamic core (its Kronecker operator against a per-station loop, a steady state) and PhysicsFormer."""

import numpy as np
import pytest
import torch
from icml26_physicsformer import DynamicCore, PhysicsFormer
from icml26_physicsformer.method import GRADIENT_COEFFICIENT_BOUND, WIND_LIMIT

COORDS = np.array([[0.0, 0.0], [15.0, 2.0], [3.0, 18.0], [-12.0, 6.0], [8.0, -14.0]])


def _core(pred_len=4):
    torch.manual_seed(0)
    core = DynamicCore(COORDS, 24, pred_len, 6, 1, (4, 5)).double()
    with torch.no_grad():  # move every coefficient off its initial value
        for p in core.parameters():
            p.add_(0.3 * torch.randn_like(p))
    return core


def _reference_step(core, q, target):
    """One explicit Euler step written station by station, as in the module docstring."""
    beta = GRADIENT_COEFFICIENT_BOUND * torch.sigmoid(core.beta)
    alpha = GRADIENT_COEFFICIENT_BOUND * torch.sigmoid(core.alpha)
    kappa, gamma, f = torch.sigmoid(core.kappa), torch.sigmoid(core.gamma), 0.5 * torch.tanh(core.f)
    G = torch.stack([core.Gx, core.Gy], 1)  # (S, 2, S)
    new = q.clone()
    for s in range(q.shape[1]):
        grad = torch.einsum("dj,bjc->bdc", G[s], q)  # (B, 2, C)
        u, v = (WIND_LIMIT * torch.tanh(q[:, s, i] / WIND_LIMIT) for i in (4, 5))
        advection = u[:, None] * grad[:, 0] + v[:, None] * grad[:, 1]
        lap = torch.einsum("j,bjc->bc", core.Lap[s], q)
        tendency = -beta * advection + kappa * lap - gamma * (q[:, s] - target[:, s])
        tendency[:, 4] += -alpha * grad[:, 0, 1] + f * q[:, s, 5]
        tendency[:, 5] += -alpha * grad[:, 1, 1] - f * q[:, s, 4]
        new[:, s] = q[:, s] + tendency
    return new


def test_core_equals_the_per_station_euler_scheme():
    core = _core()
    x = torch.randn(3, 24, 5, 6, dtype=torch.float64)
    out = core(x)
    coef = torch.einsum("kl,blsc->bksc", core.fit, x)
    coef = torch.cat([coef[:, :1], core.rho * coef[:, 1:]], 1)
    target = torch.einsum("hk,bksc->bhsc", core.future, coef)
    q = x[:, -1]
    for k in range(4):
        q = _reference_step(core, q, target[:, k])
        torch.testing.assert_close(out[:, k], q)


def test_a_uniform_calm_state_is_steady():
    core = _core(pred_len=30)
    x = torch.full((2, 24, 5, 6), 0.7, dtype=torch.float64)
    x[..., 4:] = 0.0  # calm: no rotation of the wind, no gradients, q* = q
    torch.testing.assert_close(core(x), x[:, :1].expand(-1, 30, -1, -1))


def test_the_core_continues_a_pure_diurnal_cycle_when_relaxation_is_total():
    core = _core(pred_len=24)
    with torch.no_grad():
        core.gamma.fill_(50.0)  # gamma -> 1: q_{k+1} = q*_{k+1}
        core.beta.fill_(-50.0)  # no advection
        core.alpha.fill_(-50.0)
        core.kappa.fill_(-50.0)
        core.f.zero_()
        core.rho.fill_(1.0)
    t = torch.arange(48, dtype=torch.float64)
    cycle = torch.sin(2 * np.pi * t / 24)[None, :, None, None].expand(1, 48, 5, 6)
    torch.testing.assert_close(core(cycle[:, :24]), cycle[:, 24:], atol=1e-6, rtol=0)


def test_physicsformer_shapes_and_gradients():
    model = PhysicsFormer(COORDS, 24, 8, 6, 1, (4, 5), d_model=16, n_heads=2, n_layers=1)
    y = model(torch.randn(2, 24, 5, 6))
    assert y.shape == (2, 8, 5, 6)
    y.square().mean().backward()
    assert all(p.grad is not None for p in model.parameters())


@pytest.mark.parametrize(
    ("x", "name"),
    [(torch.randn(2, 23, 5, 6), "x"), (torch.randn(2, 24, 5, 5), "x"), (np.zeros((2, 24, 5, 6)), "x")],
)
def test_physicsformer_rejects_wrong_windows(x, name):
    model = PhysicsFormer(COORDS, 24, 8, 6, 1, (4, 5), d_model=16, n_heads=2, n_layers=1)
    with pytest.raises(ValueError, match=f"{name}="):
        model(x)


def test_physicsformer_rejects_nan_windows():
    model = PhysicsFormer(COORDS, 24, 8, 6, 1, (4, 5), d_model=16, n_heads=2, n_layers=1)
    x = torch.randn(2, 24, 5, 6)
    x[0, 3, 1, 2] = float("nan")
    with pytest.raises(ValueError, match="x=.*finite"):
        model(x)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"pressure": 4}, "wind"), ({"wind": (4, 6)}, "wind"), ({"seq_len": 1}, "seq_len"), ({"pred_len": 0}, "pred_len")],
)
def test_core_rejects_bad_arguments(kwargs, name):
    args = {"coords": COORDS, "seq_len": 24, "pred_len": 4, "n_variables": 6, "pressure": 1, "wind": (4, 5)}
    with pytest.raises(ValueError, match=f"{name}="):
        DynamicCore(**(args | kwargs))
