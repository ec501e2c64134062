import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_sateen import disrupt, occlude, patch_shuffle, pixel_shuffle, random_swap


def _patches(x, g):
    b, c, h, w = x.shape
    return x.reshape(b, c, g, h // g, g, w // g).permute(0, 2, 4, 1, 3, 5).reshape(b, g * g, -1)


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 4), st.sampled_from([1, 2, 4]), st.integers(0, 1000))
def test_patch_shuffle_permutes_whole_patches(b, g, seed):
    x = torch.rand(b, 2, 8, 8, generator=torch.Generator().manual_seed(seed))
    y = patch_shuffle(x, g, torch.Generator().manual_seed(seed))
    px, py = _patches(x, g), _patches(y, g)
    for i in range(b):  # every output patch is an input patch of the same sample, each used once
        match = (py[i][:, None, :] == px[i][None, :, :]).all(-1)
        assert match.any(1).all() and sorted(match.float().argmax(1).tolist()) == list(range(g * g))


def test_patch_len_one_is_identity_and_generator_makes_it_deterministic():
    x = torch.rand(3, 1, 8, 8)
    assert torch.equal(patch_shuffle(x, 1), x)
    a = patch_shuffle(x, 4, torch.Generator().manual_seed(1))
    assert torch.equal(a, patch_shuffle(x, 4, torch.Generator().manual_seed(1)))
    assert not torch.equal(a, patch_shuffle(x, 4, torch.Generator().manual_seed(2)))


def test_patch_shuffle_resizes_when_side_is_not_a_multiple():
    x = torch.rand(2, 1, 10, 10)
    assert patch_shuffle(x, 4, torch.Generator().manual_seed(0)).shape == x.shape


def test_pixel_shuffle_uses_one_permutation_for_the_batch():
    x = torch.rand(1, 1, 5, 5).repeat(3, 1, 1, 1)
    y = pixel_shuffle(x, torch.Generator().manual_seed(0))
    assert torch.equal(y[0], y[1]) and torch.equal(y[0].flatten().sort().values, x[0].flatten().sort().values)


def test_occlusion_window_holds_the_image_mean_and_nothing_else_changes():
    x = torch.rand(2, 3, 8, 8)
    y = occlude(x)
    mean = x.mean(dim=(2, 3))
    assert torch.allclose(y[:, :, 2:6, 2:6], mean[:, :, None, None].expand(-1, -1, 4, 4))
    mask = torch.ones(8, 8, dtype=torch.bool)
    mask[2:6, 2:6] = False
    assert torch.equal(y[:, :, mask], x[:, :, mask])


def test_random_swap_draws_images_of_the_batch():
    x = torch.arange(5.0).reshape(5, 1, 1, 1)
    y = random_swap(x, torch.Generator().manual_seed(0))
    assert set(y.flatten().tolist()) <= set(x.flatten().tolist())


@pytest.mark.parametrize("kind", ["patch", "pixel", "occ", "random", "random+patch"])
def test_every_view_keeps_the_shape(kind):
    x = torch.rand(4, 1, 8, 8)
    assert disrupt(x, kind, 4, torch.Generator().manual_seed(0)).shape == x.shape


def test_rejects_non_image_batch():
    with pytest.raises(ValueError, match="x="):
        disrupt(torch.rand(4, 8, 8))


def test_rejects_empty_batch():
    with pytest.raises(ValueError, match="x="):
        disrupt(torch.rand(0, 1, 8, 8))


def test_rejects_patch_len_larger_than_image():
    with pytest.raises(ValueError, match="patch_len="):
        patch_shuffle(torch.rand(1, 1, 8, 8), 9)


def test_rejects_unknown_kind():
    with pytest.raises(ValueError, match="kind=.*patch"):
        disrupt(torch.rand(1, 1, 8, 8), "rotate")
