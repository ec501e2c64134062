"""Baselines: the AIPW ATE test, the Gaussian-kernel (MMD) cross test and the IPW plug-in."""

import numpy as np
import pytest
from icml26_sinkhorn_te import ate_test, gaussian_kernel, mmd_test, plugin_ste, simulate, squared_distances


def shifted(shift, n=200, seed=0):
    """The design at theta = 0 with the treated outcomes moved by ``shift``: a pure mean effect."""
    Y, A, X = simulate(n, 0.0, np.random.default_rng(seed))
    return Y + shift * A[:, None], A, X


def test_ate_test_detects_a_mean_shift_and_estimates_it():
    Y, A, X = shifted(1.0)
    res = ate_test(Y, A, X)
    assert res.reject and res.statistic > 0
    mixture = ate_test(*simulate(400, 1.0, np.random.default_rng(1)))
    assert mixture.p_value > 0.01  # the mixture effect keeps the mean: nothing for the ATE test to see


def test_ate_wald_statistic_is_chi_square_scale_invariant():
    """Rescaling the outcomes leaves the Wald statistic unchanged."""
    Y, A, X = shifted(0.3)
    assert ate_test(3.0 * Y, A, X).statistic == pytest.approx(ate_test(Y, A, X).statistic, rel=1e-6)


def test_gaussian_kernel_uses_the_median_bandwidth():
    ref = np.random.default_rng(2).normal(size=(30, 2))
    k = gaussian_kernel(ref)
    d = squared_distances(ref, ref)
    median = np.median(d[d > 0])
    np.testing.assert_allclose(k(ref, ref), np.exp(-d / median))
    assert np.linalg.eigvalsh(k(ref, ref)).min() > -1e-10


def test_mmd_test_detects_a_shift():
    Y, A, X = shifted(1.5)
    assert mmd_test(Y, A, X).reject


def test_plugin_is_nonnegative_and_grows_with_the_effect():
    small = plugin_ste(*simulate(200, 0.0, np.random.default_rng(3)), eps=1.0)
    large = plugin_ste(*simulate(200, 2.0, np.random.default_rng(3)), eps=1.0)
    assert 0 <= small < large


def test_ate_rejects_bad_alpha():
    with pytest.raises(ValueError, match="alpha="):
        ate_test(*shifted(0.0), alpha=0.0)


def test_mmd_rejects_bad_alpha():
    with pytest.raises(ValueError, match="alpha="):
        mmd_test(*shifted(0.0), alpha=2.0)


def test_plugin_rejects_bad_eps():
    with pytest.raises(ValueError, match="eps="):
        plugin_ste(*shifted(0.0), eps=-1.0)
