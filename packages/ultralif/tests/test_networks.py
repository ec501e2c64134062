"""Encoders, the SNN, the sparsity-penalised loss and the training loop."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_ultralif import NEURONS, SNN, direct_encode, evaluate, rate_encode, sparse_loss, train


@settings(deadline=None)
@given(st.integers(1, 5), st.floats(0.1, 1.0))
def test_rate_code_is_binary_with_rate_gain_times_intensity(T, gain):
    x = torch.rand(400, 8, generator=torch.Generator().manual_seed(T))
    s = rate_encode(x, T, gain, torch.Generator().manual_seed(0))
    assert s.shape == (400, T, 8) and set(s.unique().tolist()) <= {0.0, 1.0}
    assert float((s.mean(1) - gain * x).mean().abs()) < 0.02


def test_direct_code_repeats_the_input():
    x = torch.randn(3, 5)
    out = direct_encode(x, 4)
    assert out.shape == (3, 4, 5) and torch.equal(out[:, 2], x)


@pytest.mark.parametrize("neuron", list(NEURONS))
@pytest.mark.parametrize("layers", [1, 2])
def test_snn_gives_logits_and_a_spike_rate_in_unit_interval(neuron, layers):
    model = SNN(neuron, 12, 4, hidden=8, layers=layers, T=3, encoding="direct")
    logits = model(torch.randn(5, 12))
    assert logits.shape == (5, 4) and 0 <= float(model.spike_rate.detach()) <= 1
    sparse_loss(logits, torch.zeros(5, dtype=torch.long), model.spike_rate, 0.1).backward()


def test_sparse_loss_is_cross_entropy_plus_lambda_rate():
    logits, y, rate = torch.randn(4, 3), torch.tensor([0, 2, 1, 1]), torch.tensor(0.4)
    assert float(sparse_loss(logits, y, rate, 0.0)) == pytest.approx(float(F.cross_entropy(logits, y)))
    assert float(sparse_loss(logits, y, rate, 0.1) - sparse_loss(logits, y, rate, 0.0)) == pytest.approx(0.04)


def _toy(n=200, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = np.clip(rng.normal(0.3 + 0.4 * y[:, None], 0.15, (n, 6)), 0, 1).astype(np.float32)
    return X, y


def test_training_learns_a_separable_toy_task_and_is_reproducible():
    X, y = _toy()
    accs = []
    for _ in range(2):
        torch.manual_seed(0)
        model = train(
            SNN("UltraLIF", 6, 2, hidden=16, encoding="direct"), X, y, epochs=20, seed=3, lr=0.01, batch_size=32
        )
        accs.append(evaluate(model, X, y, seed=4))
    assert accs[0] == accs[1] and accs[0].accuracy > 0.9


def test_frames_encoding_takes_sequences():
    model = SNN("UltraDLIF", 5, 3, hidden=6, T=4, encoding="frames")
    assert model(torch.randn(2, 4, 5)).shape == (2, 3)
    with pytest.raises(ValueError, match="x="):
        model(torch.randn(2, 3, 5))


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"neuron": "Izhikevich"}, "neuron"),
        ({"encoding": "latency"}, "encoding"),
        ({"T": 0}, "T"),
        ({"layers": 0}, "layers"),
        ({"hidden": 0}, "hidden"),
        ({"in_dim": 0}, "in_dim"),
        ({"out_dim": 1}, "out_dim"),
        ({"gain": 0.0}, "gain"),
    ],
)
def test_snn_rejects_bad_arguments(kwargs, name):
    args = {"neuron": "UltraLIF", "in_dim": 4} | kwargs
    with pytest.raises(ValueError, match=f"{name}="):
        SNN(**args)


def test_encoders_reject_bad_inputs():
    with pytest.raises(ValueError, match="x="):
        rate_encode(torch.tensor([[0.5, 1.2]]), 2)
    with pytest.raises(ValueError, match="x="):
        rate_encode(torch.tensor([[0.5, float("nan")]]), 2)
    with pytest.raises(ValueError, match="x="):
        direct_encode(torch.zeros(2, 3, 4), 2)
    with pytest.raises(ValueError, match="T="):
        direct_encode(torch.zeros(2, 3), 0)
    with pytest.raises(ValueError, match="gain="):
        rate_encode(torch.zeros(2, 3), 2, gain=-1.0)
    with pytest.raises(ValueError, match="x="):
        SNN("LIF", 4)(torch.rand(2, 5))


def test_sparse_loss_rejects_negative_lambda():
    with pytest.raises(ValueError, match="lam="):
        sparse_loss(torch.randn(2, 3), torch.tensor([0, 1]), torch.tensor(0.1), -0.1)


def test_train_and_evaluate_reject_bad_data():
    X, y = _toy(20)
    model = SNN("LIF", 6, 2, hidden=4)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="X_train="):
        train(model, bad, y, 1, 0)
    with pytest.raises(ValueError, match="X_train, y_train"):
        train(model, X, y[:-1], 1, 0)
    with pytest.raises(ValueError, match="y_train="):
        train(model, X, y.astype(float), 1, 0)
    with pytest.raises(ValueError, match="epochs="):
        train(model, X, y, 0, 0)
    with pytest.raises(ValueError, match="lr="):
        train(model, X, y, 1, 0, lr=0.0)
    with pytest.raises(ValueError, match="seed="):
        evaluate(model, X, y, seed=-1)
    with pytest.raises(ValueError, match="y_test="):
        evaluate(model, X, -y - 1, seed=0)
