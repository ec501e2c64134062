"""The texture-biased domains."""

import numpy as np
import pytest
from icml26_do_prompt import environments, few_shot, load_foregrounds, render
from icml26_do_prompt.data import N_ENVIRONMENTS, TEXTURES, shift
from icml26_shared.datasets import FASHION_DIR

BASE = (0, 1, 2, 3, 4)


def test_digits_foregrounds():
    X, y = load_foregrounds("digits")
    assert X.shape == (1797, 16, 16) and X.min() >= 0 and X.max() <= 1 and set(y) == set(range(10))


def test_textures_are_distinct():
    flat = TEXTURES.reshape(N_ENVIRONMENTS, -1)
    distances = np.linalg.norm(flat[:, None] - flat[None], axis=-1)
    assert distances[~np.eye(N_ENVIRONMENTS, dtype=bool)].min() > 1.0


def test_shift_is_a_derangement_within_each_group():
    mapped = shift(np.arange(10), BASE)
    assert (mapped != np.arange(10)).all()
    assert set(mapped[:5]) == set(BASE) and set(mapped[5:]) == set(range(5, 10))


@pytest.mark.parametrize("rho", [0.9, 0.95])
def test_domains_have_the_stated_correlation(rho):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 10, 40_000)
    assert abs((environments(y, "source", rho, BASE, rng) == y).mean() - rho) < 0.01
    shifted = environments(y, "shifted", rho, BASE, rng)
    assert abs((shifted == shift(y, BASE)).mean() - rho) < 0.01 and (shifted == y).mean() < 0.02
    balanced = environments(y, "balanced", rho, BASE, rng)
    assert abs((balanced == y).mean() - 0.1) < 0.01


def test_render_composites_into_the_unit_range():
    X, _ = load_foregrounds("digits", 20)
    images = render(X, np.arange(20) % 10, contrast=0.4)
    assert images.shape == (20, 3, 16, 16) and images.dtype == np.float32
    assert images.min() >= 0 and images.max() <= 1
    np.testing.assert_allclose(render(np.zeros((1, 16, 16)), np.array([3]))[0], TEXTURES[3], atol=1e-6)


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda: render(np.zeros((2, 8, 8)), np.zeros(2, int)), "foregrounds"),
        (lambda: render(np.full((2, 16, 16), 2.0), np.zeros(2, int)), "foregrounds"),
        (lambda: render(np.zeros((2, 16, 16)), np.array([0, 10])), "environments"),
        (lambda: render(np.zeros((2, 16, 16)), np.zeros(2, int), contrast=0.0), "contrast"),
        (lambda: environments(np.zeros(3, int), "target", 0.9, BASE, np.random.default_rng()), "domain"),
        (lambda: environments(np.zeros(3, int), "source", 1.5, BASE, np.random.default_rng()), "rho"),
        (lambda: few_shot(np.array([0, 0, 1]), (0, 2), 1, np.random.default_rng()), "shots"),  # class 2: none
        (lambda: few_shot(np.array([0, 1]), (0, 1), 0, np.random.default_rng()), "shots"),
        (lambda: load_foregrounds("cifar"), "dataset"),
    ],
)
def test_bad_inputs(call, named):
    with pytest.raises(ValueError, match=f"^{named}="):
        call()


def test_few_shot_draws_k_per_class():
    y = np.repeat(np.arange(5), 30)
    picked = few_shot(y, (1, 3), 16, np.random.default_rng(0))
    assert len(picked) == 32 and (np.bincount(y[picked], minlength=5) == [0, 16, 0, 16, 0]).all()


@pytest.mark.skipif(not FASHION_DIR.is_dir(), reason="Debian's dataset-fashion-mnist is not installed")
def test_fashion_foregrounds_are_pooled_to_16x16():
    X, y = load_foregrounds("fashion", 50)
    assert X.shape == (50, 16, 16) and X.min() >= 0 and X.max() <= 1 and len(y) == 50
