"""The top-k SAE, feature selection and the intervention rule: references, invariants, bad inputs."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_emotion_sae import (
    TopKSAE,
    activation_rates,
    emotion_scores,
    explained_variance,
    feature_intervention,
    mean_active_values,
    sae_quality,
    select_features,
    train_sae,
)


def make_sae(d_in=8, d_sae=32, k=4, seed=0):
    sae = TopKSAE(d_in, d_sae, k, torch.Generator().manual_seed(seed))
    with torch.no_grad():
        sae.b_enc.normal_(0, 0.1, generator=torch.Generator().manual_seed(seed + 1))
        sae.b_dec.normal_(0, 0.1, generator=torch.Generator().manual_seed(seed + 2))
    return sae


@given(st.integers(1, 12), st.integers(0, 1000))
def test_encode_matches_brute_force_topk(k, seed):
    """z keeps the k largest pre-activations (h - b_dec) W_enc + b_enc, ReLU'd; everything else is 0."""
    sae = make_sae(k=k, seed=seed)
    h = torch.randn(5, 8, generator=torch.Generator().manual_seed(seed))
    z = sae.encode(h)
    pre = ((h - sae.b_dec) @ sae.W_enc + sae.b_enc).detach()
    for row in range(5):
        order = pre[row].argsort(descending=True)
        expected = torch.zeros(32)
        expected[order[:k]] = pre[row, order[:k]].clamp(min=0)
        torch.testing.assert_close(z[row].detach(), expected)
    assert ((z > 0).sum(-1) <= k).all()


def test_decoder_rows_stay_unit_norm_and_training_explains_variance():
    g = torch.Generator().manual_seed(0)
    basis = torch.randn(6, 16, generator=g)
    codes = torch.rand(2000, 6, generator=g) * (torch.rand(2000, 6, generator=g) < 0.3)
    h = codes @ basis + 3.0  # sparse data with an offset that b_dec must absorb
    sae = TopKSAE(16, 24, 6, torch.Generator().manual_seed(1))
    losses = train_sae(sae, h, steps=300, batch=128, lr=1e-2, generator=g)
    torch.testing.assert_close(sae.W_dec.norm(dim=1), torch.ones(24))
    quality = sae_quality(sae, h)
    assert quality.explained_variance > 0.95 and losses[-1] < 0.1 * losses[0]
    assert quality.l0 <= 6 and 0 <= quality.dead_features <= 24


def test_parallel_gradient_is_removed():
    sae = make_sae()
    sae.W_dec.grad = torch.randn_like(sae.W_dec)
    sae.remove_parallel_gradient()
    torch.testing.assert_close((sae.W_dec.grad * sae.W_dec).sum(1), torch.zeros(32), atol=1e-6, rtol=0)


def test_explained_variance_limits():
    h = torch.randn(50, 4)
    assert explained_variance(h, h) == pytest.approx(1.0)
    assert explained_variance(h, h.mean(0).expand_as(h)) == pytest.approx(0.0, abs=1e-6)


def test_activation_rates_by_hand():
    z = torch.zeros(2, 4, 3)
    z[0, 0, 0] = z[0, 1, 0] = z[0, 3, 1] = 1.0  # frame 3 of sentence 0 is padding (length 3)
    z[1, 0, 2] = 2.0
    mask = torch.tensor([[True, True, True, False], [True] * 4])
    torch.testing.assert_close(activation_rates(z, mask), torch.tensor([[2 / 3, 0, 0], [0, 0, 1 / 4]]))
    torch.testing.assert_close(activation_rates(z, mask, "any"), torch.tensor([[1.0, 0, 0], [0, 0, 1]]))


def test_scores_select_the_feature_that_fires_more_on_the_emotion():
    rates_e = torch.tensor([[0.1, 0.9, 0.5], [0.2, 0.7, 0.5]])
    rates_n = torch.tensor([[0.1, 0.1, 0.6]])
    scores = emotion_scores(rates_e, rates_n)
    torch.testing.assert_close(scores, torch.tensor([0.05, 0.7, -0.1]))
    assert select_features(scores, 2).tolist() == [1, 0]


def test_select_features_breaks_ties_by_index():
    """Equal Delta_j keep the lowest indices, in index order (a stable sort, not whatever topk returns)."""
    assert select_features(torch.zeros(384), 8).tolist() == list(range(8))
    scores = torch.zeros(64)
    scores[[5, 40]] = 1.0
    scores[10:30] = 0.5  # a block of 20 equal scores
    assert select_features(scores, 8).tolist() == [5, 40, 10, 11, 12, 13, 14, 15]


def test_mean_active_values():
    z = torch.tensor([[0.0, 2.0], [4.0, 0.0], [2.0, 0.0]])
    torch.testing.assert_close(mean_active_values(z), torch.tensor([3.0, 2.0]))


