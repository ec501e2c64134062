"""Baselines: least squares on the same basis, the equal-size ReLU network."""

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_qnn_uap.baselines import fit_mlp, lstsq_expansion, mlp_init, mlp_num_parameters, mlp_width
from icml26_qnn_uap.data import make_dataset


def test_least_squares_recovers_f2_exactly():
    """f2 lies in the span of {1, e^{i(x0+x1)}, e^{-i(x0+x1)}}: the fit is exact up to rounding."""
    data = make_dataset("f2", 0)
    pred = lstsq_expansion([[0, 0], [1, 1], [-1, -1]], "fourier", data.x_train, data.y_train, data.x_test)
    np.testing.assert_allclose(pred, data.y_test, atol=1e-10)


def test_least_squares_chebyshev_recovers_f3():
    data = make_dataset("f3", 0)
    pred = lstsq_expansion(
        [[0, 0], [1, 0], [0, 1], [2, 0], [1, 1], [0, 2]], "chebyshev", data.x_train, data.y_train, data.x_test
    )
    np.testing.assert_allclose(pred, data.y_test, atol=1e-10)


@settings(max_examples=50, deadline=None)
@given(st.integers(2, 500), st.integers(1, 4))
def test_mlp_width_is_the_closest_size(num_params, d):
    width = mlp_width(num_params, d)
    best = min(range(1, num_params + 1), key=lambda h: abs(mlp_num_parameters(h, d) - num_params))
    assert abs(mlp_num_parameters(width, d) - num_params) == abs(mlp_num_parameters(best, d) - num_params)


def test_mlp_parameter_count_matches_the_network():
    count = sum(np.size(p) for p in jax.tree.leaves(mlp_init(jax.random.PRNGKey(0), 2, 6)))
    assert count == mlp_num_parameters(6, 2) == 25


def test_padded_hidden_units_never_train():
    """The shared padded trainer is exactly a width-h network: units past h stay zero through training."""
    from icml26_qnn_uap.baselines import PADDED_WIDTH, _compiled_mlp_runs

    data = make_dataset("f2", 0, n_train=20, n_test=1)
    with jax.enable_x64(True):
        keys = jax.random.split(jax.random.PRNGKey(0), 2)
        params, _ = _compiled_mlp_runs(2, PADDED_WIDTH, 40)(keys, data.x_train, data.y_train, 6, 0.05)
    for name in ("W1", "b1", "w2"):
        assert not np.asarray(params[name])[..., 6:].any()


def test_mlp_trains():
    data = make_dataset("f2", 0, n_train=50, n_test=50)
    net = fit_mlp(data.x_train, data.y_train, 6, steps=40, lr=0.05, restarts=2)
    assert net.num_parameters == 25 and net.train_mse < 0.85 * np.var(data.y_train)  # measured 0.71


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: mlp_width(0, 2), "num_params"),
        (lambda: fit_mlp(np.zeros((3, 2)), np.zeros(3), 0), "width"),
        (lambda: fit_mlp(np.zeros((3, 2)), np.zeros(4), 2), "x"),
        (
            lambda: lstsq_expansion([[0, 0], [0, 0]], "fourier", np.zeros((3, 2)), np.zeros(3), np.zeros((1, 2))),
            "freqs",
        ),
    ],
)
def test_bad_baseline_inputs(call, name):
    with pytest.raises(ValueError, match=name):
        call()
