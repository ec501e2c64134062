import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_sateen import ReferenceSubspace, SaTeen, SmallCNN, collect_params, cross_entropy, entropy
from sklearn.decomposition import PCA
from torch import nn


def _model(seed=0):
    torch.manual_seed(seed)
    return SmallCNN(1, 10, width=8)


def test_entropy_of_uniform_is_log_c_and_of_one_hot_is_zero():
    assert torch.allclose(entropy(torch.zeros(2, 10)), torch.full((2,), math.log(10)))
    assert entropy(torch.tensor([[100.0, 0.0, 0.0]])).item() < 1e-6


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000))
def test_cross_entropy_is_gibbs_bounded_and_matches_numpy(seed):
    g = torch.Generator().manual_seed(seed)
    z, z2 = torch.randn(4, 6, generator=g) * 3, torch.randn(4, 6, generator=g) * 3
    ce = cross_entropy(z, z2)
    p = z.softmax(1).numpy() + 1e-8
    q = z2.softmax(1).numpy() + 1e-8
    p, q = p / p.sum(1, keepdims=True), q / q.sum(1, keepdims=True)
    assert np.allclose(ce.numpy(), -(q * np.log(p)).sum(1), atol=1e-5)
    assert (ce >= entropy(z2) - 1e-4).all()  # Gibbs: CE(q, p) >= H(q), equality at p = q
    assert torch.allclose(cross_entropy(z, z), entropy(z), atol=1e-4)


def test_cross_entropy_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="logits_prime="):
        cross_entropy(torch.zeros(2, 10), torch.zeros(2, 9))


def test_subspace_matches_sklearn_pca_span_and_vanishes_on_it():
    rng = np.random.default_rng(0)
    data = rng.normal(size=(64, 3)) @ rng.normal(size=(3, 10))  # rank 3 in R^10
    sub = ReferenceSubspace(10, 3, batch_size=32)
    sub.add(torch.from_numpy(data[:32]))
    sub.add(torch.from_numpy(data[32:]))
    U = sub.basis(torch.zeros(1, dtype=torch.float64)).numpy()
    V = PCA(3).fit(data).components_.T
    assert np.allclose(U @ U.T, V @ V.T, atol=1e-8)  # same projector as a batch PCA
    inside = torch.from_numpy(rng.normal(size=(5, 3)) @ U.T)
    assert sub.reconstruction_error(inside).max() < 1e-8


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000))
def test_reconstruction_error_is_the_norm_of_the_orthogonal_residual(seed):
    rng = np.random.default_rng(seed)
    sub = ReferenceSubspace(10, 4, batch_size=32)
    sub.add(torch.from_numpy(rng.normal(size=(40, 10))))
    z = torch.from_numpy(rng.normal(size=(7, 10)))
    U = sub.basis(z)
    err = sub.reconstruction_error(z)
    assert torch.allclose(err**2 + ((z @ U) ** 2).sum(1), (z**2).sum(1))  # Pythagoras
    assert torch.allclose(U.T @ U, torch.eye(4, dtype=z.dtype), atol=1e-10)


def test_subspace_waits_for_a_full_ipca_batch():
    sub = ReferenceSubspace(10, 4, batch_size=32)
    sub.add(torch.randn(20, 10))
    assert not sub.fitted
    with pytest.raises(RuntimeError, match="partial_fit"):
        sub.basis(torch.zeros(1))
    sub.add(torch.randn(12, 10))
    assert sub.fitted and sub.buffer == []


@pytest.mark.parametrize("k", [0, 10, 11])
def test_rejects_k_outside_one_to_c_minus_one(k):
    with pytest.raises(ValueError, match="k="):
        ReferenceSubspace(10, k)


def test_official_k_and_ipca_batch_construct_and_fit_k_components():
    """Issue 20: k = 64 with IPCA batch 32 (the documented official defaults) and C = 1000 construct; the first
    fit waits for max(32, 64) = 64 reliable logits and always has k components."""
    sub = ReferenceSubspace(1000, 64, batch_size=32)
    assert sub.flush_size == 64
    rng = np.random.default_rng(0)
    sub.add(torch.from_numpy(rng.normal(size=(48, 1000))))
    assert not sub.fitted  # 48 < k: scikit-learn would refuse this partial fit
    sub.add(torch.from_numpy(rng.normal(size=(48, 1000))))
    assert sub.fitted and sub.ipca.components_.shape == (64, 1000) and sub.buffer == []
    model = nn.Sequential(nn.Flatten(), nn.Linear(4, 1000), nn.BatchNorm1d(1000))
    adapter = SaTeen(model, num_classes=1000)
    assert adapter.subspace.k == 64 and adapter.subspace.flush_size == 64


def test_rejects_a_non_positive_ipca_batch():
    with pytest.raises(ValueError, match="batch_size=0"):
        ReferenceSubspace(10, 4, batch_size=0)


