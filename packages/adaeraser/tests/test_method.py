"""AdaEraser's suppression law, presence estimator and attention control: limits, equivalences, bad inputs."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_adaeraser import AdaptiveSuppression, HardSuppression, object_affinity, object_presence, suppress
from icml26_adaeraser.method import check_token_mask, suppression_bias


def _scores(seed, batch=2, heads=2, tokens=6):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(batch, heads, tokens, tokens, generator=g, dtype=torch.float64) * 2


MASK = torch.tensor([[0, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 1]], dtype=torch.float64)


@settings(deadline=None, max_examples=40)
@given(st.integers(0, 10_000), st.floats(0.0, 0.999))
def test_soft_suppression_is_output_gating(seed, lam):
    """eq. (1): softmax(S + m log(1 - lambda)) = renormalised softmax(S) with object keys scaled by (1 - lambda)."""
    scores = _scores(seed)
    got = suppress(scores, MASK, lam).softmax(-1)
    gated = scores.softmax(-1) * (1 - lam * MASK[:, None, None, :])
    torch.testing.assert_close(got, gated / gated.sum(-1, keepdim=True))


@settings(deadline=None, max_examples=20)
@given(st.integers(0, 10_000))
def test_hard_block_equals_softmax_over_background_keys(seed):
    """lambda = 1 is AttentiveEraser's S + M: zero attention on object keys, a softmax over the rest."""
    scores = _scores(seed)
    got = suppress(scores, MASK, 1.0).softmax(-1)
    for b in range(2):
        keep = MASK[b] == 0
        assert (got[b][..., ~keep] == 0).all()
        torch.testing.assert_close(got[b][..., keep], scores[b][..., keep].softmax(-1))


def test_limits_of_the_strength():
    scores = _scores(3)
    torch.testing.assert_close(suppress(scores, MASK, 0.0), scores)  # lambda = 0: untouched
    near_hard = suppress(scores, MASK, 1 - 1e-9).softmax(-1)
    torch.testing.assert_close(near_hard, suppress(scores, MASK, 1.0).softmax(-1), atol=1e-7, rtol=0)
    bias = suppression_bias(torch.ones(1, 1, 1, 1, dtype=torch.float64), MASK)
    assert bias[0, 0, 0, 1] == torch.finfo(torch.float64).min and bias[0, 0, 0, 0] == 0


def test_per_query_strength_edits_only_its_rows():
    scores = _scores(4)
    strength = torch.zeros(2, 1, 6, 1, dtype=torch.float64)
    strength[0, 0, 2] = 1.0  # only query 2 of image 0 is blocked
    out = suppress(scores, MASK, strength)
    changed = (out != scores).any(-1).any(1)  # (B, N) queries whose row changed
    assert changed[0].tolist() == [False, False, True, False, False, False] and not changed[1].any()


def test_object_affinity_matches_brute_force():
    scores = _scores(5)
    got = object_affinity(scores, MASK)
    for b in range(2):
        for i in range(6):
            rows = [scores[b, h, i].softmax(-1) for h in range(2)]
            expected = sum(sum(r[j] for j in range(6) if MASK[b, j]) for r in rows) / 2
            assert got[b, i].item() == pytest.approx(expected.item())


@settings(deadline=None, max_examples=30)
@given(st.integers(0, 10_000))
def test_presence_is_a_clipped_ratio(seed):
    source, edit = _scores(seed), _scores(seed + 1)
    p = object_presence(edit, source, MASK)
    assert p.shape == (2, 6) and (p >= 0).all() and (p <= 1).all()
    ratio = object_affinity(edit, MASK) / (object_affinity(source, MASK) + 1e-6)
    torch.testing.assert_close(p, ratio.clamp(max=1))
    same = object_presence(source, source, MASK)  # nothing removed yet: p = a / (a + delta), 1 up to delta
    assert ((1 - same) * object_affinity(source, MASK) <= 1.01e-6).all()


def test_presence_vanishes_when_the_object_region_is_ignored():
    source = _scores(7)
    edit = suppress(source, MASK, 1.0)  # an edited image whose queries no longer look at the object
    assert object_presence(edit, source, MASK).max() < 1e-6


def _control_scores(seed, branches, n=2):
    return _scores(seed, batch=branches * n)


def test_control_edits_only_the_last_branch_and_chosen_layers():
    control = HardSuppression(MASK, layers=[1])
    scores = _control_scores(0, 2)
    assert control(scores, 0) is None  # layer 0 not controlled: the denoiser keeps the scores
    out = control(scores, 1)
    torch.testing.assert_close(out[:2], scores[:2])
    torch.testing.assert_close(out[2:], suppress(scores[2:], MASK, 1.0))


def test_similarity_suppression_scales_masked_queries_during_ss_steps():
    control = HardSuppression(MASK, ss_steps=2, ss_scale=0.3)
    scores = _control_scores(1, 2)
    inside = MASK[:, None, :, None].bool()
    expected = suppress(torch.where(inside, 0.3 * scores[2:], scores[2:]), MASK, 1.0)
    control.step = 1
    torch.testing.assert_close(control(scores, 0)[2:], expected)
    control.step = 2  # after ss_steps: plain hard block
    torch.testing.assert_close(control(scores, 0)[2:], suppress(scores[2:], MASK, 1.0))


def test_adaptive_limits():
    scores = _control_scores(2, 3)
    zero = AdaptiveSuppression(MASK, lambda_max=0.0)
    assert zero(scores, 0) is None  # lambda_max = 0: no suppression
    same = scores.clone()
    same[4:] = same[:2]  # edited image identical to the source: full presence, AdaEraser = hard blocking
    out = AdaptiveSuppression(MASK)(same, 0)[4:].softmax(-1)
    torch.testing.assert_close(out, suppress(same[4:], MASK, 1.0).softmax(-1), atol=1e-3, rtol=0)


@pytest.mark.parametrize(
    ("mask", "message"),
    [
        (torch.zeros(2, 6), "empty"),
        (torch.ones(2, 6), "every token"),
        (torch.full((2, 6), 0.5), "non-binary"),
        (torch.zeros(2, 5), r"\(2, 5\)"),
    ],
)
def test_bad_token_masks(mask, message):
    with pytest.raises(ValueError, match=f"token_mask=.*{message}"):
        check_token_mask(mask, 2, 6)


def test_bad_strengths_and_parameters():
    scores = _scores(0)
    with pytest.raises(ValueError, match="strength="):
        suppress(scores, MASK, 1.5)
    with pytest.raises(ValueError, match="strength="):
        suppress(scores, MASK, torch.full((2, 1, 6, 1), -0.1, dtype=torch.float64))
    with pytest.raises(ValueError, match="lambda_max="):
        AdaptiveSuppression(MASK, lambda_max=1.2)
    with pytest.raises(ValueError, match="ss_scale="):
        HardSuppression(MASK, ss_scale=0.0)
    with pytest.raises(ValueError, match="ss_steps="):
        HardSuppression(MASK, ss_steps=-1)
    with pytest.raises(ValueError, match="scores="):
        HardSuppression(MASK)(_scores(0, batch=3), 0)
    with pytest.raises(ValueError, match="source_scores="):
        object_presence(scores, scores[:1], MASK)
