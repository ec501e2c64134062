"""The creator's pool is held out of pre-training; splits are disjoint, seeded and validated."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_recover.data import creator_pool, load_digits_images, load_fashion_images, protection_split, to_unit_range
from icml26_shared.datasets import FASHION_DIR


def test_digits_are_real_images_in_the_ddpm_range():
    images, labels = load_digits_images()
    assert images.shape == (1797, 1, 8, 8) and images.dtype == np.float32
    assert images.min() == -1.0 and images.max() == 1.0 and set(labels.tolist()) == set(range(10))


def test_to_unit_range_maps_the_ends():
    np.testing.assert_allclose(to_unit_range(np.array([0.0, 8.0, 16.0]), 16.0), [-1.0, 0.0, 1.0])


@given(st.integers(0, 1000))
def test_split_is_disjoint_and_holds_the_pool_out(seed):
    labels = np.repeat(np.arange(3), 20)
    images = np.arange(60, dtype=np.float32).reshape(60, 1, 1, 1)  # pixel value = index
    split = protection_split(images, labels, 1, (4, 5, 6), seed)
    parts = [split.protected, split.reference, split.query]
    ids = [set(p.ravel().astype(int).tolist()) for p in parts]
    assert [len(i) for i in ids] == [4, 5, 6] and not (ids[0] & ids[1] or ids[0] & ids[2] or ids[1] & ids[2])
    pool = set(creator_pool(labels, 1, 15).tolist())
    assert set().union(*ids) == pool and not pool & set(split.pretrain.ravel().astype(int).tolist())
    assert len(split.pretrain) == 45


def test_split_depends_on_the_seed_only_through_the_draw():
    labels = np.repeat(np.arange(2), 30)
    images = np.arange(60, dtype=np.float32).reshape(60, 1, 1, 1)
    a, b = protection_split(images, labels, 0, (5, 5, 5), 1), protection_split(images, labels, 0, (5, 5, 5), 2)
    np.testing.assert_array_equal(a.pretrain, b.pretrain)
    assert not np.array_equal(a.protected, b.protected)


@pytest.mark.parametrize(
    ("args", "name"),
    [
        ((9, (2, 2, 2)), "target_class"),
        ((0, (10, 10, 11)), "pool_size"),
        ((0, (1, 2, 2)), "n_protected"),
        ((0, (2, 2, 0)), "n_query"),
    ],
)
def test_bad_splits_name_the_argument(args, name):
    labels = np.repeat(np.arange(2), 30)
    with pytest.raises(ValueError, match=f"{name}="):
        protection_split(np.zeros((60, 1, 2, 2)), labels, *args, seed=0)


@pytest.mark.slow
@pytest.mark.skipif(not FASHION_DIR.is_dir(), reason="apt-get install dataset-fashion-mnist")
def test_fashion_images_for_the_paper_config():
    images, labels = load_fashion_images(500)
    assert images.shape == (500, 1, 28, 28) and images.min() == -1.0 and images.max() == 1.0
    assert set(labels.tolist()) == set(range(10))


def test_fashion_loader_rejects_bad_sizes():
    with pytest.raises(ValueError, match="n_train="):
        load_fashion_images(0)
