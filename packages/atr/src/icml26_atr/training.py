"""Pre-training, long-tailed fine-tuning with each objective, and closed-set evaluation of the tiny VLM.

* ``pretrain``: the balanced auxiliary task, "how is the image rotated ?" over four rotations drawn
  uniformly (Gidaris et al. 2018), on images the fine-tuning never uses; no class labels.
* ``fine_tune``: AdamW on the long-tailed answer task with one of ``METHODS``, instance-balanced batches (the
  plain sampler: nothing in the loop knows the class counts except the logit-adjustment oracle).
* ``answer_log_likelihoods`` / ``evaluate``: every class answer is scored as a sequence
  (sum of log p over its tokens and ``<eos>``), the prediction is the best one; accuracies on the balanced
  test set, overall and per many/medium/few-shot bin.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from icml26_shared import check_choice, check_int, check_positive, derive

from .baselines import answer_log_prior, focal_loss, logit_adjusted_loss, token_cross_entropy
from .data import IGNORE, QUESTION, ROTATION_ANSWERS, ROTATION_QUESTION, SHOTS, LongTailedTask, Vocabulary, encode_qa
from .method import at_least_float32, two_view_loss
from .model import TinyVLM
from .portable import AdamW, log_softmax
from .settings import METHODS, ATRSettings

VISION_PARAMETERS = ("patch_embed", "vision_pos", "vision.")  # the frozen vision encoder


Objective = Callable[[TinyVLM, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


def make_objective(
    method: str,
    settings: ATRSettings,
    log_prior: torch.Tensor | None = None,
    focal_gamma: float = 2.0,
    la_tau: float = 1.0,
    generator: torch.Generator | None = None,
) -> Objective:
    """``objective(model, visual, text, targets) -> loss`` for one of ``METHODS``; ``visual`` are the projected
    visual tokens (b, n, d) that the language model reads."""
    check_choice("method", method, METHODS)
    if method == "ce":
        return lambda m, v, t, y: token_cross_entropy(m.language_model(v, t), y)
    if method == "focal":
        return lambda m, v, t, y: focal_loss(m.language_model(v, t), y, focal_gamma)
    if method == "logit_adjustment":
        if log_prior is None:
            raise ValueError("log_prior=None: expected the training prior (answer_log_prior) for logit adjustment")
        return lambda m, v, t, y: logit_adjusted_loss(m.language_model(v, t), y, log_prior, la_tau)
    views = dict(
        r_max=settings.r_max,
        lambda_full=settings.lambda_full,
        lambda_mask=settings.lambda_mask,
        kl=settings.kl,
        generator=generator,
    )
    if method == "atr_vtm":
        return lambda m, v, t, y: two_view_loss(m, v, t, y, token_cross_entropy, **views)
    bal = settings.loss()
    if method == "atr_bal":
        return lambda m, v, t, y: bal.to(v.device)(m.language_model(v, t), y)
    return lambda m, v, t, y: two_view_loss(m, v, t, y, bal.to(v.device), **views)


def _rotate(images: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    out = images.clone()
    for quarter in range(1, 4):
        sel = k == quarter
        out[sel] = torch.rot90(images[sel], quarter, dims=(2, 3))
    return out


def pretrain(
    model: TinyVLM, images: np.ndarray, vocab: Vocabulary, steps: int, batch_size: int, lr: float, seed: int
) -> list[float]:
    """Train ``model`` in place on the rotation question; returns the loss per step."""
    check_int("steps", steps, 1)
    check_int("batch_size", batch_size, 1)
    check_positive("lr", lr)
    device = next(model.parameters()).device
    rng = np.random.default_rng(derive(seed, "pretrain"))
    x_all = torch.as_tensor(images, device=device)
    optimizer = AdamW(model.parameters(), lr=lr)
    model.train()
    losses = []
    for _ in range(steps):
        idx = rng.integers(0, len(images), batch_size)
        k = rng.integers(0, len(ROTATION_ANSWERS), batch_size)
        text, targets = (
            torch.as_tensor(a, device=device) for a in encode_qa(vocab, ROTATION_QUESTION, ROTATION_ANSWERS, k)
        )
        loss = token_cross_entropy(model(_rotate(x_all[idx], torch.as_tensor(k, device=device)), text), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


@torch.no_grad()
def answer_log_likelihoods(
    model: TinyVLM,
    images: torch.Tensor,
    vocab: Vocabulary,
    answers: tuple[tuple[str, ...], ...],
    question: tuple[str, ...] = QUESTION,
    chunk: int = 256,
    features: torch.Tensor | None = None,
) -> torch.Tensor:
    """log p(answer_c <eos> | image, question) for every image and class: (B, C).

    ``features`` (B, n, d): the images' vision-encoder features when already computed (frozen encoder).
    """
    model.eval()
    device = images.device
    text, targets = (
        torch.as_tensor(a, device=device) for a in encode_qa(vocab, question, answers, np.arange(len(answers)))
    )
    start = len(question)  # text[:, : start + 1] is the question and <bos>, the same for every answer
    prefix, candidates = text[0, : start + 1], text[:, start + 1 :]  # (P,), (C, A)
    targets = targets[:, start:]  # (C, 1 + A): the scored tokens, predicted from <bos> on
    scored = targets != IGNORE
    out = []
    for first in range(0, images.shape[0], chunk):
        if features is None:
            visual = model.visual_tokens(images[first : first + chunk])
        else:
            visual = model.projector(features[first : first + chunk])
        b = visual.shape[0]
        logits = model.candidate_logits(visual, prefix.expand(b, -1), candidates)  # (b, C, 1 + A, V)
        index = targets.clamp_min(0)[None, ..., None].expand(b, -1, -1, 1)
        log_p = log_softmax(at_least_float32(logits)).gather(-1, index)[..., 0]
        out.append((log_p * scored).sum(-1))
    return torch.cat(out)


def evaluate(
    model: TinyVLM,
    images: torch.Tensor,
    labels: np.ndarray,
    vocab: Vocabulary,
    answers,
    bins,
    features: torch.Tensor | None = None,
) -> dict:
    """Accuracy on a (balanced) test set: overall, per class, and per shot bin (``bins[c]`` in SHOTS)."""
    scores = answer_log_likelihoods(model, images, vocab, answers, features=features)
    pred = scores.argmax(-1).cpu().numpy()
    per_class = np.array([np.mean(pred[labels == c] == c) for c in range(len(answers))])
    out = {"acc": float(np.mean(per_class)), "per_class": per_class.tolist()}
    for shot in SHOTS:
        members = np.asarray(bins) == shot
        out[shot] = float(per_class[members].mean()) if members.any() else float("nan")
    return out


def fine_tune(
    model: TinyVLM,
    task: LongTailedTask,
    vocab: Vocabulary,
    method: str,
    settings: ATRSettings,
    epochs: int,
    batch_size: int,
    lr: float,
    seed: int,
    bins,
    eval_every: int = 0,
    focal_gamma: float = 2.0,
    la_tau: float = 1.0,
) -> list[dict]:
    """Fine-tune the projector and the language model of ``model`` in place (the vision encoder stays frozen,
    as in LLaVA's instruction tuning); returns the test evaluations at epoch 0, every ``eval_every`` epochs
    and at the end, each with its ``epoch`` (``eval_every=0``: at the end only). Every method sees the same
    batches; evaluating draws no random numbers, so ``eval_every`` never changes the trained model."""
    check_int("epochs", epochs, 1)
    check_int("batch_size", batch_size, 1)
    check_int("eval_every", eval_every, 0)
    check_positive("lr", lr)
    device = next(model.parameters()).device
    text_np, targets_np = encode_qa(vocab, QUESTION, task.answers, task.train_labels)
    text, targets = torch.as_tensor(text_np, device=device), torch.as_tensor(targets_np, device=device)
    test_images = torch.as_tensor(task.test_images, device=device)
    with torch.no_grad():  # the frozen vision encoder runs once per image
        model.eval()
        features = model.encode_images(torch.as_tensor(task.train_images, device=device))
        test_features = model.encode_images(test_images)
    first_words = [vocab.ids[a[0]] for a in task.answers]
    # the input position of <bos> predicts the class word: logit adjustment applies there
    log_prior = answer_log_prior(task.counts, first_words, len(vocab), text.shape[1], len(QUESTION))
    generator = torch.Generator().manual_seed(derive(seed, "mask", method))
    objective = make_objective(method, settings, log_prior, focal_gamma, la_tau, generator)
    trained = [p for name, p in model.named_parameters() if not name.startswith(VISION_PARAMETERS)]
    optimizer = AdamW(trained, lr=lr)
    order = np.random.default_rng(derive(seed, "order"))  # the same batches for every method

    def test(epoch: int) -> dict:
        scores = evaluate(model, test_images, task.test_labels, vocab, task.answers, bins, test_features)
        return {"epoch": epoch, **scores}

    history = [test(0)] if eval_every else []
    for epoch in range(1, epochs + 1):
        model.train()
        perm = order.permutation(len(features))
        for start in range(0, len(perm), batch_size):
            idx = torch.as_tensor(perm[start : start + batch_size], device=device)
            loss = objective(model, model.projector(features[idx]), text[idx], targets[idx])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trained, 1.0)
            optimizer.step()
        if epoch == epochs or (eval_every and epoch % eval_every == 0):
            history.append(test(epoch))
    return history
