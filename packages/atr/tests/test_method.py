"""ATR's bounded adaptive loss and visual token mask: limits, invariants, references and bad inputs."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st
from icml26_atr import BoundedAdaptiveLoss, TinyVLM, bounded_token_loss, token_weights, two_view_loss, visual_token_mask
from icml26_atr.baselines import token_cross_entropy
from icml26_atr.data import IGNORE
from icml26_atr.method import token_log_probs


def batch(seed=0, b=6, t=4, v=7):
    g = torch.Generator().manual_seed(seed)
    logits = 3 * torch.randn(b, t, v, generator=g)
    targets = torch.randint(0, v, (b, t), generator=g)
    targets[:, 0] = IGNORE  # a question position
    return logits, targets


def test_token_log_probs_match_cross_entropy_and_skip_ignored():
    logits, targets = batch()
    ref = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE, reduction="none")
    ref = ref[targets.flatten() != IGNORE]
    assert torch.allclose(-token_log_probs(logits, targets), ref, atol=1e-6)


def test_no_filter_no_reweighting_no_bound_is_cross_entropy():
    logits, targets = batch()
    loss = BoundedAdaptiveLoss(quantile=0.0, gamma=0.0).train()
    assert torch.allclose(loss(logits, targets), token_cross_entropy(logits, targets), atol=1e-6)


def test_filter_keeps_tokens_at_or_above_the_batch_quantile():
    logits, targets = batch(1, b=40)
    loss_fn = BoundedAdaptiveLoss(quantile=0.5, momentum=0.0, gamma=0.0).train()
    ell = -token_log_probs(logits, targets)
    keep = ell >= torch.quantile(ell, 0.5)
    assert torch.allclose(loss_fn(logits, targets), ell[keep].mean(), atol=1e-6)  # brute force, eq. (6)
    assert loss_fn.tau.item() == pytest.approx(torch.quantile(ell, 0.5).item(), rel=1e-6)


def test_running_threshold_is_an_exponential_average_and_frozen_in_eval():
    loss_fn = BoundedAdaptiveLoss(quantile=0.3, momentum=0.9).train()
    a, b = batch(2), batch(3)
    qa = torch.quantile(-token_log_probs(*a), 0.3)
    qb = torch.quantile(-token_log_probs(*b), 0.3)
    loss_fn(*a)
    loss_fn(*b)
    assert loss_fn.tau.item() == pytest.approx((0.9 * qa + 0.1 * qb).item(), rel=1e-6)
    loss_fn.eval()
    loss_fn(*batch(4))
    loss_fn.train()
    loss_fn(*batch(5), update=False)
    assert loss_fn.tau.item() == pytest.approx((0.9 * qa + 0.1 * qb).item(), rel=1e-6)


@given(st.integers(0, 10_000), st.floats(0.0, 3.0), st.floats(1.0, 10.0))
def test_weights_are_bounded_and_mean_one_without_clipping(seed, gamma, w_max):
    p = torch.rand(30, generator=torch.Generator().manual_seed(seed))
    keep = torch.rand(30, generator=torch.Generator().manual_seed(seed + 1)) < 0.7
    keep[0] = True
    w = token_weights(p, keep, gamma, w_max)
    assert (w >= 0).all() and (w <= w_max + 1e-6).all()
    unclipped = token_weights(p, keep, gamma, 1e9)
    assert unclipped[keep].mean().item() == pytest.approx(1.0, rel=1e-4)
    assert not w.requires_grad


def test_weights_favour_hard_tokens():
    w = token_weights(torch.tensor([0.9, 0.5, 0.1]), torch.ones(3, dtype=torch.bool), gamma=1.0, w_max=5.0)
    assert w[0] < w[1] < w[2]


def test_bounds_limits():
    log_p = torch.log(torch.tensor([1e-6, 1e-2, 0.5, 1.0]))
    assert torch.allclose(bounded_token_loss(log_p, "none"), -log_p)
    truncated = bounded_token_loss(log_p, "truncate", eps=1e-3)
    assert torch.allclose(truncated, torch.clamp(-log_p, max=-math.log(1e-3)))
    gce = bounded_token_loss(log_p, "gce", q=0.7)
    assert (gce <= 1 / 0.7).all() and gce[-1].abs() < 1e-6
    # GCE -> CE as q -> 0 (Zhang & Sabuncu 2018)
    assert torch.allclose(bounded_token_loss(log_p[1:], "gce", q=1e-4), -log_p[1:], rtol=1e-3)


def test_truncated_loss_has_no_gradient_above_the_bound():
    logits = torch.tensor([[[10.0, -10.0]]], requires_grad=True)
    loss = BoundedAdaptiveLoss(quantile=0.0, gamma=0.0, bound="truncate", eps=1e-3)(logits, torch.tensor([[1]]))
    loss.backward()
    assert logits.grad.abs().max() == 0


def test_all_tokens_filtered_gives_zero_loss_with_a_graph():
    logits, targets = batch()
    loss_fn = BoundedAdaptiveLoss(quantile=0.3)
    loss_fn.tau.fill_(1e9)  # a threshold above every token loss
    logits.requires_grad_(True)
    loss = loss_fn.eval()(logits, targets)
    loss.backward()
    assert loss.item() == 0.0


@given(st.integers(1, 40), st.integers(1, 40), st.floats(0.0, 1.0), st.integers(0, 1000))
def test_visual_mask_masks_one_count_per_step(b, n, r_max, seed):
    mask = visual_token_mask(b, n, r_max, torch.Generator().manual_seed(seed))
    assert mask.shape == (b, n) and mask.dtype == torch.bool
    counts = mask.sum(1)
    assert (counts == counts[0]).all() and counts[0] <= round(r_max * n)


def test_visual_mask_zero_ratio_masks_nothing():
    assert not visual_token_mask(5, 16, 0.0).any()


def test_two_view_loss_equals_its_parts():
    torch.manual_seed(0)
    model = TinyVLM(12, image_size=8, patch_size=2, d_model=16, heads=2).eval()
    visual = model.visual_tokens(torch.rand(3, 1, 8, 8))
    text = torch.randint(0, 12, (3, 5))
    targets = torch.randint(0, 12, (3, 5))
    g1, g2 = torch.Generator().manual_seed(7), torch.Generator().manual_seed(7)
    got = two_view_loss(model, visual, text, targets, token_cross_entropy, 0.5, 1.0, 0.5, generator=g1)
    mask = visual_token_mask(3, visual.shape[1], 0.5, g2)
    ref = token_cross_entropy(model.language_model(visual, text), targets) + 0.5 * token_cross_entropy(
        model.language_model(visual, text, mask), targets
    )
    assert torch.allclose(got, ref, atol=1e-6)
    # r_max = 0: both views are the same, the loss is (1 + lambda_mask) CE
    same = two_view_loss(model, visual, text, targets, token_cross_entropy, 0.0, 1.0, 0.5, kl=1.0)
    assert torch.allclose(same, 1.5 * token_cross_entropy(model.language_model(visual, text), targets), atol=1e-5)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"quantile": 1.0}, "quantile"),
        ({"quantile": -0.1}, "quantile"),
        ({"momentum": 1.0}, "momentum"),
        ({"gamma": -1.0}, "gamma"),
        ({"w_max": 0.5}, "w_max"),
        ({"bound": "clip"}, "bound"),
        ({"bound": "truncate", "eps": 0.0}, "eps"),
        ({"bound": "gce", "q": 0.0}, "q"),
    ],
)
def test_loss_rejects_bad_constants(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        BoundedAdaptiveLoss(**kwargs)


def test_loss_rejects_bad_logits_and_targets():
    logits, targets = batch()
    loss_fn = BoundedAdaptiveLoss()
    with pytest.raises(ValueError, match="targets="):
        loss_fn(logits, targets[:, :2])
    with pytest.raises(ValueError, match="targets="):
        loss_fn(logits, torch.full_like(targets, IGNORE))  # an empty batch of scored tokens
    with pytest.raises(ValueError, match="targets="):
        loss_fn(logits, targets.clamp_min(0) + 100)
    with pytest.raises(ValueError, match="logits="):
        loss_fn(logits.index_fill(0, torch.tensor([0]), float("nan")), targets)


def test_mask_and_views_reject_bad_values():
    with pytest.raises(ValueError, match="r_max="):
        visual_token_mask(2, 4, 1.5)
    model = TinyVLM(12, image_size=8, patch_size=2, d_model=16, heads=2)
    visual, text = model.visual_tokens(torch.rand(2, 1, 8, 8)), torch.zeros(2, 3, dtype=torch.long)
    for kwargs, name in (
        ({"lambda_full": 0.0}, "lambda_full"),
        ({"lambda_mask": -1.0}, "lambda_mask"),
        ({"kl": -1.0}, "kl"),
    ):
        with pytest.raises(ValueError, match=f"{name}="):
            two_view_loss(model, visual, text, text, token_cross_entropy, **kwargs)
