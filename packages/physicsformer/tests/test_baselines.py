"""Persistence, DLinear (decomposition against numpy), PatchTST (channel independence, RevIN) and the
Transformer alone."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_physicsformer import DLinear, PatchTST, Persistence, RevIN, TransformerOnly, moving_average


def test_persistence_repeats_the_last_value():
    x = torch.randn(3, 8, 2, 6)
    y = Persistence(5)(x)
    assert y.shape == (3, 5, 2, 6) and torch.equal(y, x[:, -1:].expand(-1, 5, -1, -1))


@given(st.integers(0, 1000), st.sampled_from([1, 3, 5, 25]), st.integers(5, 40))
def test_moving_average_matches_numpy_with_edge_padding(seed, kernel, L):
    x = np.random.default_rng(seed).normal(size=(L,))
    pad = (kernel - 1) // 2
    padded = np.concatenate([np.full(pad, x[0]), x, np.full(pad, x[-1])])
    expected = np.convolve(padded, np.ones(kernel) / kernel, mode="valid")
    got = moving_average(torch.tensor(x)[None, :, None], kernel)[0, :, 0].numpy()
    np.testing.assert_allclose(got, expected, atol=1e-10)


def test_dlinear_is_the_sum_of_its_two_linear_heads():
    model = DLinear(24, 6, kernel=5).double()
    x = torch.randn(2, 24, 3, 2, dtype=torch.float64)
    series = x.reshape(2, 24, 6)
    trend = moving_average(series, 5)
    expected = model.seasonal((series - trend).transpose(1, 2)) + model.trend(trend.transpose(1, 2))
    torch.testing.assert_close(model(x), expected.transpose(1, 2).reshape(2, 6, 3, 2))
    assert torch.allclose(model.seasonal.weight, torch.full((6, 24), 1 / 24, dtype=torch.float64))


def test_patchtst_is_channel_independent():
    torch.manual_seed(0)
    model = PatchTST(48, 12, n_series=6, d_model=16, n_heads=2, n_layers=1).eval()
    x = torch.randn(2, 48, 2, 3)
    y = model(x)
    x2 = x.clone()
    x2[:, :, 1, 2] += torch.randn(2, 48)  # change one series
    y2 = model(x2)
    assert y.shape == (2, 12, 2, 3) and model.n_patches == 6
    changed = (y2 - y).abs().amax(dim=(0, 1))
    assert changed[1, 2] > 1e-4 and changed.flatten()[:-1].max() < 1e-5


def test_revin_round_trip():
    revin = RevIN(4)
    with torch.no_grad():
        revin.weight.fill_(1.7)
        revin.bias.fill_(-0.3)
    x = torch.randn(3, 4, 20)
    z, stats = revin.normalise(x)
    torch.testing.assert_close(revin.denormalise(z, stats), x, atol=1e-4, rtol=1e-4)


def test_transformer_only_shape_and_shift_equivariance():
    torch.manual_seed(0)
    model = TransformerOnly(24, 6, d_model=16, n_heads=2, n_layers=1).eval()
    x = torch.randn(2, 24, 3, 2)
    with torch.no_grad():
        y, y_shift = model(x), model(x + 5.0)
    assert y.shape == (2, 6, 3, 2)
    torch.testing.assert_close(y_shift, y + 5.0, atol=1e-4, rtol=1e-4)  # window normalisation


@pytest.mark.parametrize(
    ("build", "name"),
    [
        (lambda: DLinear(24, 6, kernel=4), "kernel"),
        (lambda: DLinear(0, 6), "seq_len"),
        (lambda: PatchTST(24, 6, 4, patch_len=30), "patch_len"),
        (lambda: PatchTST(24, 6, 4, patch_len=8, stride=9), "stride"),
        (lambda: PatchTST(24, 6, 4, d_model=10, n_heads=4), "n_heads"),
        (lambda: Persistence(0), "pred_len"),
        (lambda: TransformerOnly(24, 6, d_model=10, n_heads=4), "n_heads"),
    ],
)
def test_baselines_reject_bad_arguments(build, name):
    with pytest.raises(ValueError, match=f"{name}="):
        build()
