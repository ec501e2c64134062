import numpy as np
import pytest
import torch
from icml26_diffusion_info import VPSchedule
from icml26_diffusion_info.baselines import cfg_sample
from icml26_diffusion_info.networks import (
    EntropyMatchingMLP,
    entropy_matching_loss,
    model_scores,
    train_entropy_matching,
)

S = VPSchedule()


def test_untrained_model_is_the_equilibrium_score():
    model = EntropyMatchingMLP(4, 3, S, width=16)
    x = np.random.default_rng(0).standard_normal((5, 4))
    s_cond, s_uncond = model_scores(model)(x, 0.5, np.array([0, 1, 2, 0, 1]))
    assert np.allclose(s_cond, -x, atol=1e-6) and np.allclose(s_uncond, -x, atol=1e-6)


def test_loss_at_the_exact_score_is_the_gaussian_floor():
    # data N(0, I) = equilibrium: the exact e is 0, so the loss is E||(-x_t) std + z||^2 = D (1 - mu^2) ... < D
    model = EntropyMatchingMLP(3, 2, S, width=8)
    generator = torch.Generator().manual_seed(0)
    x0 = torch.randn(20000, 3, generator=generator)
    loss = entropy_matching_loss(model, x0, torch.zeros(20000, dtype=torch.long), 1e-5, generator)
    # E||z - std x_t||^2 = D (1 + std^2 - 2 std^2) = D mu^2, averaged over t ~ U[0, 1]
    t = np.linspace(1e-5, 1, 10001)
    assert np.isclose(float(loss.detach()), 3 * np.mean(S.mu(t) ** 2), rtol=0.05)


def test_training_lowers_the_loss_and_learns_the_class_means():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 512)
    x = np.where(labels[:, None] == 0, -2.0, 2.0) + 0.1 * rng.standard_normal((512, 2))
    model = train_entropy_matching(x, labels, 2, S, seed=0, steps=300, width=32, batch_size=64)
    samples = cfg_sample(model, np.array([0] * 20 + [1] * 20), w=1.0, seed=1, steps=50)
    assert samples[:20].mean() < -1.0 and samples[20:].mean() > 1.0


def test_model_rejects_wrong_shapes():
    model = EntropyMatchingMLP(4, 3, S, width=8)
    with pytest.raises(ValueError, match="x="):
        model(torch.zeros(2, 5), torch.zeros(2), torch.zeros(2, dtype=torch.long))
    with pytest.raises(ValueError, match="c="):
        model(torch.zeros(2, 4), torch.zeros(2), torch.zeros(3, dtype=torch.long))


def test_training_rejects_bad_labels_and_dropout():
    x = np.zeros((4, 2))
    with pytest.raises(ValueError, match="labels="):
        train_entropy_matching(x, np.array([0, 1, 2, 5]), 3, S, seed=0, steps=1)
    with pytest.raises(ValueError, match="p_uncond="):
        train_entropy_matching(x, np.array([0, 1, 2, 0]), 3, S, seed=0, steps=1, p_uncond=1.5)


def test_sampler_rejects_bad_arguments():
    model = EntropyMatchingMLP(2, 2, S, width=8)
    with pytest.raises(ValueError, match="labels="):
        cfg_sample(model, np.array([0, 2]), w=1.0, seed=0)
    with pytest.raises(ValueError, match="interval="):
        cfg_sample(model, np.array([0, 1]), w=1.0, seed=0, interval=(0.5, 1.5))
    with pytest.raises(ValueError, match="interval="):
        cfg_sample(model, np.array([0, 1]), w=1.0, seed=0, interval=(0.5, 0.2))
    with pytest.raises(ValueError, match="steps="):
        cfg_sample(model, np.array([0, 1]), w=1.0, seed=0, steps=0)


def test_guidance_outside_its_interval_is_the_conditional_sampler():
    model = EntropyMatchingMLP(2, 2, S, width=8)
    torch.nn.init.normal_(model.out.weight)  # a non-trivial model
    labels = np.array([0, 1, 1])
    plain = cfg_sample(model, labels, w=1.0, seed=3, steps=20)
    empty = cfg_sample(model, labels, w=5.0, seed=3, steps=20, interval=(0.0, 1e-4))  # below eps: never applied
    guided = cfg_sample(model, labels, w=5.0, seed=3, steps=20)
    assert np.allclose(plain, empty) and not np.allclose(plain, guided)
