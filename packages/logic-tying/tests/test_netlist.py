"""Netlist: exact equivalence to the hard forward, constant propagation, dead-logic elimination, area counts."""

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_logic_tying.gates import NAMES
from icml26_logic_tying.netlist import (
    CONST,
    GATE,
    WIRE,
    Netlist,
    evaluate,
    evaluate_simplified,
    layer_states,
    lut_count,
    majority_values,
    pack,
    simplify,
    unpack,
)
from icml26_logic_tying.network import LogicNetwork

OP = {name: k for k, name in enumerate(NAMES)}


def small(seed, widths=(24, 20, 12), n_inputs=10):
    net = LogicNetwork(n_inputs, widths, 4, 3.0, seed=seed)
    return net, Netlist.from_network(net)


def manual(ops_a_b_per_layer, n_inputs=2, n_classes=1):
    ops, ia, ib = zip(*[(np.array(o), np.array(a), np.array(b)) for o, a, b in ops_a_b_per_layer], strict=True)
    return Netlist(n_inputs, ops, ia, ib, n_classes, 1.0)


@given(st.integers(0, 10_000), st.integers(1, 130))
def test_netlist_equals_the_hard_forward_exactly(seed, n):
    net, netlist = small(seed)
    X = np.random.default_rng(seed).integers(0, 2, (n, 10)).astype(bool)
    hard = net(torch.from_numpy(X.astype(np.float32)), hard=True).detach().numpy()
    assert np.allclose(evaluate(netlist, X), hard, atol=1e-5)


@given(st.integers(0, 10_000), st.floats(0, 0.6))
def test_simplified_netlist_equals_the_tied_netlist(seed, fraction):
    net, netlist = small(seed)
    rng = np.random.default_rng(seed)
    ties = (rng.random(netlist.n_gates) < fraction, rng.random(netlist.n_gates) < 0.5)
    X = rng.integers(0, 2, (70, 10)).astype(bool)
    simple = simplify(netlist, ties)
    assert np.array_equal(evaluate_simplified(simple, X, 4, 3.0), evaluate(netlist, X, ties))
    tied_torch = net.group_sum(
        net.layer_outputs(torch.from_numpy(X.astype(np.float32)), True, tuple(map(torch.from_numpy, ties)))[-1]
    )
    assert np.allclose(tied_torch.detach().numpy(), evaluate(netlist, X, ties), atol=1e-5)


@given(st.integers(0, 10_000))
def test_tying_output_gates_never_grows_the_area_and_tying_all_leaves_none(seed):
    """A tie can revive logic only through a downstream gate (e.g. XOR(x, NOT x) = 1 becomes NOT x once x is
    tied), so ties in the last layer never grow the area; tying every gate leaves no logic."""
    _, netlist = small(seed)
    rng = np.random.default_rng(seed)
    last = netlist.offsets[-2] + rng.permutation(netlist.widths[-1])
    values = rng.random(netlist.n_gates) < 0.5
    mask = np.zeros(netlist.n_gates, dtype=bool)
    areas = [simplify(netlist).area]
    for g in last:
        mask[g] = True
        areas.append(simplify(netlist, (mask.copy(), values)).area)
    assert all(b <= a for a, b in itertools.pairwise(areas)) and areas[-1] == 0
    assert simplify(netlist, (np.ones(netlist.n_gates, dtype=bool), values)).area == 0


def test_constant_propagation_rules():
    # inputs x0, x1; layer 0: a gate tied to c and y = XOR(x0, x1); layer 1: AND, XOR, OR of (c, y) and A(y)
    layer1 = ([OP["AND"], OP["XOR"], OP["OR"], OP["A"]], [0, 0, 0, 1], [1, 1, 1, 0])
    netlist = manual([([OP["AND"], OP["XOR"]], [0, 0], [1, 1]), layer1])
    mask = np.array([True, False, False, False, False, False])
    for tie_value, expected in ((False, [CONST, WIRE, WIRE, WIRE]), (True, [WIRE, WIRE, CONST, WIRE])):
        s = simplify(netlist, (mask, np.array([tie_value] + [False] * 5)))
        assert list(s.kind[4:]) == expected, tie_value
    s = simplify(netlist, (mask, np.array([True] + [False] * 5)))
    assert s.negate[5] and s.root[5] == 3  # XOR(1, y) = NOT y
    assert s.constant[6]  # OR(1, y) = 1


