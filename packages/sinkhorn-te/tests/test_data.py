"""The simulated design: shapes, the propensity bounds, a zero ATE with a distributional effect."""

import numpy as np
import pytest
from icml26_sinkhorn_te import sample_counterfactuals, simulate
from icml26_sinkhorn_te.data import PROPENSITY_CLIP, true_propensity


def test_shapes_and_binary_treatment():
    Y, A, X = simulate(50, 1.0, np.random.default_rng(0))
    assert Y.shape == (50, 2) and X.shape == (50, 2) and A.shape == (50,)
    assert set(np.unique(A)) <= {0, 1}


def test_propensity_is_clipped_to_the_design_bounds():
    pi = true_propensity(np.array([[10.0, -10.0], [-10.0, 10.0], [0.0, 0.0]]))
    np.testing.assert_allclose(pi, [PROPENSITY_CLIP[1], PROPENSITY_CLIP[0], 0.5])


def test_mixture_keeps_the_mean_and_raises_the_variance():
    """ATE = 0 for every theta; Var along 1_2 grows by 2 theta^2."""
    y1, y0 = sample_counterfactuals(40_000, 1.0, np.random.default_rng(1))
    np.testing.assert_allclose(y1.mean(0), y0.mean(0), atol=0.05)
    along = np.ones(2) / np.sqrt(2)
    assert (y1 @ along).var() - (y0 @ along).var() == pytest.approx(2.0, abs=0.15)


def test_observed_arms_are_confounded():
    """Treated units have larger X_1 - X_2, so the arm-wise outcome means differ although the ATE is 0."""
    Y, A, X = simulate(20_000, 0.0, np.random.default_rng(2))
    assert (X[A == 1, 0] - X[A == 1, 1]).mean() > 0.2
    assert Y[A == 1, 0].mean() - Y[A == 0, 0].mean() > 0.1


def test_rejects_bad_n():
    with pytest.raises(ValueError, match="n="):
        simulate(1, 0.0, np.random.default_rng(0))


def test_rejects_non_finite_theta():
    with pytest.raises(ValueError, match="theta="):
        simulate(10, np.nan, np.random.default_rng(0))


def test_rejects_a_seed_instead_of_a_generator():
    with pytest.raises(ValueError, match="rng="):
        sample_counterfactuals(10, 1.0, 0)
