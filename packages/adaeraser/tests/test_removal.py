"""The denoiser, the removal sampler and the baselines: invariants, equivalences and bad inputs."""

from functools import partial

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_adaeraser import (
    AdaptiveSuppression,
    DiT,
    FixedSuppression,
    HardSuppression,
    biharmonic_inpaint,
    make_scenes,
    remove_object,
    train_denoiser,
)
from icml26_adaeraser.denoiser import patchify, unpatchify


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    net = DiT(image_size=8, patch=2, dim=16, depth=2, heads=2)
    with torch.no_grad():
        for p in net.parameters():  # adaLN-Zero starts at zero: random weights make every layer matter
            p.normal_(0, 0.2)
    return net.eval()


@pytest.fixture(scope="module")
def scenes():
    return make_scenes(3, 8, np.random.default_rng(0))


@settings(deadline=None, max_examples=10)
@given(st.integers(0, 1000), st.sampled_from([1, 2, 4]))
def test_patchify_round_trip(seed, patch):
    x = torch.randn(2, 3, 8, 8, generator=torch.Generator().manual_seed(seed))
    tokens = patchify(x, patch)
    assert tokens.shape == (2, (8 // patch) ** 2, 3 * patch * patch)
    torch.testing.assert_close(unpatchify(tokens, 3, 8, patch), x)


def test_control_sees_every_layer_and_identity_control_changes_nothing(model):
    x = torch.randn(2, 3, 8, 8)
    seen = []

    def control(scores, layer):
        seen.append((layer, tuple(scores.shape)))
        return scores

    torch.testing.assert_close(model(x, 10, control), model(x, 10))
    assert seen == [(0, (2, 2, 16, 16)), (1, (2, 2, 16, 16))]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_zero_suppression_is_the_unedited_dit_bit_for_bit(model, dtype):
    """Issue 27: lambda = 0 went through the explicit-scores attention while no control used SDPA (2.4e-6 apart
    in float32); an edit of zero now returns None and takes the very same fused call as no control."""
    net = model.to(dtype)
    x = torch.randn(6, 3, 8, 8, generator=torch.Generator().manual_seed(0), dtype=dtype)
    mask = torch.zeros(2, 16)
    mask[:, 5:9] = 1
    t = torch.tensor([10, 500, 990, 10, 500, 990])
    plain = {n: net(x[:n], t[:n]) for n in (4, 6)}  # each batch size its own reference (GEMMs may depend on it)
    zero = [
        FixedSuppression(mask, strength=0.0),
        FixedSuppression(mask, strength=0.0, ss_steps=3, ss_scale=1.0),
        AdaptiveSuppression(mask, lambda_max=0.0, ss_steps=3, ss_scale=0.5),
        HardSuppression(mask, layers=[]),
    ]
    zero[2].step = 3  # after the similarity-suppression steps
    for control in zero:
        batch = x if control.branches == 3 else x[:4]
        assert torch.equal(net(batch, t[: len(batch)], control), plain[len(batch)])
    assert not torch.equal(net(x[:4], t[:4], FixedSuppression(mask, strength=1e-3)), plain[4])
    model.float()


def test_outside_of_the_mask_is_the_source(model, scenes):
    out = remove_object(model, scenes.image, scenes.mask, partial(HardSuppression), steps=5)
    outside = scenes.mask[:, None] == 0
    np.testing.assert_allclose(np.where(outside, out.image, 0), np.where(outside, scenes.image, 0), atol=1e-6)
    assert len(out.trace) == 4 * 2 and all(v == 1.0 for _, _, v in out.trace)  # 4 steps x 2 layers, lambda = 1


def test_zero_strength_control_equals_no_suppression_at_any_guidance(model, scenes):
    """SARG with an unedited branch is the plain sampler: eps_plain + w (eps_plain - eps_plain)."""
    plain = remove_object(model, scenes.image, scenes.mask, None, steps=5, seed=3)
    for w in (1.0, 4.0):
        zero = remove_object(model, scenes.image, scenes.mask, partial(FixedSuppression, strength=0.0), 0.8, 5, w, 3)
        np.testing.assert_allclose(zero.image, plain.image, atol=1e-4)
        ada = remove_object(
            model, scenes.image, scenes.mask, partial(AdaptiveSuppression, lambda_max=0.0), 0.8, 5, w, 3
        )
        np.testing.assert_allclose(ada.image, plain.image, atol=1e-4)


def test_suppression_changes_the_masked_region(model, scenes):
    plain = remove_object(model, scenes.image, scenes.mask, None, steps=5)
    hard = remove_object(model, scenes.image, scenes.mask, HardSuppression, steps=5)
    assert np.abs(plain.image - hard.image).max() > 1e-3
    again = remove_object(model, scenes.image, scenes.mask, HardSuppression, steps=5)
    np.testing.assert_array_equal(hard.image, again.image)  # deterministic given the seed


def test_training_lowers_the_loss():
    torch.manual_seed(0)
    net = DiT(image_size=8, dim=16, depth=1, heads=2)
    losses = train_denoiser(net, lambda rng, n: make_scenes(n, 8, rng).image, 30, 0, batch_size=8)
    assert np.mean(losses[-10:]) < np.mean(losses[:5])


def test_biharmonic_keeps_the_outside_and_fills_constants():
    image = np.full((1, 3, 8, 8), 0.3, dtype=np.float32)
    mask = np.zeros((1, 8, 8), dtype=np.float32)
    mask[0, 2:5, 3:6] = 1
    corrupted = image.copy()
    corrupted[:, :, 2:5, 3:6] = -0.9
    np.testing.assert_allclose(biharmonic_inpaint(corrupted, mask), image, atol=1e-6)
    with pytest.raises(ValueError, match="mask="):
        biharmonic_inpaint(corrupted, mask[:, :4])


def _bad_mask(kind, scenes):
    mask = scenes.mask.copy()
    if kind == "size":
        return mask[:, :4]
    if kind == "empty":
        mask[1] = 0
    elif kind == "full":
        mask[0] = 1
    else:
        mask[0, 0, 0] = 0.5
    return mask


@pytest.mark.parametrize("kind", ["size", "empty", "full", "binary"])
def test_bad_masks(model, scenes, kind):
    with pytest.raises(ValueError, match="mask="):
        remove_object(model, scenes.image, _bad_mask(kind, scenes), None, steps=2)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"strength": 0.0}, "strength"),
        ({"strength": 1.5}, "strength"),
        ({"strength": 0.1, "steps": 5}, "strength"),
        ({"steps": 0}, "steps"),
        ({"steps": 1001}, "steps"),
        ({"guidance": 0.0}, "guidance"),
    ],
)
def test_bad_sampler_arguments(model, scenes, kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        remove_object(model, scenes.image, scenes.mask, None, **kwargs)


def test_bad_images_and_model_inputs(model, scenes):
    with pytest.raises(ValueError, match="image="):
        remove_object(model, scenes.image * 2, scenes.mask)
    nan = scenes.image.copy()
    nan[0, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="image="):
        remove_object(model, nan, scenes.mask)
    with pytest.raises(ValueError, match="image="):
        remove_object(model, scenes.image[:, :, :4, :4], scenes.mask[:, :4, :4])
    with pytest.raises(ValueError, match="t="):
        model(torch.zeros(1, 3, 8, 8), 1000)  # outside the schedule [0, 999]
    with pytest.raises(ValueError, match="x="):
        model(torch.zeros(1, 3, 4, 4), 10)
    with pytest.raises(ValueError, match="patch="):
        DiT(image_size=8, patch=3)
