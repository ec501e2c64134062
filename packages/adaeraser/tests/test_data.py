"""Procedural scenes: shapes, ranges, the known background, object sizes and masks."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_adaeraser import make_scenes
from icml26_adaeraser.data import OBJECT_AREA, dilate


@settings(deadline=None, max_examples=25)
@given(st.integers(0, 10_000), st.sampled_from([8, 16, 24]))
def test_scenes_are_consistent(seed, size):
    s = make_scenes(5, size, np.random.default_rng(seed))
    assert s.image.shape == s.background.shape == (5, 3, size, size)
    assert s.mask.shape == s.object_mask.shape == (5, size, size)
    assert s.image.min() >= -1 and s.image.max() <= 1
    outside = s.object_mask[:, None] == 0
    np.testing.assert_array_equal(np.where(outside, s.image, 0), np.where(outside, s.background, 0))
    inside = np.broadcast_to(s.object_color[:, :, None, None], s.image.shape)
    np.testing.assert_allclose(np.where(outside, 0, s.image), np.where(outside, 0, inside))
    assert (s.mask >= s.object_mask).all()  # the removal mask covers the object
    area = s.object_mask.mean((1, 2))
    assert (area > OBJECT_AREA[0] / 2).all() and (area < OBJECT_AREA[1] * 1.6).all()  # pixelised disks/squares


def test_object_free_scenes_are_their_background():
    s = make_scenes(4, 16, np.random.default_rng(0), object_rate=0.0)
    np.testing.assert_array_equal(s.image, s.background)
    assert s.mask.sum() == 0


def test_dilation_grows_a_pixel_into_a_square():
    mask = np.zeros((1, 5, 5), dtype=np.float32)
    mask[0, 2, 2] = 1
    assert dilate(mask, 1)[0].sum() == 9 and dilate(mask, 0)[0].sum() == 1 and dilate(mask, 2)[0].sum() == 25


def test_bad_scene_arguments():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="object_rate="):
        make_scenes(2, 16, rng, object_rate=1.5)
    with pytest.raises(ValueError, match="size="):
        make_scenes(2, 4, rng)
    with pytest.raises(ValueError, match="n="):
        make_scenes(0, 16, rng)
