"""Do-Prompt's parts: the closed-form KL, the consistency term, sampling, interventions and the objective."""

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_do_prompt import CoOp, DoPrompt, MaPLe, consistency, gaussian_kl
from torch import nn


class LinearHost(nn.Module):
    """A stand-in host without towers: logits are a fixed linear map of the flattened prompts plus the input."""

    def __init__(self, depth=2, n_ctx=4, width=8, classes=3):
        super().__init__()
        self.prompts = nn.Parameter(torch.randn(depth, n_ctx, width))
        self.map = torch.randn(depth * n_ctx * width, classes)

    @property
    def n_ctx(self):
        return self.prompts.shape[1]

    def prompt_tokens(self):
        return self.prompts

    def prompt_logits(self, clip, tokens, class_names, prompts):
        return tokens[None] + (prompts.flatten(1) @ self.map)[:, None]

    def logits(self, clip, tokens, class_names):
        return self.prompt_logits(clip, tokens, class_names, self.prompts[None])[0]


@given(
    st.lists(st.floats(-2, 2), min_size=3, max_size=3),
    st.lists(st.floats(0.05, 3), min_size=3, max_size=3),
    st.floats(0.05, 3),
)
def test_kl_matches_torch_distributions(mu, sigma, sigma0):
    mu, sigma = torch.tensor(mu, dtype=torch.float64), torch.tensor(sigma, dtype=torch.float64)
    mu0 = torch.zeros(3, dtype=torch.float64) + 0.3
    expected = torch.distributions.kl_divergence(
        torch.distributions.Normal(mu, sigma), torch.distributions.Normal(mu0, torch.full_like(mu0, sigma0))
    ).sum()
    torch.testing.assert_close(gaussian_kl(mu, sigma.log(), mu0, sigma0), expected)


def test_kl_vanishes_at_the_prior():
    mu0 = torch.randn(2, 4, 8)
    assert gaussian_kl(mu0, torch.full_like(mu0, math.log(0.05)), mu0, 0.05).abs() < 1e-6


@pytest.mark.parametrize(("dtype", "rho"), [(torch.float32, -200.0), (torch.float64, -800.0)])
def test_kl_is_finite_where_sigma_underflows(dtype, rho):
    """sigma = softplus(rho) is 0 in this dtype; the KL (log space) is the finite closed form, with a finite
    gradient. It was inf (log 0) before 0.1.2."""
    torch.manual_seed(0)
    model = DoPrompt(LinearHost().to(dtype), beta=1.0)
    with torch.no_grad():
        model.rho.fill_(rho)
    assert model.sigma().max() == 0  # the scale itself underflows
    kl = model.kl()
    per_entry = 0.5 * (-1 - 2 * (rho - math.log(0.05)))  # mu = mu0; exp(2 (rho - log sigma0)) = 0
    assert math.isclose(kl.item(), model.rho.numel() * per_entry, rel_tol=1e-6)
    kl.backward()
    assert torch.isfinite(model.rho.grad).all()
    torch.testing.assert_close(model.rho.grad, torch.full_like(model.rho, -1.0))  # d/d rho of -log sigma = -1


@given(st.integers(0, 10_000), st.floats(0.2, 5))
def test_consistency_is_a_kl(seed, tau):
    g = torch.Generator().manual_seed(seed)
    z, z_do = torch.randn(6, 5, generator=g), torch.randn(6, 5, generator=g)
    p, q = torch.softmax(z / tau, -1), torch.softmax(z_do / tau, -1)
    expected = (p * (p.log() - q.log())).sum(-1).mean()
    torch.testing.assert_close(consistency(z, z_do, tau), expected, atol=1e-6, rtol=1e-5)
    assert consistency(z, z, tau).abs() < 1e-6 and consistency(z, z_do, tau) >= 0


def test_sampling_is_the_reparameterised_posterior():
    torch.manual_seed(0)
    model = DoPrompt(LinearHost(), sigma_init=0.3)
    g = torch.Generator().manual_seed(1)
    draws = torch.stack([model.sample(g) for _ in range(4000)])
    torch.testing.assert_close(draws.mean(0), model.mu().detach(), atol=0.05, rtol=0)
    torch.testing.assert_close(draws.std(0), model.sigma().detach(), atol=0.05, rtol=0)
    deterministic = DoPrompt(LinearHost(), beta=0.0, variational=False)
    assert torch.equal(deterministic.sample(g), deterministic.mu()) and deterministic.kl() == 0


@pytest.mark.parametrize("intervention", ["prior", "resample", "noise"])
def test_intervention_touches_only_the_environment_tokens(intervention):
    torch.manual_seed(0)
    model = DoPrompt(LinearHost(n_ctx=5), m_env=2, intervention=intervention, radius=0.5)
    p = model.sample()
    p_do = model.intervene(p, torch.Generator().manual_seed(0))
    assert torch.equal(p_do[:, :3], p[:, :3])  # p_c untouched
    assert (p_do[:, 3:] - p[:, 3:]).abs().amin() > 0  # p_e replaced
    if intervention == "noise":
        torch.testing.assert_close((p_do[:, 3:] - p[:, 3:]).norm(dim=-1), torch.full((2, 2), 0.5))


