"""Earlier bounds: the rigorous sup-norm Girsanov bound and the learned-path bound."""

import numpy as np
import pytest
from icml26_retrain_drift import chi_square, generate, score_error, score_perturbation
from icml26_retrain_drift.baselines import learned_path_bound, sup_norm_bound


def test_sup_norm_bound_is_valid_and_looser(setup):
    x, t, p = setup
    for seed in range(3):
        eta = score_error(score_perturbation(x, np.random.default_rng(seed)), 0.1, t)
        gen = generate(p, eta, x, t)
        intra = chi_square(gen.p_hat, p, x[1] - x[0])
        assert intra <= sup_norm_bound(eta, t)
        assert intra <= learned_path_bound(gen.eps2_hat) * 1.2
        assert sup_norm_bound(eta, t) > learned_path_bound(gen.eps2_hat)  # worst case is looser


def test_sup_norm_bound_closed_form(setup):
    x, t, _ = setup
    eta = np.full((len(t), len(x)), 0.2)
    assert np.isclose(sup_norm_bound(eta, t), np.expm1(2 * 0.04 * t[-1]))


def test_bad_inputs(setup):
    x, t, _ = setup
    with pytest.raises(ValueError, match="eta"):
        sup_norm_bound(np.zeros((3, len(x))), t)
    with pytest.raises(ValueError, match="eps2"):
        learned_path_bound([-0.1])
