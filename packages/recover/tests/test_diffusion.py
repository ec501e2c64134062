"""DDIM against diffusers, exact round trips with the closed-form memoriser, training, and bad inputs."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_recover import ddim_invert, ddim_reconstruct, ddim_step, fine_tune, make_denoiser, train_ddpm
from icml26_recover.diffusion import check_images, ddim_timesteps, denoising_loss


def test_ddim_step_matches_diffusers_ddim_scheduler(scheduler):
    from diffusers import DDIMScheduler

    ddim = DDIMScheduler(num_train_timesteps=1000, beta_schedule="linear", clip_sample=False)  # alpha_T+ = 1
    ddim.set_timesteps(10)
    gen = torch.Generator().manual_seed(1)
    x, eps = torch.randn(3, 1, 8, 8, generator=gen), torch.randn(3, 1, 8, 8, generator=gen)
    for t in ddim.timesteps.tolist():
        prev = t - 100
        abar_to = float(ddim.alphas_cumprod[prev]) if prev >= 0 else 1.0
        ours = ddim_step(x, eps, float(ddim.alphas_cumprod[t]), abar_to)
        torch.testing.assert_close(ours, ddim.step(eps, t, x, eta=0.0).prev_sample, rtol=1e-5, atol=1e-5)


@given(st.floats(0.01, 0.999), st.floats(0.01, 0.999))
def test_ddim_step_is_reversible(a, b):
    gen = torch.Generator().manual_seed(0)
    x, eps = torch.randn(2, 1, 4, 4, generator=gen), torch.randn(2, 1, 4, 4, generator=gen)
    torch.testing.assert_close(ddim_step(ddim_step(x, eps, a, b), eps, b, a), x, rtol=1e-4, atol=1e-4)


def test_ddim_grid_ends_at_depth():
    taus = ddim_timesteps(600, 10, 1000)
    assert taus[0] == 0 and taus[-1] == 600 and len(taus) == 11 and (np.diff(taus) > 0).all()


def test_memoriser_round_trip_is_exact(scheduler, memoriser, x_star):
    """The exact denoiser of one image maps any latent back onto that image: reconstruction = x*."""
    latent = ddim_invert(memoriser, scheduler, x_star[None], 600, 10)
    torch.testing.assert_close(ddim_reconstruct(memoriser, scheduler, latent, 600, 10), x_star[None])
    noise = torch.randn(1, 1, 8, 8, generator=torch.Generator().manual_seed(3))
    torch.testing.assert_close(ddim_reconstruct(memoriser, scheduler, noise, 999, 7), x_star[None])


def test_mlp_and_unet_keep_the_image_shape():
    x, t = torch.zeros(2, 1, 8, 8), torch.tensor([0, 999])
    for kind in ("mlp", "unet"):
        assert make_denoiser(kind, (1, 8, 8))(x, t).shape == (2, 1, 8, 8)


def test_training_lowers_the_loss_and_fine_tuning_keeps_the_pretrained_model(scheduler):
    torch.manual_seed(0)
    images = np.random.default_rng(0).uniform(-1, 1, (16, 1, 4, 4)).astype(np.float32)
    model = make_denoiser("mlp", (1, 4, 4))
    x, t = torch.as_tensor(images), torch.full((16,), 50)
    noise = torch.randn(x.shape, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        before = denoising_loss(model, scheduler, x, t, noise).mean()
    (model,) = train_ddpm(model, scheduler, images, 60, seed=0, batch_size=16)
    with torch.no_grad():
        assert denoising_loss(model, scheduler, x, t, noise).mean() < before
    weights = [p.clone() for p in model.parameters()]
    suspects = fine_tune(model, scheduler, images[:4], (3, 1), seed=1, lr=1e-3, batch_size=4)
    assert len(suspects) == 2 and all(torch.equal(a, b) for a, b in zip(weights, model.parameters(), strict=True))
    assert not torch.equal(next(suspects[0].parameters()), next(suspects[1].parameters()))


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: ddim_timesteps(1000, 10, 1000), "depth"),
        (lambda: ddim_timesteps(0, 1, 1000), "depth"),
        (lambda: ddim_timesteps(5, 6, 1000), "num_steps"),
        (lambda: make_denoiser("transformer", (1, 8, 8)), "kind"),
        (lambda: make_denoiser("mlp", (8, 8)), "image_shape"),
        (lambda: check_images("images", np.full((1, 1, 8, 8), 2.0)), "images"),
        (lambda: check_images("images", np.zeros((8, 8))), "images"),
        (lambda: check_images("images", np.full((1, 1, 8, 8), np.nan)), "images"),
        (lambda: check_images("images", np.zeros((1, 1, 4, 4)), make_denoiser("mlp", (1, 8, 8))), "images"),
    ],
)
def test_bad_inputs_name_the_argument(call, name):
    with pytest.raises(ValueError, match=f"{name}="):
        call()


def test_train_rejects_bad_steps_and_snapshots(scheduler):
    model, images = make_denoiser("mlp", (1, 4, 4)), np.zeros((2, 1, 4, 4), np.float32)
    with pytest.raises(ValueError, match="steps="):
        train_ddpm(model, scheduler, images, 0, seed=0)
    with pytest.raises(ValueError, match="snapshot_steps="):
        train_ddpm(model, scheduler, images, 2, seed=0, snapshot_steps=(3,))
    with pytest.raises(ValueError, match="lr="):
        train_ddpm(model, scheduler, images, 2, seed=0, lr=0.0)
    with pytest.raises(ValueError, match="steps="):
        fine_tune(model, scheduler, images, (), seed=0, lr=1e-3, batch_size=2)
