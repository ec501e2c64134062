"""Tokens, patch order, question labels against a direct recomputation from the scene."""

import numpy as np
import pytest
from icml26_v2v_ccm import CHANNELS, make_dataset, patch_centres, patch_tokens


def test_patch_tokens_order_matches_centres():
    raster = np.zeros((len(CHANNELS), 8, 8), dtype=np.uint8)
    raster[2, 5, 1] = 1  # a car at cell x=5, y=1
    tokens = patch_tokens(raster, 4)
    i = np.flatnonzero(tokens.any(1))
    assert i.tolist() == [2] and patch_centres(8, 4)[2].tolist() == [6.0, 2.0]


def test_dataset_shapes_and_labels():
    data = make_dataset(30, seed=0, grid=16, patch=4, lidar_range=10.0)
    assert data.tokens.shape == (30, 3, 16, len(CHANNELS) * 16)
    assert data.coverage.shape == (30, 3, 16) and ((0 <= data.coverage) & (data.coverage <= 1)).all()
    assert data.answer[:, :2].max() <= 3 and data.answer[:, 2].max() <= 3 and data.answer.max() <= 4
    centres = patch_centres(16, 4)
    for s in range(30):  # occluded: the referenced patch is (mostly) unseen by the ego
        i = np.flatnonzero((centres == data.ref[s, 1]).all(1))[0]
        assert data.coverage[s, 0, i] < 0.25 or (data.coverage[s, 0] >= 0.25).all()
        # what any agent sees there agrees with the label (never a different class)
        seen = data.tokens[s, :, i].reshape(3, len(CHANNELS), 16)[:, 2:].max(axis=(0, 2))
        assert seen.sum() <= 1 and (seen.sum() == 0 or data.answer[s, 1] == 1 + seen.argmax())


def test_cooperation_reveals_what_the_ego_misses():
    data = make_dataset(40, seed=2, grid=16, patch=4, lidar_range=10.0)
    assert data.coverage[:, 1:].max(1).mean() > data.coverage[:, 0].mean() + 0.1


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"n_scenes": 0}, "n_scenes"),
        ({"n_agents": 1}, "n_agents"),
        ({"lidar_range": -1.0}, "lidar_range"),
        ({"patch": 5}, "patch"),
    ],
)
def test_make_dataset_rejects_bad_arguments(kwargs, name):
    args = {"n_scenes": 2, "seed": 0, "grid": 16, "patch": 4} | kwargs
    with pytest.raises(ValueError, match=f"{name}="):
        make_dataset(**args)
