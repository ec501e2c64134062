"""The loss attack, the sigma = 0 ablation and the oracle: closed forms and bad inputs."""

import numpy as np
import pytest
import torch
from icml26_recover import denoising_error, inversion_error, inversion_robustness, loss_attack, reference_contrast


def test_loss_of_the_memorised_image_is_zero(scheduler, memoriser, x_star):
    y = torch.rand(1, 1, 8, 8, generator=torch.Generator().manual_seed(2)) * 2 - 1
    loss = denoising_error(memoriser, scheduler, torch.cat([x_star[None], y]), t=100, draws=4)
    assert loss[0] == pytest.approx(0.0, abs=1e-9) and loss[1] > 0
    abar = float(scheduler.alphas_cumprod[100])  # eps_theta - eps = sqrt(abar / (1 - abar)) (x - x*)
    assert loss[1] == pytest.approx(abar / (1 - abar) * float((y - x_star).pow(2).mean()), rel=1e-4)
    np.testing.assert_array_equal(
        loss_attack(memoriser, scheduler, y, draws=4), -denoising_error(memoriser, scheduler, y, draws=4)
    )


def test_oracle_of_a_model_with_itself_is_zero(scheduler, memoriser, x_star):
    np.testing.assert_allclose(reference_contrast(memoriser, memoriser, scheduler, x_star[None]), 0.0)


def test_inversion_error_is_recover_without_perturbation(scheduler, memoriser):
    images = torch.rand(2, 1, 8, 8, generator=torch.Generator().manual_seed(4)) * 2 - 1
    np.testing.assert_allclose(
        inversion_error(memoriser, scheduler, images, 300, 5),
        inversion_robustness(memoriser, scheduler, images, 300, 5, (0.0,), 1).score,
    )


@pytest.mark.parametrize(("kwargs", "name"), [({"t": 1000}, "t"), ({"t": -1}, "t"), ({"draws": 0}, "draws")])
def test_loss_attack_rejects_bad_arguments(scheduler, memoriser, x_star, kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        loss_attack(memoriser, scheduler, x_star[None], **kwargs)


def test_loss_attack_rejects_images_that_do_not_fit_the_model(scheduler, memoriser):
    with pytest.raises(ValueError, match="images="):
        loss_attack(memoriser, scheduler, torch.zeros(1, 3, 8, 8))


def test_loss_attack_of_an_image_does_not_depend_on_its_batch(scheduler, memoriser):
    """Issue 16.6, as for RECOVER: the loss attack's noise of image i comes from (seed, image id)."""
    y = torch.rand(5, 1, 8, 8, generator=torch.Generator().manual_seed(3)) * 2 - 1
    batch = denoising_error(memoriser, scheduler, y, draws=3, seed=2)
    alone = denoising_error(memoriser, scheduler, y[3:4], draws=3, seed=2, image_ids=[3])
    np.testing.assert_allclose(alone, batch[3:4], rtol=1e-4, atol=1e-6)
