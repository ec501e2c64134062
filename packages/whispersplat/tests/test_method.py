"""WhisperSplat's key: losslessness, recovery, the other-view term, GPP, SSIM against scikit-image, bad inputs."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_whispersplat import (
    gpp_weight,
    hidden_image,
    hide,
    orbit_camera,
    procedural_scene,
    psnr,
    reconstruction_loss,
    render,
    ring_cameras,
    splat,
    ssim,
)
from skimage.metrics import structural_similarity

SIZE = 16


@pytest.fixture(scope="module")
def setup():
    cover = procedural_scene(400, np.random.default_rng(0))
    secret = orbit_camera(0.0, 70.0, size=SIZE)
    ring = ring_cameras(6, size=SIZE)
    hidden = hidden_image("astronaut", SIZE)
    return cover, secret, ring, hidden


def test_cover_is_released_bit_identical_and_key_reveals_the_image(setup):
    cover, secret, ring, hidden = setup
    before = [render(cover, c) for c in (secret, *ring)]
    snapshot = cover.sh.clone()
    stego = hide(cover, secret, hidden, ring[::2], steps=60)
    assert stego.cover is cover and torch.equal(cover.sh, snapshot)
    after = [render(stego.cover, c) for c in (secret, *ring)]
    assert all(torch.equal(a, b) for a, b in zip(before, after, strict=True))
    revealed = stego.reveal()
    assert psnr(revealed, hidden) > psnr(before[0], hidden) + 5  # a large effect, far from noise
    assert stego.history[0] == pytest.approx(psnr(before[0], hidden), abs=1e-4)
    assert stego.history[-1] == pytest.approx(psnr(revealed, hidden), abs=1e-4)
    assert stego.key.shape == cover.sh.shape


def test_other_view_term_keeps_other_views_closer_to_the_cover(setup):
    cover, secret, ring, hidden = setup
    clean = [render(cover, c) for c in ring]
    with_term = hide(cover, secret, hidden, ring, steps=60)
    without = hide(cover, secret, hidden, ring, steps=60, other_weight=0.0)
    gain = np.mean(
        [
            psnr(render(cover, c, sh=cover.sh + with_term.key), x)
            - psnr(render(cover, c, sh=cover.sh + without.key), x)
            for c, x in zip(ring, clean, strict=True)
        ]
    )
    assert gain > 3.0


def test_hide_is_deterministic_and_accepts_precomputed_splats(setup):
    cover, secret, ring, hidden = setup
    a = hide(cover, secret, hidden, ring[:2], steps=5)
    b = hide(cover, splat(cover, secret), hidden, [splat(cover, c) for c in ring[:2]], steps=5)
    assert torch.allclose(a.key, b.key, atol=1e-6)


@given(st.integers(1, 500), st.floats(0, 1))
def test_gpp_weight_is_a_cosine_decay_from_one_to_zero(t_gpp, frac):
    t = int(frac * t_gpp)
    assert gpp_weight(0, t_gpp) == 1.0
    assert gpp_weight(t_gpp, t_gpp) == 0.0 and gpp_weight(t_gpp + 7, t_gpp) == 0.0
    assert gpp_weight(t, t_gpp) >= gpp_weight(min(t + 1, t_gpp), t_gpp)
    assert gpp_weight(t, t_gpp) == pytest.approx(0.5 * (1 + math.cos(math.pi * t / t_gpp)))


def test_no_gpp_means_plain_l1_ssim_from_the_first_step(setup):
    cover, secret, _, hidden = setup
    assert gpp_weight(0, 0) == 0.0
    a = hide(cover, secret, hidden, steps=3, gpp_steps=0, seed=1)
    b = hide(cover, secret, hidden, steps=3, gpp_steps=0, seed=2)  # the seed only drives the GPP noise
    assert torch.equal(a.key, b.key)


@given(st.integers(0, 1000))
def test_ssim_matches_scikit_image(seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.rand(24, 24, 3, generator=gen)
    y = (x + 0.3 * torch.randn(24, 24, 3, generator=gen)).clamp(0, 1)
    expected = structural_similarity(
        x.double().numpy(),
        y.double().numpy(),
        channel_axis=-1,
        data_range=1.0,
        gaussian_weights=True,
        sigma=1.5,
        use_sample_covariance=False,
    )
    assert float(ssim(x, y)) == pytest.approx(expected, abs=1e-4)
    assert float(ssim(x, x)) == pytest.approx(1.0, abs=1e-6)


def test_reconstruction_loss_limits():
    x = torch.rand(16, 16, 3)
    assert float(reconstruction_loss(x, x)) == pytest.approx(0.0, abs=1e-6)
    y = torch.rand(16, 16, 3)
    l1 = float(torch.mean(torch.abs(x - y)))
    assert float(reconstruction_loss(x, y, lambda_ssim=0.0)) == pytest.approx(l1)
    assert float(reconstruction_loss(x, y, lambda_ssim=1.0)) == pytest.approx(1 - float(ssim(x, y)))
    assert psnr(x, x) == math.inf


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"hidden": torch.rand(SIZE + 1, SIZE, 3)}, "hidden"),
        ({"hidden": torch.rand(SIZE, SIZE, 4)}, "hidden"),
        ({"hidden": torch.rand(SIZE, SIZE, 3) * 2}, "hidden"),
        ({"hidden": np.zeros((SIZE, SIZE, 3))}, "hidden"),
        ({"steps": 0}, "steps"),
        ({"lr": 0.0}, "lr"),
        ({"gpp_steps": 11}, "gpp_steps"),
        ({"gpp_steps": -1}, "gpp_steps"),
        ({"lambda_ssim": 1.5}, "lambda_ssim"),
        ({"gpp_sigma": -0.1}, "gpp_sigma"),
        ({"other_weight": -1.0}, "other_weight"),
        ({"key_penalty": math.nan}, "key_penalty"),
    ],
)
def test_hide_rejects_bad_values(setup, kwargs, name):
    cover, secret, _, hidden = setup
    args = {"hidden": hidden, "steps": 10} | kwargs
    with pytest.raises(ValueError, match=f"{name}="):
        hide(cover, secret, **args)
