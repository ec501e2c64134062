"""The pure-torch DLGN: wiring, hard vs relaxed forward, training, bad inputs."""

import numpy as np
import pytest
import torch
from icml26_logic_tying.network import LogicNetwork, hard_accuracy, random_wiring, train_network


def test_random_wiring_reads_every_input():
    a, b = random_wiring(30, 20, np.random.default_rng(0))
    assert a.shape == b.shape == (20,) and set(np.r_[a, b]) == set(range(30))


def test_hard_forward_is_the_relaxed_forward_with_one_hot_gates():
    net = LogicNetwork(12, (20, 10), 2, 2.0, seed=0)
    with torch.no_grad():
        for w in net.weights:
            w.mul_(1e4)  # softmax -> one-hot
    x = torch.randint(0, 2, (50, 12)).float()
    assert torch.allclose(net(x), net(x, hard=True), atol=1e-4)


def test_group_sum_divides_block_sums_by_tau():
    net = LogicNetwork(4, (6,), 3, 2.0, seed=0)
    y = torch.arange(12.0).reshape(2, 6)
    assert torch.equal(net.group_sum(y), torch.tensor([[1.0 / 2, 5.0 / 2, 9.0 / 2], [13.0 / 2, 17.0 / 2, 21.0 / 2]]))


def test_training_fits_a_simple_boolean_rule():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (256, 8)).astype(bool)
    y = X[:, 0].astype(np.int64)  # class = first bit
    net = LogicNetwork(8, (40, 40), 2, 4.0, seed=0)
    losses = train_network(net, X, y, epochs=30, seed=0, batch_size=64)
    # issue 16.0: margins far outside cross-machine noise; measured over seeds 0-2: loss ratio 0.63-0.67,
    # hard accuracy 0.86-0.91 (the old bound 0.9 sat inside that spread), chance 0.5
    assert losses[-1] < 0.8 * losses[0] and hard_accuracy(net, X, y) > 0.75


def test_rejects_last_width_not_divisible_by_classes():
    with pytest.raises(ValueError, match="widths="):
        LogicNetwork(8, (10, 7), 2, 1.0)


def test_rejects_empty_widths_and_bad_tau():
    with pytest.raises(ValueError, match="widths="):
        LogicNetwork(8, (), 2, 1.0)
    with pytest.raises(ValueError, match="tau="):
        LogicNetwork(8, (10,), 2, 0.0)


def test_hard_forward_rejects_non_binary_inputs():
    net = LogicNetwork(4, (4,), 2, 1.0)
    with pytest.raises(ValueError, match="x="):
        net(torch.full((2, 4), 0.5), hard=True)
    with pytest.raises(ValueError, match="x="):
        net(torch.zeros(2, 5))


def test_training_rejects_non_binary_data_and_label_mismatch():
    net = LogicNetwork(4, (4,), 2, 1.0)
    with pytest.raises(ValueError, match="X="):
        train_network(net, np.full((3, 4), 0.5), np.zeros(3), 1, 0)
    with pytest.raises(ValueError, match="y="):
        train_network(net, np.zeros((3, 4)), np.zeros(2), 1, 0)
