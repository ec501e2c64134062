"""Unit tying: the GN score against closed forms and brute force, exact distortion, refinement, bad inputs."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_logic_tying.method import (
    Calibration,
    area_target,
    candidate_gates,
    gauss_newton_order,
    gauss_newton_scores,
    refine_overshoot,
    tie_accuracy,
    ties_for_area,
    unit_tying,
)
from icml26_logic_tying.netlist import Netlist, evaluate, layer_states, no_ties, pack, simplify, unpack
from icml26_logic_tying.network import LogicNetwork


def setup(seed, widths=(30, 24, 16), n=96):
    netlist = Netlist.from_network(LogicNetwork(12, widths, 4, 2.0, seed=seed))
    X = np.random.default_rng(seed + 1).integers(0, 2, (n, 12)).astype(bool)
    return netlist, X


def brute_distortion(netlist, X, ties):
    return float(((evaluate(netlist, X, ties) - evaluate(netlist, X)) ** 2).sum(1).mean())


@given(st.integers(0, 5000))
def test_gn_score_is_exact_for_output_gates(seed):
    """For a last-layer gate, z moves by (c - y)/tau in one class: s_g(c) = P(y != c) / tau^2 = D({g})."""
    netlist, X = setup(seed)
    scores, constants = gauss_newton_scores(netlist, X)
    y_last = unpack(layer_states(netlist, pack(X))[-1], len(X))
    p_one = y_last.mean(1)
    expected = np.minimum(p_one, 1 - p_one) / netlist.tau**2
    assert np.allclose(scores[netlist.offsets[-2] :], expected)
    calibration = Calibration(netlist, X)
    for g in netlist.offsets[-2] + np.arange(3):
        mask, value = no_ties(netlist)
        mask[g], value[g] = True, constants[g]
        assert np.isclose(calibration.distortion((mask, value))[0], scores[g])


@given(st.integers(0, 5000), st.floats(0.0, 0.5))
def test_incremental_distortion_equals_brute_force(seed, fraction):
    netlist, X = setup(seed)
    rng = np.random.default_rng(seed)
    ties = (rng.random(netlist.n_gates) < fraction, rng.random(netlist.n_gates) < 0.5)
    calibration = Calibration(netlist, X)
    d_full, states = calibration.distortion(ties)
    assert np.isclose(d_full, brute_distortion(netlist, X, ties))
    g = netlist.offsets[1] + 3  # one more tie in layer 1, recomputed from layer 1 on
    mask, value = ties[0].copy(), ties[1].copy()
    mask[g], value[g] = True, True
    d_inc, _ = calibration.distortion((mask, value), 1, states)
    assert np.isclose(d_inc, brute_distortion(netlist, X, (mask, value)))


def test_gn_score_is_zero_for_gates_that_cannot_reach_an_output():
    netlist, X = setup(1)
    scores, _ = gauss_newton_scores(netlist, X)
    reach = np.zeros(netlist.n_gates, dtype=bool)
    reach[candidate_gates(netlist)] = True
    dead = ~reach & (simplify(netlist).kind[netlist.n_inputs :] != 0)
    assert np.all(scores[dead] == 0)


def test_ties_for_area_meets_the_target_with_the_shortest_prefix():
    netlist, X = setup(2)
    order, constants = gauss_newton_order(netlist, X, candidate_gates(netlist))
    target = area_target(netlist, 0.4)
    ties, k = ties_for_area(netlist, order, constants, target)
    assert simplify(netlist, ties).area <= target and ties[0].sum() == k
    shorter = np.zeros(netlist.n_gates, dtype=bool)
    shorter[order[: k - 1]] = True
    assert simplify(netlist, (shorter, constants & shorter)).area > target


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_two_stage_meets_the_target_within_its_evaluation_budget(seed):
    netlist, X = setup(seed, widths=(60, 40, 20), n=128)
    target = area_target(netlist, 0.5)
    gn = unit_tying(netlist, X, target, refine=False)
    both = unit_tying(netlist, X, target, rho=1.0)
    assert simplify(netlist, both.ties).area <= target and simplify(netlist, gn.ties).area <= target
    assert both.evaluations <= 2 * both.overshoot + 1 and both.overshoot >= gn.n_ties


def test_refinement_first_accepts_the_exact_best_single_tie_and_uses_the_singles_when_out_of_budget():
    netlist, X = setup(5)
    candidates = candidate_gates(netlist)
    _, constants = gauss_newton_scores(netlist, X)
    singles = []
    for g in candidates:
        mask, value = no_ties(netlist)
        mask[g], value[g] = True, constants[g]
        singles.append(brute_distortion(netlist, X, (mask, value)))
    singles = np.array(singles)
    accepted = refine_overshoot(Calibration(netlist, X), candidates, constants, 0, check_every=1)
    assert singles[list(candidates).index(accepted[0])] == singles.min()
    no_budget = refine_overshoot(Calibration(netlist, X), candidates, constants, 0, fd_budget=1e-9)
    in_order = candidates[np.lexsort((candidates, singles))]
    assert np.array_equal(no_budget[1:], in_order[1 : len(no_budget)]) or len(no_budget) <= 1


def test_no_ties_keep_the_accuracy_of_the_netlist():
    netlist, X = setup(4)
    y = evaluate(netlist, X).argmax(1)
    assert tie_accuracy(netlist, X, y) == 1.0


def test_rejects_negative_overshoot_and_bad_targets():
    netlist, X = setup(0)
    with pytest.raises(ValueError, match="rho="):
        unit_tying(netlist, X, 10, rho=-0.1)
    with pytest.raises(ValueError, match="target_area="):
        unit_tying(netlist, X, -1)
    with pytest.raises(ValueError, match="fd_budget="):
        unit_tying(netlist, X, 10, fd_budget=0)
    with pytest.raises(ValueError, match="reduction="):
        area_target(netlist, 1.5)


def test_rejects_empty_or_non_binary_calibration_sets():
    netlist, _ = setup(0)
    with pytest.raises(ValueError, match="X_calibration="):
        unit_tying(netlist, np.zeros((0, 12)), 10)
    with pytest.raises(ValueError, match="X_calibration="):
        unit_tying(netlist, np.full((4, 12), 0.5), 10)
    with pytest.raises(ValueError, match="X="):
        Calibration(netlist, np.zeros((4, 11)))
