"""The DiT: its fused and explicit attention paths, dtypes, and the diffusers schedule it trains on."""

import math

import torch
from icml26_adaeraser import DiT
from icml26_adaeraser.denoiser import BETA_1, BETA_T, SelfAttention, T, ddpm_scheduler, timestep_embedding


def test_fused_attention_equals_the_explicit_scores_path():
    """Issue 19: without a control the layer uses scaled_dot_product_attention; an identity control takes the
    explicit ``softmax(Q K^T / sqrt(d)) V`` path. Both agree to float64 round-off."""
    torch.manual_seed(0)
    layer = SelfAttention(16, 4, 0).double()
    x = torch.randn(3, 10, 16, dtype=torch.float64)
    torch.testing.assert_close(layer(x), layer(x, lambda scores, _: scores), rtol=1e-12, atol=1e-12)


def test_dit_runs_in_float64_and_agrees_with_float32():
    """Issue 16.13: the timestep embedding follows the module's dtype (it was hard-coded float32)."""
    torch.manual_seed(0)
    model = DiT(image_size=8, dim=16, depth=2, heads=2)
    for p in model.parameters():  # adaLN-Zero starts at zero: perturb so that every path carries signal
        torch.nn.init.normal_(p, std=0.1)
    x = torch.rand(2, 3, 8, 8) * 2 - 1
    t = torch.tensor([3, 700])
    out64 = model.double()(x.double(), t)
    assert out64.dtype == torch.float64
    torch.testing.assert_close(model.float()(x, t), out64.float(), rtol=1e-4, atol=1e-5)


def test_timestep_embedding_is_the_sinusoid_formula():
    t, dim = torch.tensor([0, 1, 17, 999]), 8
    w = torch.exp(-math.log(10000.0) * torch.arange(dim // 2, dtype=torch.float32) / (dim // 2))
    angles = t.float()[:, None] * w[None]
    assert torch.equal(timestep_embedding(t, dim), torch.cat([angles.cos(), angles.sin()], dim=1))


def test_training_and_sampling_share_one_schedule():
    from diffusers import DDIMScheduler

    sampler = DDIMScheduler(num_train_timesteps=T, beta_start=BETA_1, beta_end=BETA_T, beta_schedule="linear")
    assert torch.equal(ddpm_scheduler().alphas_cumprod, sampler.alphas_cumprod)
    x0, eps, t = torch.rand(4, 3, 2, 2), torch.randn(4, 3, 2, 2), torch.tensor([0, 1, 500, 999])
    a = sampler.alphas_cumprod[t][:, None, None, None]
    torch.testing.assert_close(ddpm_scheduler().add_noise(x0, eps, t), a.sqrt() * x0 + (1 - a).sqrt() * eps)
