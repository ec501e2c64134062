"""RECOVER's score, perturbation, similarity and set-level test: closed forms, invariants, bad inputs."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_recover import auc, inversion_robustness, make_denoiser, perturb, set_level_test, similarity


@given(st.floats(0.0, 0.99))
def test_perturbation_preserves_unit_variance(sigma):
    gen = torch.Generator().manual_seed(0)
    x, z = torch.randn(20000, generator=gen), torch.randn(20000, generator=gen)
    assert abs(float(perturb(x, sigma, z).var()) - 1.0) < 0.05


def test_zero_perturbation_is_identity():
    x = torch.randn(4, 1, 8, 8)
    assert torch.equal(perturb(x, 0.0, torch.randn_like(x)), x)


def test_similarity_of_identical_images_is_maximal():
    x = torch.rand(3, 1, 8, 8) * 2 - 1
    np.testing.assert_allclose(similarity(x, x, "neg_mse"), 0.0)
    np.testing.assert_allclose(similarity(x, x, "ssim"), 1.0, atol=1e-6)
    y = x + 0.3 * torch.randn_like(x)
    assert (similarity(x, y, "neg_mse") < 0).all() and (similarity(x, y, "ssim") < 1).all()


def test_neg_mse_is_minus_mean_squared_error():
    x, y = torch.zeros(2, 1, 2, 2), torch.full((2, 1, 2, 2), 0.5)
    np.testing.assert_allclose(similarity(x, y), [-0.25, -0.25])


def test_memorised_image_is_perfectly_robust(scheduler, memoriser, x_star):
    """eq. RS with the exact memoriser of x*: x* comes back under every perturbation (RS = 0, the maximum);
    any other image y is mapped onto x*, so RS(y) = -MSE(y, x*)."""
    y = torch.rand(1, 1, 8, 8, generator=torch.Generator().manual_seed(5)) * 2 - 1
    images = torch.cat([x_star[None], y])
    rs = inversion_robustness(memoriser, scheduler, images, 600, 10, (0.0, 0.2, 0.5), 3, seed=1)
    np.testing.assert_allclose(rs.score[0], 0.0, atol=1e-8)
    np.testing.assert_allclose(rs.score[1], -float((y - x_star).pow(2).mean()), rtol=1e-4)
    assert rs.curve.shape == (2, 3) and rs.sigmas == (0.0, 0.2, 0.5)


def test_score_is_reproducible_from_its_seed(scheduler):
    torch.manual_seed(0)
    model = make_denoiser("mlp", (1, 4, 4)).eval()
    images = torch.rand(3, 1, 4, 4) * 2 - 1
    a = inversion_robustness(model, scheduler, images, 300, 3, (0.0, 0.3), 2, seed=7).score
    b = inversion_robustness(model, scheduler, images, 300, 3, (0.0, 0.3), 2, seed=7).score
    np.testing.assert_array_equal(a, b)


def test_score_of_an_image_does_not_depend_on_its_batch(scheduler):
    """Issue 16.6: image i's noise comes from (seed, image id), so its score is a property of the image."""
    torch.manual_seed(0)
    model = make_denoiser("mlp", (1, 4, 4)).eval()
    images = torch.rand(6, 1, 4, 4) * 2 - 1
    batch = inversion_robustness(model, scheduler, images, 300, 3, (0.0, 0.3), 2, seed=7)
    alone = inversion_robustness(model, scheduler, images[4:5], 300, 3, (0.0, 0.3), 2, seed=7, image_ids=[4])
    prefix = inversion_robustness(model, scheduler, images[:2], 300, 3, (0.0, 0.3), 2, seed=7)  # default ids 0, 1
    np.testing.assert_allclose(alone.curve, batch.curve[4:5], rtol=1e-4, atol=1e-6)  # batched matmul round-off only
    np.testing.assert_allclose(prefix.curve, batch.curve[:2], rtol=1e-4, atol=1e-6)  # batched matmul round-off only
    other = inversion_robustness(model, scheduler, images[4:5], 300, 3, (0.0, 0.3), 2, seed=7, image_ids=[5])
    assert abs(other.curve[0, 1] - alone.curve[0, 1]) > 1e-6  # another id draws other noise


@pytest.mark.parametrize("image_ids", [[0, 1], [0, 1, -2], [0.0, 1.0, 2.0]])
def test_recover_rejects_bad_image_ids(scheduler, memoriser, image_ids):
    images = torch.zeros(3, 1, 8, 8)
    with pytest.raises(ValueError, match="image_ids="):
        inversion_robustness(memoriser, scheduler, images, 300, 3, (0.0,), 1, image_ids=image_ids)


def test_set_level_test_rejects_a_shift_and_not_a_copy():
    rng = np.random.default_rng(0)
    reference = rng.normal(size=40)
    assert set_level_test(reference[:20] + 3.0, reference[20:]).used
    assert not set_level_test(reference[20:] - 3.0, reference[:20]).used  # one-sided: lower scores never flag


@given(st.lists(st.floats(-5, 5), min_size=2, max_size=15), st.lists(st.floats(-5, 5), min_size=2, max_size=15))
def test_auc_is_a_probability_and_antisymmetric(a, b):
    value = auc(a, b)
    assert 0 <= value <= 1 and np.isclose(value + auc(b, a), 1.0)
    assert 0 <= set_level_test(a, b).p_value <= 1


def test_auc_matches_the_pairwise_count():
    a, b = np.array([0.9, 0.4, 0.7]), np.array([0.5, 0.1])
    brute = np.mean([(x > y) + 0.5 * (x == y) for x in a for y in b])
    assert auc(a, b) == pytest.approx(brute)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"depth": 1000}, "depth"),
        ({"depth": 0}, "depth"),
        ({"num_steps": 0}, "num_steps"),
        ({"depth": 5, "num_steps": 6}, "num_steps"),
        ({"sigmas": (0.0, 1.0)}, "sigmas"),
        ({"sigmas": (-0.1,)}, "sigmas"),
        ({"sigmas": ()}, "sigmas"),
        ({"repeats": 0}, "repeats"),
        ({"metric": "lpips"}, "metric"),
    ],
)
def test_recover_rejects_bad_arguments(scheduler, memoriser, x_star, kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        inversion_robustness(memoriser, scheduler, x_star[None], **kwargs)


def test_recover_rejects_images_of_another_size_or_range(scheduler, memoriser):
    with pytest.raises(ValueError, match="images="):
        inversion_robustness(memoriser, scheduler, torch.zeros(2, 1, 4, 4))
    with pytest.raises(ValueError, match="images="):
        inversion_robustness(memoriser, scheduler, torch.full((2, 1, 8, 8), 3.0))


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: perturb(torch.zeros(2), 1.0, torch.zeros(2)), "sigma"),
        (lambda: similarity(torch.zeros(1, 1, 2, 2), torch.zeros(1, 1, 2, 2), "l1"), "metric"),
        (lambda: similarity(torch.zeros(1, 1, 2, 2), torch.zeros(1, 1, 3, 3)), "x_hat"),
        (lambda: set_level_test([1.0], [0.0, 1.0]), "suspect_scores"),
        (lambda: set_level_test([1.0, 2.0], []), "reference_scores"),
        (lambda: set_level_test([1.0, 2.0], [0.0, 1.0], alpha=1.0), "alpha"),
        (lambda: auc([], [0.5]), "member_scores"),
        (lambda: auc([0.5], [np.nan]), "nonmember_scores"),
    ],
)
def test_bad_inputs_name_the_argument(call, name):
    with pytest.raises(ValueError, match=f"{name}="):
        call()
