"""Kernels over V_num: symmetry, PSD, squash, the shuffled control as a permutation, the Laplacian."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_smmd import laplacian, random_psd_kernel, shuffled_value_kernel, squash_distances, value_distance_kernel
from icml26_smmd.kernels import distance_kernel

values = st.lists(st.integers(-500, 500), min_size=2, max_size=25, unique=True)


@given(values, st.floats(0.1, 20), st.sampled_from(["gaussian", "laplace"]))
def test_unsquashed_value_kernel_is_symmetric_psd_with_unit_diagonal(v, sigma, kind):
    K = value_distance_kernel(v, (sigma,), kind, squash_factor=0)
    assert torch.allclose(K, K.T) and torch.allclose(K.diagonal(), torch.ones(len(v), dtype=K.dtype))
    assert ((K >= 0) & (K <= 1)).all()
    assert torch.linalg.eigvalsh(K).min() > -1e-9


@given(st.integers(-100, 100), st.integers(10, 300))
def test_squashed_kernel_on_an_integer_range_is_psd(start, n):
    # n >= squash factor + 1 = 10: the squash compresses the distances 1..n-1 (the vocabularies used here);
    # on 3..9 consecutive integers it stretches them and K is not PSD (next test)
    K = value_distance_kernel(range(start, start + n))
    assert torch.linalg.eigvalsh(K).min() > -1e-9


@pytest.mark.parametrize("n", range(3, 10))
def test_squash_breaks_psd_on_short_integer_ranges(n):
    assert torch.linalg.eigvalsh(value_distance_kernel(range(n))).min() < -1e-9


def test_squash_can_break_psd_on_irregular_values():
    # distances {1, 1, 2} become {1, 1, 9}: no longer a line metric, so K has a negative eigenvalue
    # (why the loss keeps the official relu); the README names this.
    assert torch.linalg.eigvalsh(value_distance_kernel([0, 1, -1])).min() < -0.2


def test_gaussian_kernel_closed_form_on_digits_where_squash_is_identity():
    K = value_distance_kernel(range(10))
    d = np.abs(np.arange(10)[:, None] - np.arange(10)[None, :])
    np.testing.assert_allclose(K.numpy(), np.exp(-(d**2) / 8.0), rtol=1e-12)


def test_multi_sigma_kernel_is_the_average():
    v = torch.arange(6.0)
    K = value_distance_kernel(v, (1.0, 3.0), squash_factor=0)
    expected = (
        value_distance_kernel(v, (1.0,), squash_factor=0) + value_distance_kernel(v, (3.0,), squash_factor=0)
    ) / 2
    assert torch.allclose(K, expected)


@given(values, st.floats(1.5, 50))
def test_squash_maps_min_nonzero_to_one_and_max_to_factor(v, factor):
    t = torch.tensor(v, dtype=torch.float64)
    d = (t[:, None] - t[None, :]).abs()
    s = squash_distances(d, factor)
    nonzero = d > 0
    assert torch.all(s[~nonzero] == 0)
    if d[nonzero].min() < d.max():
        assert float(s[nonzero].min()) == pytest.approx(1.0) and float(s.max()) == pytest.approx(factor)
        order = torch.argsort(d.flatten(), stable=True)
        assert torch.all(s.flatten()[order].diff() >= -1e-12)


def test_shuffled_kernel_is_the_value_kernel_of_permuted_values():
    v = torch.arange(20, dtype=torch.float64)
    K = shuffled_value_kernel(v, seed=3)
    perm = torch.randperm(20, generator=torch.Generator().manual_seed(3))
    assert torch.allclose(K, value_distance_kernel(v[perm]))
    assert not torch.allclose(K, value_distance_kernel(v))
    assert torch.allclose(torch.sort(K.flatten()).values, torch.sort(value_distance_kernel(v).flatten()).values)


@given(st.integers(1, 30), st.integers(0, 1000))
def test_random_kernel_is_psd_with_unit_diagonal(n, seed):
    K = random_psd_kernel(n, seed)
    assert torch.allclose(K.diagonal(), torch.ones(n, dtype=K.dtype))
    assert torch.linalg.eigvalsh(K).min() > -1e-9


@given(values)
def test_laplacian_rows_sum_to_zero_and_is_psd(v):
    L = laplacian(value_distance_kernel(v))
    assert torch.allclose(L.sum(1), torch.zeros(len(v), dtype=L.dtype), atol=1e-12)
    assert torch.linalg.eigvalsh(L).min() > -1e-9


def test_bandwidth_must_be_positive():
    with pytest.raises(ValueError, match="sigmas="):
        value_distance_kernel(range(5), (0.0,))
    with pytest.raises(ValueError, match="sigmas="):
        value_distance_kernel(range(5), (-1.0,))


def test_bandwidth_must_be_finite():
    with pytest.raises(ValueError, match="sigmas="):
        value_distance_kernel(range(5), (float("nan"),))


def test_empty_bandwidths_are_rejected():
    with pytest.raises(ValueError, match="sigmas="):
        value_distance_kernel(range(5), ())


def test_unknown_kernel_type_is_rejected():
    with pytest.raises(ValueError, match="kernel_type="):
        distance_kernel(torch.zeros(2, 2), (1.0,), "cauchy")


def test_bad_values_are_rejected():
    with pytest.raises(ValueError, match="values="):
        value_distance_kernel([])
    with pytest.raises(ValueError, match="values="):
        value_distance_kernel([1.0, float("inf")])


def test_random_kernel_rejects_bad_sizes():
    with pytest.raises(ValueError, match="n="):
        random_psd_kernel(0, 0)
    with pytest.raises(ValueError, match="feature_dim="):
        random_psd_kernel(3, 0, feature_dim=1)