def test_same_input_twice_collapses():
    netlist = manual([([OP["XOR"], OP["AND"], OP["NAND"]], [0, 0, 1], [0, 0, 1])])
    s = simplify(netlist)
    assert s.kind[2] == CONST and not s.constant[2]  # x XOR x = 0
    assert s.kind[3] == WIRE and s.root[3] == 0 and not s.negate[3]  # x AND x = x
    assert s.kind[4] == WIRE and s.root[4] == 1 and s.negate[4]  # NAND(x, x) = NOT x
    assert s.area == 0


def test_dead_logic_is_eliminated():
    # gate 1 of layer 0 is read by nobody; gate 0 is read through a wire
    netlist = manual([([OP["AND"], OP["OR"]], [0, 0], [1, 1]), ([OP["A"]], [0], [1])])
    s = simplify(netlist)
    assert s.live[2] and not s.live[3] and s.area == 1 and s.kind[2] == GATE


def test_lut_count_bounds_and_k2_equals_area():
    _, netlist = small(3, widths=(60, 40, 20))
    s = simplify(netlist)
    assert lut_count(s, k=2) == s.area
    luts = lut_count(s, k=6)
    assert np.ceil(s.area / 5) <= luts <= s.area


def test_pack_unpack_roundtrip_and_majority():
    X = np.random.default_rng(0).integers(0, 2, (131, 7)).astype(bool)
    assert np.array_equal(unpack(pack(X), 131).T, X)
    netlist = manual([([OP["A"], OP["TRUE"]], [0, 0], [1, 1])])
    assert list(majority_values(netlist, np.array([[1, 0], [1, 1], [0, 0]]))) == [True, True]


def test_rejects_wiring_beyond_the_previous_layer():
    with pytest.raises(ValueError, match="index_a"):
        manual([([OP["AND"]], [2], [0])])
    with pytest.raises(ValueError, match="index_b"):
        manual([([OP["AND"]], [0], [0]), ([OP["AND"]], [0], [1])])


def test_rejects_bad_ops_and_mismatched_widths():
    with pytest.raises(ValueError, match="ops"):
        manual([([16], [0], [1])])
    with pytest.raises(ValueError, match="index_a"):
        Netlist(2, (np.array([1, 1]),), (np.array([0]),), (np.array([1, 1]),), 1, 1.0)
    with pytest.raises(ValueError, match="n_classes="):
        Netlist(2, (np.array([1, 1, 1]),), (np.array([0, 0, 0]),), (np.array([1, 1, 1]),), 2, 1.0)


def test_rejects_bad_ties_and_non_binary_inputs():
    netlist = manual([([OP["AND"]], [0], [1])])
    with pytest.raises(ValueError, match="ties mask"):
        evaluate(netlist, np.zeros((2, 2)), (np.zeros(3, dtype=bool), np.zeros(3, dtype=bool)))
    with pytest.raises(ValueError, match="ties value"):
        evaluate(netlist, np.zeros((2, 2)), (np.zeros(1, dtype=bool), np.zeros(1)))
    with pytest.raises(ValueError, match="X="):
        evaluate(netlist, np.full((2, 2), 0.5))
    with pytest.raises(ValueError, match="X="):
        evaluate(netlist, np.zeros((2, 3)))


def test_layer_states_rejects_a_start_without_states():
    netlist = manual([([OP["AND"]], [0], [1]), ([OP["A"]], [0], [0])])
    with pytest.raises(ValueError, match="start="):
        layer_states(netlist, pack(np.zeros((2, 2))), None, 1)
    with pytest.raises(ValueError, match="start="):
        layer_states(netlist, pack(np.zeros((2, 2))), None, 5)
