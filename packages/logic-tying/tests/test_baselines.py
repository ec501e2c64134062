"""Saliency baselines: orders, constants and the Taylor score against a brute-force reference."""

import numpy as np
import pytest
import torch
from icml26_logic_tying.baselines import gate_preference, magnitude_order, random_order, taylor_order
from icml26_logic_tying.method import candidate_gates, multilinear_outputs
from icml26_logic_tying.netlist import Netlist, majority_values
from icml26_logic_tying.network import LogicNetwork


@pytest.fixture
def trained():
    net = LogicNetwork(10, (24, 12), 3, 2.0, seed=0)
    netlist = Netlist.from_network(net)
    X = np.random.default_rng(0).integers(0, 2, (64, 10)).astype(bool)
    y = np.random.default_rng(1).integers(0, 3, 64)
    return net, netlist, X, y, candidate_gates(netlist)


def test_magnitude_order_ties_the_least_decided_gates_first(trained):
    net, netlist, X, _, candidates = trained
    preference = gate_preference(net)
    order, constants = magnitude_order(netlist, preference, X, candidates)
    assert sorted(order) == sorted(candidates) and np.all(np.diff(preference[order]) >= 0)
    assert np.array_equal(constants, majority_values(netlist, X))
    assert np.all((preference > 1 / 16) & (preference <= 1))


def test_random_order_is_a_seeded_permutation(trained):
    _, netlist, X, _, candidates = trained
    a, _ = random_order(netlist, X, candidates, 3)
    b, _ = random_order(netlist, X, candidates, 3)
    assert np.array_equal(a, b) and sorted(a) == sorted(candidates)


def test_taylor_score_matches_a_per_gate_autograd_reference(trained):
    _, netlist, X, y, candidates = trained
    order, constants = taylor_order(netlist, X, y, candidates)
    outputs, deltas, logits = multilinear_outputs(netlist, X, perturb=True)
    loss = torch.nn.functional.cross_entropy(logits, torch.from_numpy(y), reduction="sum")
    g = candidates[0]
    layer = netlist.layer_of(np.array([g]))[0]
    grad = torch.autograd.grad(loss, deltas[layer])[0][:, g - netlist.offsets[layer]].numpy()
    out = outputs[layer].detach().numpy()[:, g - netlist.offsets[layer]]
    score = [abs((grad * (c - out)).mean()) for c in (0.0, 1.0)]
    assert constants[g] == (score[1] < score[0])
    assert sorted(order) == sorted(candidates)


def test_baselines_reject_bad_inputs(trained):
    _, netlist, X, y, candidates = trained
    with pytest.raises(ValueError, match="preference="):
        magnitude_order(netlist, np.ones(3), X, candidates)
    with pytest.raises(ValueError, match="y="):
        taylor_order(netlist, X, y[:10], candidates)
    with pytest.raises(ValueError, match="seed="):
        random_order(netlist, X, candidates, -1)
