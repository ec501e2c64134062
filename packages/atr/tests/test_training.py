"""Closed-set answer scoring against a per-candidate loop, the objectives, and a short fine-tuning run."""

import numpy as np
import pytest
import torch
from icml26_atr import (
    METHODS,
    ATRSettings,
    TinyVLM,
    answer_log_likelihoods,
    default_vocabulary,
    encode_qa,
    fine_tune,
    long_tailed_task,
    make_objective,
    shot_bins,
)
from icml26_atr.data import FASHION_ANSWERS, IGNORE, QUESTION
from icml26_atr.method import BoundedAdaptiveLoss, token_log_probs


def test_answer_scores_match_a_loop_over_candidates():
    vocab = default_vocabulary()
    torch.manual_seed(0)
    model = TinyVLM(len(vocab), image_size=8, patch_size=2, d_model=16, heads=2).eval()
    images = torch.rand(3, 1, 8, 8)
    scores = answer_log_likelihoods(model, images, vocab, FASHION_ANSWERS, chunk=2)
    for c in (0, 9):  # "t-shirt" and the two-word "ankle boot"
        text, targets = (torch.as_tensor(a) for a in encode_qa(vocab, QUESTION, FASHION_ANSWERS, np.full(3, c)))
        with torch.no_grad():
            log_p = torch.log_softmax(model(images, text), -1)
        ref = sum(log_p[:, t, targets[0, t]] for t in range(targets.shape[1]) if targets[0, t] != IGNORE)
        assert torch.allclose(scores[:, c], ref, atol=1e-5)
    features = model.encode_images(images)
    assert torch.allclose(answer_log_likelihoods(model, images, vocab, FASHION_ANSWERS, features=features), scores)


@pytest.mark.parametrize("method", METHODS)
def test_every_objective_gives_a_finite_differentiable_loss(method):
    vocab = default_vocabulary()
    model = TinyVLM(len(vocab), image_size=8, patch_size=2, d_model=16, heads=2)
    text, targets = (torch.as_tensor(a) for a in encode_qa(vocab, QUESTION, FASHION_ANSWERS, np.arange(10)))
    prior = torch.zeros(text.shape[1], len(vocab))
    objective = make_objective(method, ATRSettings(), prior, generator=torch.Generator().manual_seed(0))
    loss = objective(model, model.visual_tokens(torch.rand(10, 1, 8, 8)), text, targets)
    loss.backward()
    assert torch.isfinite(loss) and model.head.weight.grad.abs().sum() > 0


def test_objective_rejects_unknown_methods_and_missing_prior():
    with pytest.raises(ValueError, match="method="):
        make_objective("ldam", ATRSettings())
    with pytest.raises(ValueError, match="log_prior="):
        make_objective("logit_adjustment", ATRSettings())


def test_fine_tuning_learns_balanced_digits_and_freezes_the_vision_encoder():
    vocab = default_vocabulary()
    torch.manual_seed(0)
    model = TinyVLM(len(vocab), image_size=8, patch_size=2, d_model=32, heads=2)
    vision = model.patch_embed.weight.detach().clone()
    task = long_tailed_task("digits", 100, 1.0, 20, seed=0)  # balanced: 100 per class
    history = fine_tune(model, task, vocab, "ce", ATRSettings(), 8, 32, 3e-3, 0, shot_bins(task.counts), 4)
    assert [h["epoch"] for h in history] == [0, 4, 8]
    assert history[-1]["acc"] > 0.5  # chance is 0.1
    assert torch.equal(model.patch_embed.weight, vision)


def test_evaluating_along_the_way_does_not_change_the_trained_model():
    vocab = default_vocabulary()
    task = long_tailed_task("digits", 30, 10.0, 5, seed=1)
    states = []
    for eval_every in (1, 0):
        torch.manual_seed(0)
        model = TinyVLM(len(vocab), image_size=8, patch_size=2, d_model=16, heads=2)
        history = fine_tune(
            model, task, vocab, "atr", ATRSettings(), 2, 16, 3e-3, 0, shot_bins(task.counts), eval_every
        )
        states.append(model.state_dict())
    assert [h["epoch"] for h in history] == [2]  # eval_every=0: at the end only
    assert all(torch.equal(states[0][k], states[1][k]) for k in states[0])


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"epochs": 0}, "epochs"),
        ({"batch_size": 0}, "batch_size"),
        ({"lr": 0.0}, "lr"),
        ({"eval_every": -1}, "eval_every"),
    ],
)
def test_fine_tune_rejects_bad_settings(kwargs, name):
    vocab = default_vocabulary()
    task = long_tailed_task("digits", 20, 2.0, 2, seed=0)
    args = {"epochs": 1, "batch_size": 8, "lr": 1e-3, "eval_every": 0} | kwargs
    model = TinyVLM(len(vocab), image_size=8, patch_size=2, d_model=16, heads=2)
    with pytest.raises(ValueError, match=f"{name}="):
        fine_tune(model, task, vocab, "ce", ATRSettings(), seed=0, bins=shot_bins(task.counts), **args)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"r_max": 1.5}, "r_max"),
        ({"lambda_full": 0.0}, "lambda_full"),
        ({"kl": -1.0}, "kl"),
        ({"quantile": 1.0}, "quantile"),
    ],
)
def test_settings_reject_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        ATRSettings(**kwargs)


def test_a_float64_model_trains_and_scores_in_float64():
    """float32 pixels go into a float64 VLM, and neither the token loss, ATR's running threshold nor the answer
    scores fall back to float32 (issue 27: float32 rounding differences between CPUs grew through training)."""
    vocab = default_vocabulary()
    torch.manual_seed(0)
    model = TinyVLM(len(vocab), image_size=8, patch_size=2, d_model=16, heads=2).double()
    images = torch.rand(3, 1, 8, 8)
    text, targets = (torch.as_tensor(a) for a in encode_qa(vocab, QUESTION, FASHION_ANSWERS, np.arange(3)))
    logits = model(images, text)
    assert logits.dtype == torch.float64 and token_log_probs(logits, targets).dtype == torch.float64
    loss_fn = BoundedAdaptiveLoss()
    assert loss_fn(logits, targets).dtype == torch.float64 and loss_fn.tau.dtype == torch.float64
    assert answer_log_likelihoods(model, images, vocab, FASHION_ANSWERS).dtype == torch.float64
