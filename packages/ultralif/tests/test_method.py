"""The soft max-plus operator and the four Ultra neurons: limits, bounds, closed forms, gradients, bad inputs."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_ultralif import UltraDLIF, UltraDPLIF, UltraLIF, UltraPLIF, soft_maxplus, tropical_membrane
from icml26_ultralif.method import EPS_MAX, EPS_MIN
from scipy.special import logsumexp

ULTRA = [UltraLIF, UltraPLIF, UltraDLIF, UltraDPLIF]
finite = st.floats(-20, 20, allow_nan=False)


@settings(deadline=None)
@given(st.lists(finite, min_size=1, max_size=6), st.floats(0.01, 10))
def test_soft_maxplus_is_bounded_by_max_and_max_plus_eps_log_k(values, eps):
    a = torch.tensor(values, dtype=torch.float64)
    out = float(soft_maxplus(a, eps))
    assert max(values) - 1e-9 <= out <= max(values) + eps * math.log(len(values)) + 1e-9


@settings(deadline=None)
@given(st.lists(finite, min_size=1, max_size=6), st.floats(0.01, 10))
def test_soft_maxplus_matches_scipy_logsumexp(values, eps):
    a = np.array(values)
    expected = eps * logsumexp(a / eps)
    assert float(soft_maxplus(torch.tensor(a), eps)) == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_soft_maxplus_tends_to_max_as_eps_goes_to_zero():
    a = torch.randn(5, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    errors = [float((soft_maxplus(a, eps) - a.amax(-1)).abs().max()) for eps in (1.0, 0.1, 0.01, 0.001)]
    assert errors == sorted(errors, reverse=True) and errors[-1] < 4 * 0.001 * math.log(4)


@settings(deadline=None)
@given(finite, st.floats(0.05, 5))
def test_gradient_of_two_term_lse_is_sigmoid(a, eps):
    x = torch.tensor(a, dtype=torch.float64, requires_grad=True)
    soft_maxplus(torch.stack([x, torch.zeros((), dtype=torch.float64)]), eps).backward()
    assert float(x.grad) == pytest.approx(1 / (1 + math.exp(-a / eps)), abs=1e-12)


def test_ultralif_step_matches_closed_form():
    torch.manual_seed(0)
    neuron = UltraLIF(6, tau=0.8, eps=0.7, learn_eps=False).double()
    neuron.reset(3, dtype=torch.float64)
    x1, x2 = torch.randn(3, 6, dtype=torch.float64), torch.randn(3, 6, dtype=torch.float64)
    s1 = neuron(x1)
    v1 = 0.7 * np.logaddexp(math.log(0.8) / 0.7, x1.numpy() / 0.7)
    spike1 = 1 / (1 + np.exp(-(v1 - 1.0) / 0.7))
    np.testing.assert_allclose(s1.numpy(), spike1, rtol=1e-6)
    s2 = neuron(x2)
    v2 = 0.7 * np.logaddexp((v1 * (1 - spike1) + math.log(0.8)) / 0.7, x2.numpy() / 0.7)
    np.testing.assert_allclose(s2.numpy(), 1 / (1 + np.exp(-(v2 - 1.0) / 0.7)), rtol=1e-6)


@pytest.mark.parametrize(("cls", "kind", "tau"), [(UltraLIF, "temporal", 0.9), (UltraDLIF, "spatial", 1.0)])
def test_small_eps_recovers_the_tropical_neuron(cls, kind, tau):
    """eps -> 0: the Ultra neuron runs the tropical (max-plus) LIF with Heaviside spikes and reset."""
    grid = torch.tensor([-1.17, -0.62, 0.29, 1.43], dtype=torch.float64)
    xs = grid[torch.randint(0, 4, (6, 4, 5), generator=torch.Generator().manual_seed(1))]
    neuron = cls(5, eps=1e-3, learn_eps=False).double()
    neuron.reset(4, dtype=torch.float64)
    v = torch.zeros(4, 5, dtype=torch.float64)
    for x in xs:
        before_reset = tropical_membrane(v, x, kind, tau)
        assert float((before_reset - 1.0).abs().min()) > 0.05  # inputs chosen away from the threshold
        s_ref = (before_reset >= 1.0).double()
        v = before_reset * (1 - s_ref)
        torch.testing.assert_close(neuron(x), s_ref, atol=1e-9, rtol=0)
        torch.testing.assert_close(neuron.v, v, atol=0.01, rtol=0)


@pytest.mark.parametrize("cls", ULTRA)
def test_spike_gradient_is_bounded_and_never_zero(cls):
    """ds/dV = s(1 - s)/eps: in (0, 1/(4 eps)] for every membrane potential."""
    neuron = cls(8, eps=0.5, learn_eps=False).double()
    neuron.reset(2, dtype=torch.float64)
    x = torch.linspace(-8, 8, 16, dtype=torch.float64).reshape(2, 8).requires_grad_()
    s = neuron(x)
    grads = torch.autograd.grad(s.sum(), x)[0]
    assert (grads > 0).all() and (grads <= 1 / (4 * 0.5) + 1e-12).all()


def test_dplif_equals_dlif_at_the_first_step():
    """With V = 0 the self-coupling tau * V vanishes, so UltraDPLIF = UltraDLIF at T = 1 (as in the paper's tables)."""
    x = torch.randn(3, 7)
    a, b = UltraDLIF(7), UltraDPLIF(7)
    a.reset(3)
    b.reset(3)
    sb = b(x)
    torch.testing.assert_close(a(x), sb)
    sb.sum().backward()
    assert float(b.log_tau.grad) == 0.0  # tau gets no gradient at T = 1: training is identical too


@pytest.mark.parametrize("cls", [UltraPLIF, UltraDPLIF])
def test_learnable_tau_gets_a_gradient_after_two_steps(cls):
    neuron = cls(4)
    neuron.reset(2)
    (neuron(torch.randn(2, 4)) + neuron(torch.randn(2, 4))).sum().backward()
    assert neuron.log_tau.grad is not None and float(neuron.log_tau.grad.abs()) > 0


def test_learned_eps_is_clamped_to_its_range():
    neuron = UltraLIF(3)
    with torch.no_grad():
        neuron.log_eps.fill_(math.log(100.0))
    assert float(neuron.eps.detach()) == pytest.approx(EPS_MAX)
    with torch.no_grad():
        neuron.log_eps.fill_(math.log(1e-4))
    assert float(neuron.eps.detach()) == pytest.approx(EPS_MIN)


@pytest.mark.parametrize("cls", ULTRA)
@pytest.mark.parametrize("eps", [0.0, -1.0, float("nan"), float("inf")])
def test_rejects_bad_eps(cls, eps):
    with pytest.raises(ValueError, match="eps="):
        cls(4, eps=eps)


@pytest.mark.parametrize("eps", [0.0, -0.5, float("nan")])
def test_soft_maxplus_rejects_bad_eps(eps):
    with pytest.raises(ValueError, match="eps="):
        soft_maxplus(torch.zeros(3), eps)
    with pytest.raises(ValueError, match="eps="):
        soft_maxplus(torch.zeros(3), torch.tensor(eps))


@pytest.mark.parametrize("cls", [UltraLIF, UltraPLIF, UltraDPLIF])
@pytest.mark.parametrize("tau", [0.0, 1.0, 1.5, -0.1])
def test_rejects_tau_outside_unit_interval(cls, tau):
    with pytest.raises(ValueError, match="tau="):
        cls(4, tau=tau)


@pytest.mark.parametrize("cls", ULTRA)
def test_rejects_bad_dim_theta_and_batch(cls):
    with pytest.raises(ValueError, match="dim="):
        cls(0)
    with pytest.raises(ValueError, match="theta="):
        cls(4, theta=0.0)
    with pytest.raises(ValueError, match="batch_size="):
        cls(4).reset(0)


@pytest.mark.parametrize("cls", ULTRA)
def test_rejects_input_of_wrong_shape_and_step_before_reset(cls):
    neuron = cls(4)
    with pytest.raises(RuntimeError, match="reset"):
        neuron(torch.zeros(2, 4))
    neuron.reset(2)
    with pytest.raises(ValueError, match="x="):
        neuron(torch.zeros(2, 5))


def test_tropical_membrane_rejects_unknown_kind_and_bad_tau():
    with pytest.raises(ValueError, match="kind="):
        tropical_membrane(torch.zeros(1, 2), torch.zeros(1, 2), "sideways")
    with pytest.raises(ValueError, match="tau="):
        tropical_membrane(torch.zeros(1, 2), torch.zeros(1, 2), "temporal", tau=0.0)


@pytest.mark.parametrize("cls", [UltraDLIF, UltraDPLIF])
def test_library_variant_reproduces_the_official_library_spikes(cls):
    """Issue 20: x = [0.2, -0.4, 1.1, 0, 0.5], eps 1, V0 = 0: the official library neurons (used by the
    official training script) spike [.780, .830, .824, .850, .795], the ablation-script neurons differently."""
    x = torch.tensor([[0.2, -0.4, 1.1, 0.0, 0.5]])
    spikes = {}
    for variant in ("ablation", "library"):
        neuron = cls(5, eps=1.0, variant=variant)
        neuron.reset(1)
        spikes[variant] = neuron(x).detach()
    torch.testing.assert_close(
        spikes["library"], torch.tensor([[0.780, 0.830, 0.824, 0.850, 0.795]]), atol=5e-4, rtol=0
    )
    torch.testing.assert_close(
        spikes["ablation"], torch.tensor([[0.574, 0.425, 0.768, 0.525, 0.645]]), atol=5e-4, rtol=0
    )


def test_library_variant_of_the_temporal_neurons():
    """Library: spike sigmoid(V / eps) (threshold 0); UltraPLIF's log tau is not clamped."""
    x = torch.tensor([[0.3, -1.0]])
    neuron = UltraLIF(2, eps=0.5, variant="library")
    neuron.reset(1)
    v = soft_maxplus(torch.stack([torch.zeros(1, 2) + math.log(0.9), x], -1), 0.5)
    torch.testing.assert_close(neuron(x).detach(), torch.sigmoid(v / 0.5))
    plif = {variant: UltraPLIF(2, tau=0.05, variant=variant) for variant in ("ablation", "library")}
    v0 = torch.full((1, 2), 2.0)
    unclamped = soft_maxplus(torch.stack([v0 + math.log(0.05), x], -1), plif["library"].eps)
    torch.testing.assert_close(plif["library"].membrane(v0, x, plif["library"].eps), unclamped)
    assert not torch.allclose(plif["ablation"].membrane(v0, x, plif["ablation"].eps), unclamped)  # clamped at -2.3
    with pytest.raises(ValueError, match="variant"):
        UltraLIF(2, variant="official")


def official_library_dplif(x_seq, tau_logit, log_eps):
    """Independent re-implementation of the official library UltraDPLIF (issue 27): tau = sigmoid(_tau) with
    the raw _tau learned and unclamped, eps = exp(log eps) clamped to [0.1, 20], V <- tau V + x, spike
    sigmoid(eps log(e^(V_{i-1}/eps) + e^(V_i/eps) + e^(V_{i+1}/eps)) / eps), reset V <- V (1 - s)."""
    tau = 1 / (1 + torch.exp(-tau_logit))
    eps = torch.exp(log_eps).clamp(0.1, 20.0)
    v, spikes = torch.zeros_like(x_seq[0]), []
    for x in x_seq:
        v = tau * v + x
        left, right = torch.cat([v[:, -1:], v[:, :-1]], 1), torch.cat([v[:, 1:], v[:, :1]], 1)
        lse = eps * torch.log(torch.exp(left / eps) + torch.exp(v / eps) + torch.exp(right / eps))
        s = 1 / (1 + torch.exp(-lse / eps))
        v = v * (1 - s)
        spikes.append(s)
    return torch.stack(spikes)


def test_library_dplif_is_the_official_neuron_forward_backward_and_training():
    """Issue 27: the library UltraDPLIF starts at the official raw _tau = 0.9 (tau = sigmoid(0.9) = 0.711, not
    0.9), learns that raw parameter and never clamps tau: spikes and gradients equal the official neuron's over
    6 time steps, and 3 Adam steps keep them equal (the old log-tau neuron differed from step 2 on by > 0.05)."""
    g = torch.Generator().manual_seed(0)
    x_seq = 1.5 * torch.randn(6, 4, 9, dtype=torch.float64, generator=g)
    weights = torch.randn(6, 4, 9, dtype=torch.float64, generator=g)
    neuron = UltraDPLIF(9, eps=0.5, variant="library").double()
    ref = {  # initialised as the official float32 parameters, then in float64 like the neuron
        "tau_logit": torch.tensor(0.9).double().requires_grad_(),
        "log_eps": torch.tensor(0.5).log().double().requires_grad_(),
    }
    ours_opt = torch.optim.Adam(neuron.parameters(), lr=0.2)
    ref_opt = torch.optim.Adam(ref.values(), lr=0.2)
    for _ in range(3):
        neuron.reset(4, dtype=torch.float64)
        ours = torch.stack([neuron(x) for x in x_seq])
        expected = official_library_dplif(x_seq, ref["tau_logit"], ref["log_eps"])
        torch.testing.assert_close(ours, expected, rtol=0, atol=1e-12)
        for opt, spikes in ((ours_opt, ours), (ref_opt, expected)):
            opt.zero_grad()
            (weights * spikes).sum().backward()
        for name, p in ref.items():
            got = getattr(neuron, name).grad
            torch.testing.assert_close(got, p.grad, rtol=1e-10, atol=1e-12)
            assert abs(float(p.grad)) > 1e-3  # a real gradient, not two zeros
        ours_opt.step()
        ref_opt.step()
    assert float(neuron.tau_logit) != pytest.approx(0.9, abs=1e-2)  # the raw parameter moved
    assert float(UltraDPLIF(9, variant="library").tau) == pytest.approx(0.7109495, abs=1e-7)  # sigmoid(0.9)


def test_library_dplif_tau_is_not_clamped_and_tau_sets_its_logit():
    neuron = UltraDPLIF(3, variant="library")
    with torch.no_grad():
        neuron.tau_logit.fill_(-5.0)  # tau = 0.0067 < 0.1: the ablation clamp would lift it
    assert float(neuron.tau) == pytest.approx(1 / (1 + math.exp(5.0)), rel=1e-6)
    v, x = torch.ones(1, 3), torch.zeros(1, 3)
    torch.testing.assert_close(neuron.membrane(v, x, neuron.eps), neuron.tau.detach() * v, rtol=1e-6, atol=0)
    assert float(UltraDPLIF(3, tau=0.9, variant="library").tau) == pytest.approx(0.9, rel=1e-6)
    assert float(UltraDPLIF(3).tau) == pytest.approx(0.9, rel=1e-6)  # the ablation default
    with pytest.raises(ValueError, match="^tau=1.0"):
        UltraDPLIF(3, tau=1.0, variant="library")