@given(st.integers(0, 1000), st.sampled_from(["add", "clamp", "scale"]))
def test_empty_edit_is_an_exact_no_op(seed, mode):
    """Strength 0 with 'add'/'scale' changes no feature; the error-preserving splice returns h exactly."""
    sae = make_sae(seed=seed)
    h = torch.randn(3, 5, 8, generator=torch.Generator().manual_seed(seed))
    values = torch.rand(32)
    if mode == "clamp":  # clamping to the current value is also no change
        z = sae.encode(h)
        features = torch.tensor([int(z[0, 0].argmax())])
        hook = feature_intervention(sae, features, "clamp", 1.0, z[0, 0])
        torch.testing.assert_close(hook(h[:1, :1]), h[:1, :1])
        return
    hook = feature_intervention(sae, torch.tensor([1, 5]), mode, 0.0, values)
    torch.testing.assert_close(hook(h), h)


def test_add_moves_along_the_decoder_rows_and_scale_one_zeroes_the_features():
    sae = make_sae()
    h = torch.randn(4, 8)
    values = torch.rand(32)
    F = torch.tensor([3, 7])
    delta = feature_intervention(sae, F, "add", 2.0, values)(h) - h
    expected = 2.0 * values[F] @ sae.W_dec[F]
    torch.testing.assert_close(delta, expected.expand_as(delta), atol=1e-5, rtol=1e-5)
    z = sae.encode(h)
    F = z[0].nonzero().squeeze(1)[:2]
    edited = feature_intervention(sae, F, "scale", 1.0)(h)
    # h' = h - z_F W_dec[F]: the features' decoded contribution is removed, the SAE error stays in h
    torch.testing.assert_close(edited, h - z[:, F] @ sae.W_dec[F], atol=1e-5, rtol=1e-5)


def test_saelens_layout():
    sae = make_sae()
    state = sae.saelens_state_dict()
    assert {k: tuple(v.shape) for k, v in state.items()} == {
        "W_enc": (8, 32),
        "W_dec": (32, 8),
        "b_enc": (32,),
        "b_dec": (8,),
    }


@pytest.mark.parametrize(
    ("kwargs", "name"), [({"k": 0}, "k"), ({"k": 33}, "k"), ({"d_sae": 0}, "d_sae"), ({"d_in": 0}, "d_in")]
)
def test_sae_rejects_bad_sizes(kwargs, name):
    args = {"d_in": 8, "d_sae": 32, "k": 4, **kwargs}
    with pytest.raises(ValueError, match=f"{name}="):
        TopKSAE(**args)


def test_sae_rejects_wrong_width_and_nonfinite_states():
    sae = make_sae()
    with pytest.raises(ValueError, match=r"h=\(3, 5\).*d_in=8"):
        sae.encode(torch.zeros(3, 5))
    with pytest.raises(ValueError, match="h=.*finite"):
        sae.encode(torch.full((2, 8), float("nan")))


def test_intervention_rejects_bad_arguments():
    sae, values = make_sae(), torch.rand(32)
    with pytest.raises(ValueError, match="mode='boost'"):
        feature_intervention(sae, torch.tensor([1]), "boost", 1.0, values)
    with pytest.raises(ValueError, match=r"features=\[32\]"):
        feature_intervention(sae, torch.tensor([32]), "add", 1.0, values)
    with pytest.raises(ValueError, match=r"features=\[1, 1\].*distinct"):
        feature_intervention(sae, torch.tensor([1, 1]), "add", 1.0, values)
    with pytest.raises(ValueError, match="strength=inf"):
        feature_intervention(sae, torch.tensor([1]), "add", float("inf"), values)
    with pytest.raises(ValueError, match="strength=nan"):
        feature_intervention(sae, torch.tensor([1]), "add", float("nan"), values)
    with pytest.raises(ValueError, match="strength=1.5"):
        feature_intervention(sae, torch.tensor([1]), "scale", 1.5)
    with pytest.raises(ValueError, match="strength=-0.5"):
        feature_intervention(sae, torch.tensor([1]), "scale", -0.5)
    with pytest.raises(ValueError, match="values=None"):
        feature_intervention(sae, torch.tensor([1]), "add", 1.0)


def test_selection_rejects_bad_inputs():
    with pytest.raises(ValueError, match="rates_neutral=.*non-empty"):
        emotion_scores(torch.rand(3, 4), torch.zeros(0, 4))
    with pytest.raises(ValueError, match="rates_emotion=.*non-empty"):
        emotion_scores(torch.zeros(0, 4), torch.rand(3, 4))
    with pytest.raises(ValueError, match="m=5"):
        select_features(torch.rand(4), 5)
    with pytest.raises(ValueError, match="scores=.*finite"):
        select_features(torch.tensor([0.1, float("nan")]), 1)
    with pytest.raises(ValueError, match=r"(?s)scores=.*1-d"):
        select_features(torch.zeros(2, 3), 1)
    with pytest.raises(ValueError, match="rule='all'"):
        activation_rates(torch.rand(2, 3, 4), torch.ones(2, 3, dtype=torch.bool), "all")
    with pytest.raises(ValueError, match="mask="):
        activation_rates(torch.rand(2, 3, 4), torch.tensor([[False] * 3, [True] * 3]))
