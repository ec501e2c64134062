"""The weight-modifying baseline: it changes the released model, leaves the input alone, and decodes the image."""

import numpy as np
import pytest
import torch
from icml26_whispersplat import (
    hidden_image,
    hide_in_weights,
    orbit_camera,
    procedural_scene,
    psnr,
    render,
    ring_cameras,
)


@pytest.fixture(scope="module")
def hiding():
    cover = procedural_scene(300, np.random.default_rng(1))
    secret, ring = orbit_camera(0.0, 70.0, size=16), ring_cameras(4, size=16)
    hidden = hidden_image("coffee", 16)
    snapshot = cover.sh.clone()
    result = hide_in_weights(cover, secret, hidden, ring, steps=40)
    return cover, snapshot, secret, ring, hidden, result


def test_released_model_is_modified_and_the_input_is_not(hiding):
    cover, snapshot, secret, _, _, result = hiding
    assert torch.equal(cover.sh, snapshot)
    assert not torch.equal(result.model.sh, cover.sh)
    for name in ("means", "scales", "quats", "opacities"):  # only the SH features are fine-tuned
        assert getattr(result.model, name) is getattr(cover, name)
    assert psnr(render(result.model, secret), render(cover, secret)) < 60  # the cover view changed


def test_decoder_recovers_better_than_the_raw_render(hiding):
    cover, _, secret, _, hidden, result = hiding
    revealed = result.reveal()
    assert revealed.shape == hidden.shape
    assert psnr(revealed, hidden) > psnr(render(cover, secret), hidden) + 3


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"steps": 0}, "steps"),
        ({"lr": -1.0}, "lr"),
        ({"decoder_lr": 0.0}, "decoder_lr"),
        ({"cover_weight": 0.0}, "cover_weight"),
        ({"hidden": torch.rand(8, 8, 3)}, "hidden"),
    ],
)
def test_hide_in_weights_rejects_bad_values(hiding, kwargs, name):
    cover, _, secret, _, hidden, _ = hiding
    with pytest.raises(ValueError, match=f"{name}="):
        hide_in_weights(cover, secret, **({"hidden": hidden, "steps": 2} | kwargs))
