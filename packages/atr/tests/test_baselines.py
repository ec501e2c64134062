"""CE, focal loss and logit adjustment against closed forms and torch's reference losses."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from icml26_atr import answer_log_prior, focal_loss, logit_adjusted_loss, token_cross_entropy
from icml26_atr.data import IGNORE


def batch(seed=0, b=5, t=3, v=6):
    g = torch.Generator().manual_seed(seed)
    targets = torch.randint(0, v, (b, t), generator=g)
    targets[:, 0] = IGNORE
    return 2 * torch.randn(b, t, v, generator=g), targets


def test_cross_entropy_is_torchs():
    logits, targets = batch()
    ref = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE)
    assert torch.allclose(token_cross_entropy(logits, targets), ref, atol=1e-6)


def test_focal_gamma_zero_is_cross_entropy_and_focal_down_weights_easy_tokens():
    logits, targets = batch()
    assert torch.allclose(focal_loss(logits, targets, 0.0), token_cross_entropy(logits, targets), atol=1e-6)
    easy = torch.tensor([[[5.0, 0.0]]])
    assert focal_loss(easy, torch.tensor([[0]]), 2.0) < 0.01 * token_cross_entropy(easy, torch.tensor([[0]]))
    p = torch.softmax(easy[0, 0], -1)[0]
    assert focal_loss(easy, torch.tensor([[0]]), 2.0).item() == pytest.approx(
        -((1 - p) ** 2 * p.log()).item(), rel=1e-4
    )


def test_logit_adjustment_is_cross_entropy_of_shifted_logits():
    logits, targets = batch()
    counts = np.array([50, 20, 5])
    prior = answer_log_prior(counts, [1, 2, 4], vocab_size=6, length=3, position=1)
    assert torch.all(prior[0] == 0) and torch.all(prior[2] == 0)
    pi = counts / counts.sum()
    assert torch.allclose(prior[1, [1, 2, 4]], torch.tensor(np.log(pi)))
    assert torch.allclose(prior[1, [0, 3, 5]], torch.tensor(np.log(pi.min())).expand(3))
    ref = F.cross_entropy((logits + 1.5 * prior.float()).flatten(0, 1), targets.flatten(), ignore_index=IGNORE)
    assert torch.allclose(logit_adjusted_loss(logits, targets, prior, 1.5), ref, atol=1e-6)


def test_logit_adjustment_with_a_uniform_prior_is_cross_entropy():
    logits, targets = batch()
    uniform = torch.full((6,), float(np.log(1 / 6)))
    assert torch.allclose(
        logit_adjusted_loss(logits, targets, uniform), token_cross_entropy(logits, targets), atol=1e-5
    )


def test_shared_first_words_add_their_priors():
    prior = answer_log_prior(np.array([3, 1]), [2, 2], vocab_size=4, length=2, position=0)
    assert prior[0, 2].item() == pytest.approx(0.0)  # both classes start with word 2: pi = 1


def test_baselines_reject_bad_inputs():
    logits, targets = batch()
    with pytest.raises(ValueError, match="gamma="):
        focal_loss(logits, targets, -1.0)
    with pytest.raises(ValueError, match="tau="):
        logit_adjusted_loss(logits, targets, torch.zeros(6), 0.0)
    with pytest.raises(ValueError, match="log_prior="):
        logit_adjusted_loss(logits, targets, torch.zeros(4))
    with pytest.raises(ValueError, match="counts="):
        answer_log_prior(np.array([3, 0]), [1, 2], 4, 2, 0)
    with pytest.raises(ValueError, match="position="):
        answer_log_prior(np.array([3, 1]), [1, 2], 4, 2, 5)
