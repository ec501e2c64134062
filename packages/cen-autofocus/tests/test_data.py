"""Scenes: the scikit-image photographs and the generated textures."""

import numpy as np
import pytest
from icml26_cen_autofocus import SCENES, scene
from icml26_cen_autofocus.data import HIGH, LOW


@pytest.mark.parametrize("name", SCENES)
def test_scene_is_a_full_contrast_crop(name):
    image = scene(name, 40, np.random.default_rng(0))
    assert image.shape == (40, 40)
    assert image.min() == pytest.approx(LOW) and image.max() == pytest.approx(HIGH)


def test_scene_is_reproducible_and_varies_with_the_seed():
    a = scene("camera", 32, np.random.default_rng(1))
    np.testing.assert_array_equal(a, scene("camera", 32, np.random.default_rng(1)))
    assert not np.array_equal(a, scene("camera", 32, np.random.default_rng(2)))


def test_bad_scene_arguments():
    with pytest.raises(ValueError, match="^name="):
        scene("lena", 32, np.random.default_rng(0))
    with pytest.raises(ValueError, match="^size="):
        scene("camera", 8, np.random.default_rng(0))
    with pytest.raises(ValueError, match="^size="):
        scene("text", 200, np.random.default_rng(0))
