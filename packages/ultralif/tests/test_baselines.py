"""Surrogate-gradient baselines: Heaviside forward, the documented surrogate backward, shared LIF dynamics."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_ultralif import LIF, PLIF, DSpike, SigmaLIF
from icml26_ultralif.baselines import DSpikeSurrogate, SigmoidSurrogate


def _grad(fn, u, alpha):
    u = u.clone().requires_grad_()
    fn.apply(u, alpha).sum().backward()
    return u.grad


@settings(deadline=None)
@given(st.floats(-5, 5), st.floats(0.5, 10))
def test_sigmoid_surrogate_forward_is_heaviside_backward_is_sigmoid_slope(u, alpha):
    x = torch.tensor([u], dtype=torch.float64)
    assert float(SigmoidSurrogate.apply(x, alpha)) == float(u >= 0)
    sig = 1 / (1 + math.exp(-alpha * u))
    assert float(_grad(SigmoidSurrogate, x, alpha)) == pytest.approx(alpha * sig * (1 - sig), abs=1e-12)


def test_dspike_surrogate_integrates_to_one_on_its_window():
    """DSpike's surrogate is the derivative of tanh(alpha u)/(2 tanh(alpha/2)) + 1/2 on [-1/2, 1/2]: area 1."""
    u = torch.linspace(-1, 1, 200001, dtype=torch.float64)
    for alpha in (1.0, 3.0, 8.0):
        g = _grad(DSpikeSurrogate, u, alpha)
        assert float(torch.trapezoid(g, u)) == pytest.approx(1.0, abs=1e-4)
        assert float(g[u.abs() > 0.5].abs().max()) == 0.0
        assert float(g[100000]) == pytest.approx(alpha / (2 * math.tanh(alpha / 2)))


def test_lif_integrates_leaks_fires_and_resets():
    neuron = LIF(1, tau=0.5)
    neuron.reset(1)
    spikes = [float(neuron(torch.tensor([[0.6]]))) for _ in range(4)]
    # V: 0.6 -> 0.9 -> 1.05 (spike, reset to 0) -> 0.6
    assert spikes == [0.0, 0.0, 1.0, 0.0]


@pytest.mark.parametrize("cls", [LIF, PLIF, DSpike])
def test_hard_spikes_are_binary_and_train(cls):
    neuron = cls(6)
    neuron.reset(3)
    x = torch.randn(3, 6, requires_grad=True)
    s = neuron(x * 2)
    assert set(s.unique().tolist()) <= {0.0, 1.0}
    (s * torch.arange(6)).sum().backward()
    assert x.grad is not None and bool(torch.isfinite(x.grad).all())


def test_plif_starts_as_lif_and_learns_tau():
    x = torch.randn(5, 2, 4)
    a, b = LIF(4), PLIF(4)
    a.reset(2)
    b.reset(2)
    out = [(a(xt), b(xt)) for xt in x]
    for sa, sb in out:
        torch.testing.assert_close(sa, sb)
    sum(sb.sum() for _, sb in out).backward()
    assert b.w.grad is not None


def test_sigmalif_with_small_eps_matches_lif_forward():
    x = torch.tensor([[0.3, 0.8, 1.4], [0.2, 0.95, -1.0]])
    lif, sigma = LIF(3, tau=0.9), SigmaLIF(3, tau=0.9, eps=1e-3, learn_eps=False)
    lif.reset(2)
    sigma.reset(2)
    for _ in range(3):
        torch.testing.assert_close(sigma(x), lif(x), atol=1e-6, rtol=0)


@pytest.mark.parametrize("cls", [LIF, PLIF, DSpike, SigmaLIF])
@pytest.mark.parametrize("tau", [0.0, 1.0, 2.0])
def test_rejects_tau_outside_unit_interval(cls, tau):
    with pytest.raises(ValueError, match="tau="):
        cls(3, tau=tau)


@pytest.mark.parametrize("cls", [LIF, PLIF, DSpike])
@pytest.mark.parametrize("alpha", [0.0, -1.0, float("nan")])
def test_rejects_bad_alpha(cls, alpha):
    with pytest.raises(ValueError, match="alpha="):
        cls(3, alpha=alpha)


def test_plif_leak_gets_no_gradient_at_the_first_step():
    """V = 0 at T = 1, so tau V vanishes: PLIF trains exactly like LIF in the T = 1 experiments."""
    neuron = PLIF(4)
    neuron.reset(2)
    neuron(torch.randn(2, 4) + 1).sum().backward()
    assert float(neuron.w.grad) == 0.0


def test_baselines_fire_binary_at_theta():
    """Pins our choice (issue 20): Heaviside H(V - 1) forward, not the official smooth sigmoid(10 (V - 0.5))
    nor the official DSpike threshold 0.5. At V = 0.8 the official LIF would fire 0.95, ours 0."""
    x = torch.tensor([[0.4, 0.8, 1.0, 1.3]])
    for cls in (LIF, PLIF, DSpike):
        neuron = cls(4)
        neuron.reset(1)
        torch.testing.assert_close(neuron(x).detach(), torch.tensor([[0.0, 0.0, 1.0, 1.0]]))
    assert float(torch.sigmoid(torch.tensor(10 * (0.8 - 0.5)))) > 0.95
