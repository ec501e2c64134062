"""The miniature's sampler: DDIM equals diffusers' DDIMScheduler, rows are independent, CFG limits."""

import numpy as np
import pytest
import torch
from icml26_diffusion_geometry.data import class_conditions
from icml26_diffusion_geometry.model import (
    DDIMGenerator,
    EpsilonNet,
    alphas_cumprod,
    ddim_timesteps,
    train_epsilon_net,
)


def _model(seed=0):
    torch.manual_seed(seed)
    return EpsilonNet(64, 10, hidden=32).double().eval()


def test_ddim_matches_diffusers_ddim_scheduler():
    from diffusers.schedulers.scheduling_ddim import DDIMScheduler

    model = _model()
    scheduler = DDIMScheduler(
        num_train_timesteps=1000,
        beta_start=1e-4,
        beta_end=0.02,
        beta_schedule="linear",
        clip_sample=False,
        set_alpha_to_one=True,
        timestep_spacing="leading",
    )
    scheduler.set_timesteps(7)
    assert [int(t) for t in scheduler.timesteps] == ddim_timesteps(7)
    z = torch.randn(3, 1, 8, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    c = class_conditions(np.array([1, 4, 9]))
    x = z.clone()
    with torch.no_grad():
        for t in scheduler.timesteps:
            tt = torch.full((6,), float(t), dtype=torch.float64)
            eps_u, eps_c = model(torch.cat([x, x]), tt, torch.cat([torch.zeros_like(c), c])).chunk(2)
            x = scheduler.step(eps_u + 2.0 * (eps_c - eps_u), int(t), x, eta=0.0).prev_sample
        ours = DDIMGenerator(model, steps=7, guidance=2.0)(z, c)
    torch.testing.assert_close(ours, x, rtol=1e-5, atol=1e-5)  # diffusers keeps the schedule in float32


def test_generator_rows_are_independent_and_guidance_one_is_the_conditional_model():
    model = _model(1)
    z = torch.randn(4, 1, 8, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    c = class_conditions(np.array([0, 3, 3, 7]))
    F = DDIMGenerator(model, steps=5, guidance=3.0)
    with torch.no_grad():
        batch = F(z, c)
        for i in range(4):
            torch.testing.assert_close(F(z[i : i + 1], c[i : i + 1]), batch[i : i + 1], rtol=1e-12, atol=1e-12)
        plain = z
        abar = alphas_cumprod()
        for k, t in enumerate(ddim_timesteps(5)):
            eps = model(plain, torch.full((4,), float(t), dtype=torch.float64), c)
            a_prev = abar[ddim_timesteps(5)[k + 1]] if k + 1 < 5 else torch.tensor(1.0, dtype=torch.float64)
            x0 = (plain - (1 - abar[t]).sqrt() * eps) / abar[t].sqrt()
            plain = a_prev.sqrt() * x0 + (1 - a_prev).sqrt() * eps
        torch.testing.assert_close(DDIMGenerator(model, steps=5, guidance=1.0)(z, c), plain, rtol=1e-10, atol=1e-10)


def test_training_lowers_the_denoising_loss():
    images = torch.rand(64, 1, 8, 8) * 2 - 1
    labels = torch.arange(64) % 10
    torch.manual_seed(0)
    before = EpsilonNet(64, 10, hidden=32)
    after = train_epsilon_net(images, labels, 150, seed=0, hidden=32, batch_size=64)
    abar = alphas_cumprod(dtype=torch.float32)
    gen = torch.Generator().manual_seed(5)
    t = torch.randint(0, 1000, (512,), generator=gen)
    x0 = images[torch.randint(0, 64, (512,), generator=gen)]
    noise = torch.randn(x0.shape, generator=gen)
    a = abar[t].view(-1, 1, 1, 1)
    c = torch.nn.functional.one_hot(torch.zeros(512, dtype=torch.int64), 10).float()
    with torch.no_grad():
        losses = [
            float((m(a.sqrt() * x0 + (1 - a).sqrt() * noise, t.float(), c) - noise).pow(2).mean())
            for m in (before, after)
        ]
    assert losses[1] < 0.8 * losses[0]


def test_rejects_bad_sampler_arguments():
    model = _model()
    with pytest.raises(ValueError, match="steps="):
        DDIMGenerator(model, steps=0)
    with pytest.raises(ValueError, match="steps="):
        ddim_timesteps(1001)
    with pytest.raises(ValueError, match="guidance="):
        DDIMGenerator(model, guidance=float("inf"))
    with pytest.raises(ValueError, match="c="):
        DDIMGenerator(model, steps=2)(torch.zeros(2, 1, 8, 8, dtype=torch.float64), torch.zeros(2, 9))
    with pytest.raises(ValueError, match="steps="):
        train_epsilon_net(torch.zeros(4, 1, 8, 8), torch.zeros(4, dtype=torch.int64), 0, seed=0)
