"""The subject-agnostic voxel encoder and the contrastive loss."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_bit_llm.encoder import ContrastiveHead, VoxelEncoder, fourier_features, info_nce
from torch.nn import functional as F


def _encoder():
    torch.manual_seed(0)
    return VoxelEncoder(dim=16, n_tokens=4, heads=4, n_frequencies=3)


@given(n=st.integers(1, 40), seed=st.integers(0, 10_000))
def test_tokens_do_not_depend_on_voxel_order(n, seed):
    """Reordering voxels together with their coordinates leaves the fMRI tokens unchanged (any voxel count)."""
    g = torch.Generator().manual_seed(seed)
    fmri, coords = torch.randn(3, n, generator=g), torch.rand(n, 3, generator=g)
    perm = torch.randperm(n, generator=g)
    enc = _encoder()
    with torch.no_grad():
        torch.testing.assert_close(enc(fmri, coords), enc(fmri[:, perm], coords[perm]), rtol=1e-5, atol=1e-5)


def test_pooling_matches_a_brute_force_attention():
    """M_t = sum_i softmax(q K^T / sqrt(d))_ti (W_v v_i + b_v), before the token MLP, per head."""
    enc = _encoder()
    fmri, coords = torch.randn(2, 7), torch.rand(7, 3)
    with torch.no_grad():
        keys = enc.to_key(fourier_features(coords, 3))  # (n, d)
        values = enc.to_value(fmri[..., None])  # (b, n, d)
        expected = torch.zeros(2, 4, 16)
        for h in range(4):
            sl = slice(4 * h, 4 * h + 4)
            a = torch.softmax(enc.queries[:, sl] @ keys[:, sl].T / 2.0, dim=-1)  # (t, n)
            expected[..., sl] = a @ values[..., sl]
        torch.testing.assert_close(enc(fmri, coords), expected + enc.out(expected), rtol=1e-5, atol=1e-6)


def test_shuffled_values_change_the_tokens():
    enc = _encoder()
    fmri, coords = torch.randn(2, 30), torch.rand(30, 3)
    with torch.no_grad():
        assert not torch.allclose(enc(fmri, coords), enc(fmri[:, torch.randperm(30)], coords), atol=1e-4)


def test_info_nce_matches_its_formula():
    f, g = F.normalize(torch.randn(5, 8), dim=-1), F.normalize(torch.randn(5, 8), dim=-1)
    scale = torch.tensor(math.log(1 / 0.07))
    s = f @ g.T / 0.07
    expected = 0.5 * sum(-torch.log_softmax(s, 1)[i, i] - torch.log_softmax(s, 0)[i, i] for i in range(5)) / 5
    torch.testing.assert_close(info_nce(f, g, scale), expected, rtol=1e-4, atol=1e-5)
    assert ContrastiveHead(16, 8)(torch.randn(3, 4, 16)).norm(dim=-1).allclose(torch.ones(3))


@pytest.mark.parametrize(
    ("fmri", "coords", "name"),
    [
        (torch.randn(3), torch.rand(3, 3), "fmri"),  # wrong rank
        (torch.randn(2, 3, 1), torch.rand(3, 3), "fmri"),
        (torch.randn(2, 4), torch.rand(3, 3), "fmri"),  # count mismatch
        (torch.full((2, 3), float("nan")), torch.rand(3, 3), "fmri"),
        (torch.randn(2, 0), torch.rand(0, 3), "coords"),  # a subject with no voxels
        (torch.randn(2, 3), torch.rand(3, 2), "coords"),
    ],
)
def test_encoder_refuses_bad_inputs(fmri, coords, name):
    with pytest.raises(ValueError, match=f"{name}="):
        _encoder()(fmri, coords)


def test_encoder_refuses_bad_sizes():
    with pytest.raises(ValueError, match="heads="):
        VoxelEncoder(dim=10, heads=4)
    with pytest.raises(ValueError, match="n_tokens="):
        VoxelEncoder(n_tokens=0)
    assert np.isfinite(fourier_features(torch.rand(4, 3), 2).numpy()).all()
