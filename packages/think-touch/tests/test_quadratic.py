"""The convergence theory on a convex quadratic: descent lemma, coverage, greedy rate."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_think_touch import block_coordinate_descent, block_quadratic, make_strategy


@given(st.integers(0, 500), st.sampled_from(["greedy", "bandit", "random", "cyclic", "excluding"]))
def test_descent_lemma_every_step(seed, name):
    """f(theta_{t+1}) <= f(theta_t) - 1/(2L) sum_{g in S_t} ||grad_g f(theta_t)||^2, replayed step by step."""
    A, b = block_quadratic(4, 3, 20.0, seed)
    L = np.linalg.eigvalsh(A)[-1]
    run = block_coordinate_descent(A, b, 4, make_strategy(name, 4, 2), 30, seed)
    blocks, theta = np.arange(12).reshape(4, 3), np.zeros(12)
    for t, selected in enumerate(run["selected"]):
        grad = A @ theta - b
        idx = blocks[selected].ravel()
        bound = (grad[idx] ** 2).sum() / (2 * L)
        assert run["gap"][t] - run["gap"][t + 1] >= bound - 1e-9
        theta[idx] -= grad[idx] / L


def test_full_selection_is_gradient_descent():
    A, b = block_quadratic(3, 2, 10.0, 0)
    L = np.linalg.eigvalsh(A)[-1]
    run = block_coordinate_descent(A, b, 3, make_strategy("full", 3, 3), 10, 0)
    theta = np.zeros(6)
    for _ in range(10):
        theta -= (A @ theta - b) / L
    assert np.isclose(run["grad_norm"][-1], np.linalg.norm(A @ theta - b))


def test_first_greedy_step_decreases_most():
    A, b = block_quadratic(6, 2, 50.0, 1)
    first = {
        name: block_coordinate_descent(A, b, 6, make_strategy(name, 6, 2), 1, 0)["gap"][1]
        for name in ("greedy", "random", "cyclic")
    }
    assert first["greedy"] <= min(first.values())


def test_covering_strategies_converge_and_excluding_stalls():
    A, b = block_quadratic(4, 3, 10.0, 2)
    for name in ("greedy", "bandit", "random", "cyclic"):
        run = block_coordinate_descent(A, b, 4, make_strategy(name, 4, 2), 600, 0)
        assert run["grad_norm"][-1] < 1e-6 * run["grad_norm"][0]
    stalled = block_coordinate_descent(A, b, 4, make_strategy("excluding", 4, 2), 600, 0)
    assert stalled["counts"][0] == 0 and stalled["grad_norm"][-1] > 1e-2 * stalled["grad_norm"][0]


def test_rejects_bad_quadratic_inputs():
    with pytest.raises(ValueError, match="condition="):
        block_quadratic(3, 2, 0.5, 0)
    A, b = block_quadratic(3, 2, 10.0, 0)
    with pytest.raises(ValueError, match="G="):
        block_coordinate_descent(A, b, 4, make_strategy("random", 3, 1), 5)
    with pytest.raises(ValueError, match="A="):
        block_coordinate_descent(A[:5], b, 3, make_strategy("random", 3, 1), 5)
    with pytest.raises(ValueError, match="steps="):
        block_coordinate_descent(A, b, 3, make_strategy("random", 3, 1), 0)
