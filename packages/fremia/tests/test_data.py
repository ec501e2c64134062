"""The seeded member / hold-out split and the image pipeline."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_fremia import member_split
from icml26_fremia.data import downsample, fashion_mnist_images


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 300), st.data(), st.integers(0, 1000))
def test_split_is_disjoint_sized_and_reproducible(n, data, seed):
    n_members = data.draw(st.integers(1, n - 1))
    n_holdout = data.draw(st.integers(1, n - n_members))
    members, holdouts = member_split(n, n_members, n_holdout, seed)
    assert len(members) == n_members and len(holdouts) == n_holdout
    assert not set(members) & set(holdouts) and set(members) | set(holdouts) <= set(range(n))
    again = member_split(n, n_members, n_holdout, seed)
    assert (again[0] == members).all() and (again[1] == holdouts).all()


def test_seeds_give_different_splits():
    assert not (member_split(1000, 100, 100, 0)[0] == member_split(1000, 100, 100, 1)[0]).all()


def test_downsample_pads_and_averages():
    images = np.random.default_rng(0).random((3, 28, 28)).astype(np.float32)
    small = downsample(images, 16)
    assert small.shape == (3, 16, 16)
    np.testing.assert_allclose(small.sum((1, 2)) * 4, images.sum((1, 2)), rtol=1e-5)  # 2 x 2 means of a padded image
    np.testing.assert_allclose(downsample(np.ones((1, 8, 8)), 4), np.ones((1, 4, 4)))


def test_fashion_mnist_images_are_real_and_in_range():
    images = fashion_mnist_images(50)
    assert images.shape == (50, 1, 16, 16) and images.dtype == np.float32
    assert images.min() >= 0 and images.max() <= 1 and images.std() > 0.1


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: member_split(10, 6, 5, 0), "n_members \\+ n_holdout=11"),
        (lambda: member_split(10, 0, 5, 0), "n_members=0"),
        (lambda: member_split(10, 5, 0, 0), "n_holdout=0"),
        (lambda: member_split(10, 5, 5, -1), "seed=-1"),
        (lambda: downsample(np.ones((8, 8)), 4), "images="),
        (lambda: downsample(np.ones((1, 8, 8)), 1), "size=1"),
        (lambda: fashion_mnist_images(70000), "n_images=70000"),
    ],
)
def test_bad_inputs_name_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()