def test_reset_returns_sateen_to_the_source_state():
    """Issue 16.12: after reset() the adapter behaves exactly as a fresh one on the same stream."""
    stream = [torch.rand(16, 1, 8, 8, generator=torch.Generator().manual_seed(i)) for i in range(4)]
    kwargs = {"lr": 0.1, "margin": 5.0, "k": 4, "ipca_batch": 8, "warmup": 0}
    fresh = SaTeen(_model(), 10, generator=torch.Generator().manual_seed(0), **kwargs)
    expected = [fresh(x) for x in stream]
    adapter = SaTeen(_model(), 10, generator=torch.Generator().manual_seed(0), **kwargs)
    for x in stream[::-1]:
        adapter(x)
    assert adapter.subspace.fitted and adapter.steps > 0
    adapter.reset()
    assert not adapter.subspace.fitted and adapter.steps == adapter.seen == adapter.selected == 0
    for x, logits in zip(stream, expected, strict=True):
        torch.testing.assert_close(adapter(x), logits, rtol=0, atol=0)


def test_sateen_adapts_only_norm_affine_parameters_and_returns_pre_update_logits():
    model = _model()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    x = torch.rand(16, 1, 8, 8)
    with torch.no_grad():
        expected = model.train()(x)
    adapter = SaTeen(model, 10, lr=0.1, margin=5.0, k=4, warmup=0, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(adapter(x), expected, atol=1e-6)
    norm_ids = {id(p) for p in collect_params(model)}
    changed = {n for n, p in model.named_parameters() if not torch.equal(p, before[n])}
    assert changed and all(id(p) in norm_ids for n, p in model.named_parameters() if n in changed)
    assert 0 < adapter.reliable_fraction <= 1


def test_sateen_without_reliable_samples_does_not_update():
    model = _model()
    adapter = SaTeen(model, 10, lr=0.1, margin=1e-9, lambda_1=0.0, k=4)  # l1 = H >= 0 is never < 1e-9
    before = [p.detach().clone() for p in collect_params(model)]
    adapter(torch.rand(8, 1, 8, 8))
    assert all(torch.equal(a, b) for a, b in zip(before, collect_params(model), strict=True))
    assert adapter.reliable_fraction == 0.0 and adapter.steps == 0


def test_sateen_loss_matches_hand_computation_and_inter_term_switches_on_after_warmup():
    model = _model()
    x = torch.rand(40, 1, 8, 8)
    a = SaTeen(model, 10, lr=0.1, margin=5.0, k=4, warmup=1, ipca_batch=32, generator=torch.Generator().manual_seed(3))
    logits = model(x)
    loss, reliable = a.loss(x, logits)
    assert reliable.all()  # margin 5 > ln 10 >= H
    with torch.no_grad():
        z2 = model(__import__("icml26_sateen").disrupt(x, "patch", 4, torch.Generator().manual_seed(3)))
    l1 = entropy(logits) - 0.4 * cross_entropy(logits, z2).clamp_max(math.log(1000))
    coeff = torch.exp(5.0 - l1.detach())
    U = a.subspace.basis(logits)  # fitted on these 40 reliable logits, warm-up of 1 step reached
    rec = (logits - logits @ U @ U.T).norm(dim=1)
    assert torch.allclose(loss, (l1 * coeff).mean() + 0.05 * (rec * coeff).mean(), rtol=1e-5)


def test_sateen_is_deterministic_given_the_generator():
    x = torch.rand(16, 1, 8, 8)
    outs = []
    for _ in range(2):
        model = _model()
        a = SaTeen(model, 10, lr=0.1, k=4, generator=torch.Generator().manual_seed(7))
        a(x)
        outs.append(a(x))
    assert torch.equal(outs[0], outs[1])


@pytest.mark.parametrize("name", ["lambda_1", "lambda_2"])
def test_rejects_negative_weights(name):
    with pytest.raises(ValueError, match=f"{name}="):
        SaTeen(_model(), 10, **{name: -0.1}, k=4)


def test_rejects_k_not_below_classes():
    with pytest.raises(ValueError, match="k="):
        SaTeen(_model(), 10, k=10)


def test_rejects_model_without_norm_layers():
    with pytest.raises(ValueError, match="model="):
        SaTeen(nn.Sequential(nn.Flatten(), nn.Linear(64, 10)), 10, k=4)


def test_rejects_unknown_disruption():
    with pytest.raises(ValueError, match="kind="):
        SaTeen(_model(), 10, k=4, kind="rotate")


def test_rejects_empty_batch():
    with pytest.raises(ValueError, match="x="):
        SaTeen(_model(), 10, k=4)(torch.rand(0, 1, 8, 8))


def test_rejects_batch_that_does_not_match_the_model():
    with pytest.raises(ValueError, match="x="):
        SaTeen(_model(), 10, k=4)(torch.rand(4, 3, 8, 8))


def test_rejects_logits_of_another_class_count():
    with pytest.raises(ValueError, match="model\\(x\\)="):
        SaTeen(_model(), 5, k=2)(torch.rand(4, 1, 8, 8))