def test_prior_intervention_draws_from_the_prior():
    torch.manual_seed(0)
    model = DoPrompt(LinearHost(), m_env=2, sigma0=0.2)
    with torch.no_grad():
        model.host.prompts += 5.0  # the posterior has moved far from the prior
    g = torch.Generator().manual_seed(0)
    draws = torch.stack([model.intervene(model.mu().detach(), g)[:, 2:] for _ in range(3000)])
    torch.testing.assert_close(draws.mean(0), model.mu0[:, 2:], atol=0.03, rtol=0)
    torch.testing.assert_close(draws.std(0), torch.full_like(model.mu0[:, 2:], 0.2), atol=0.03, rtol=0)


def test_objective_is_ce_plus_weighted_kl_and_consistency():
    torch.manual_seed(0)
    tokens, y = torch.randn(7, 3), torch.arange(7) % 3
    model = DoPrompt(LinearHost(), beta=0.01, lam=2.0, warmup=0.0)
    total, parts = model.loss(None, tokens, y, None, torch.Generator().manual_seed(0))
    assert math.isclose(total.item(), parts["ce"] + 0.01 * parts["kl"] + 2.0 * parts["do"], rel_tol=1e-5)
    assert parts["do"] > 0
    _, bottleneck_only = DoPrompt(LinearHost(), lam=0.0).loss(None, tokens, y, None)
    assert bottleneck_only["do"] == 0
    _, warming = DoPrompt(LinearHost(), beta=1.0, warmup=0.5).loss(None, tokens, y, None, progress=0.0)
    assert warming["kl"] > 0  # measured, but weighted 0 at the start of the warm-up


def test_zero_weighted_terms_cannot_poison_the_loss(clip):
    """Issue 27: beta = 0 with a collapsed posterior gave 0 x inf = NaN (KL = inf) where CoOp's loss is finite."""
    tokens, y, names = clip.image.tokens(torch.rand(5, 3, 16, 16)), torch.arange(5) % 3, ["zero", "one", "two"]
    host = CoOp(clip)
    model = DoPrompt(host, beta=0.0, lam=0.0, m_env=0, sigma_init=1e-30)
    total, parts = model.loss(clip, tokens, y, names, torch.Generator().manual_seed(0))
    total.backward()
    coop = torch.nn.functional.cross_entropy(host.logits(clip, tokens, names), y)
    torch.testing.assert_close(total, coop, rtol=1e-5, atol=1e-6)  # p = mu + 1e-30 eps = mu
    assert math.isfinite(parts["kl"]) and all(torch.isfinite(p.grad).all() for p in (host.ctx, model.rho))
    warming = DoPrompt(CoOp(clip), beta=1.0, lam=0.0, m_env=0, sigma_init=1e-30)  # weight 0 at progress 0
    assert math.isfinite(warming.loss(clip, tokens, y, names, progress=0.0)[0].item())


def test_do_prompt_on_maple_trains_every_part(clip):
    torch.manual_seed(0)
    model = DoPrompt(MaPLe(clip, n_ctx=4, depth=2))
    tokens = clip.image.tokens(torch.rand(6, 3, 16, 16))
    loss, parts = model.loss(clip, tokens, torch.arange(6) % 3, ["zero", "one", "two"])
    loss.backward()
    assert math.isclose(parts["kl"], 3072 * 0.5 * (0.25 - 1 - math.log(0.25)), rel_tol=1e-4)  # sigma = sigma0/2
    for p in (model.host.ctx, model.host.deep, model.rho, model.host.couplings[0].weight):
        assert p.grad is not None and p.grad.abs().sum() > 0


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"beta": -1e-3}, "beta"),
        ({"lam": -1.0}, "lam"),
        ({"tau": 0.0}, "tau"),
        ({"sigma0": 0.0}, "sigma0"),
        ({"m_env": 5}, "m_env"),
        ({"m_env": -1}, "m_env"),
        ({"m_env": 0}, "m_env"),  # lam > 0 needs an environment part
        ({"intervention": "swap"}, "intervention"),
        ({"radius": float("inf")}, "radius"),
        ({"variational": False}, "beta"),  # a bottleneck needs stochastic prompts
        ({"sigma_init": -0.1}, "sigma_init"),
    ],
)
def test_bad_arguments(kwargs, named):
    with pytest.raises(ValueError, match=f"^{named}="):
        DoPrompt(LinearHost(), **kwargs)


def test_non_finite_posterior_is_refused():
    model = DoPrompt(LinearHost())
    with torch.no_grad():
        model.rho[0, 0, 0] = float("nan")
    with pytest.raises(ValueError, match="^rho="):
        model.sample()
