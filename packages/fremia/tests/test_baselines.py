"""The three attacks: DDIM steps against diffusers, exact reconstruction by an oracle model, bad inputs."""

import pytest
import torch
from diffusers import DDIMScheduler
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_fremia import MLPDenoiser, alphas_cumprod, attack_scores, ddim_step, naive_pair, pia_pair, secmi_pair

A_BAR = alphas_cumprod().double()


def _images(n=4, size=8, seed=0):
    return torch.rand(n, 1, size, size, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))


class Oracle:
    """Knows the clean images: eps_theta(x_t, t) = the exact noise of x_t (t > 0), or a fixed guess at t = 0."""

    def __init__(self, images):
        self.x0 = images * 2 - 1

    def __call__(self, x_t, t):
        if t == 0:
            return torch.zeros_like(x_t)
        a = A_BAR[t]
        return (x_t - a.sqrt() * self.x0) / (1 - a).sqrt()


@pytest.mark.parametrize("t", [100, 500])
def test_ddim_denoising_step_matches_diffusers(t):
    scheduler = DDIMScheduler(beta_start=1e-4, beta_end=0.02, beta_schedule="linear", clip_sample=False)
    scheduler.set_timesteps(1000 // t)  # steps spaced by t: from t the next one is 0
    g = torch.Generator().manual_seed(0)
    x_t, eps = torch.randn(3, 1, 8, 8, generator=g), torch.randn(3, 1, 8, 8, generator=g)
    expected = scheduler.step(eps, t, x_t, eta=0.0).prev_sample
    torch.testing.assert_close(ddim_step(x_t, eps, A_BAR.float(), t, 0), expected, rtol=1e-5, atol=1e-5)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 998), st.integers(1, 999), st.integers(0, 50))
def test_ddim_inversion_then_denoising_with_the_same_eps_is_exact(s, t, seed):
    g = torch.Generator().manual_seed(seed)
    x, eps = (
        torch.randn(2, 1, 4, 4, dtype=torch.float64, generator=g),
        torch.randn(2, 1, 4, 4, dtype=torch.float64, generator=g),
    )
    torch.testing.assert_close(ddim_step(ddim_step(x, eps, A_BAR, s, t), eps, A_BAR, t, s), x)


@pytest.mark.parametrize("pair", [naive_pair, pia_pair])
def test_an_oracle_denoiser_reconstructs_exactly(pair):
    images = _images()
    target, prediction = pair(Oracle(images), images, A_BAR, 100, torch.Generator().manual_seed(0))
    torch.testing.assert_close(target, images * 2 - 1)
    torch.testing.assert_close(prediction, target)


def test_secmi_with_an_oracle_returns_to_step_zero():
    images = _images()
    target, prediction = secmi_pair(Oracle(images), images, A_BAR, 100)
    # one DDIM hop back lands on step 0 (alpha_bar_0 = 1 - 1e-4), the official t-error's reference point
    assert float((prediction - target).abs().max()) < 0.02


def test_pia_and_secmi_are_deterministic_naive_follows_its_generator():
    torch.manual_seed(0)
    model = MLPDenoiser(image_size=8, hidden=16).double()
    images = _images()
    for attack in ("pia", "secmi"):
        torch.testing.assert_close(
            attack_scores(attack, model, images, A_BAR, tau=2), attack_scores(attack, model, images, A_BAR, tau=2)
        )
    same = [
        attack_scores("naive", model, images, A_BAR, tau=2, generator=torch.Generator().manual_seed(3))
        for _ in range(2)
    ]
    torch.testing.assert_close(*same)
    other = attack_scores("naive", model, images, A_BAR, tau=2, generator=torch.Generator().manual_seed(4))
    assert not torch.allclose(same[0], other)


def test_filtered_score_never_exceeds_the_plain_squared_error():
    torch.manual_seed(0)
    model = MLPDenoiser(image_size=8, hidden=16).double()
    plain = attack_scores("secmi", model, _images(), A_BAR, use_filter=False)
    filtered = attack_scores("secmi", model, _images(), A_BAR, use_filter=True, tau=1, s=0.2)
    assert (filtered <= plain).all() and (filtered >= 0.04 * plain - 1e-9).all()  # s^2 <= gain <= 1


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"attack": "clid"}, "attack='clid'"),
        ({"t": 0}, "t=0"),
        ({"t": 1000}, "t=1000"),
        ({"images": _images() * 2 - 0.5}, "images="),
        ({"images": torch.rand(4, 8, 8)}, "images="),
        ({"images": torch.rand(0, 1, 8, 8)}, "images="),
        ({"images": _images(size=4)}, "x="),  # model and image sizes differ
        ({"tau": 4}, "tau=4"),
        ({"s": 2.0}, "s=2.0"),
    ],
)
def test_bad_inputs_name_the_argument(kwargs, name):
    args = {
        "attack": "naive",
        "eps_model": MLPDenoiser(image_size=8, hidden=8).double(),
        "images": _images(),
        "a_bar": A_BAR,
        "tau": 1,
    }
    with pytest.raises(ValueError, match=name.replace("(", r"\(").replace(".", r"\.")):
        attack_scores(**(args | kwargs))
