"""What the paper's quantities are compared with.

* A classifier-based mutual information estimate ``H(C) - E[-log q(c | x)]`` (the Barber-Agakov
  lower bound with a logistic-regression q), an estimate that never looks at the diffusion model.
* Classifier-free guidance sampling ``s_w = s_u + w (s_c - s_u)`` with the reverse SDE, with guidance
  on the whole trajectory or only on an interval of early (large-t) times, "guidance in a limited
  interval" (Kynkaanniemi et al. 2024), which the paper's account of CFG explains.
"""

from __future__ import annotations

import itertools

import numpy as np
import torch
from icml26_shared import check_array, check_closed_interval, check_int, check_number, fail

from .method import VPSchedule
from .networks import EntropyMatchingMLP


def fit_classifier(x, labels, seed: int):
    """Multinomial logistic regression q(c | x) on flat images."""
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=1.0, max_iter=2000, random_state=seed).fit(x, labels)


def classifier_mutual_information(classifier, x, labels) -> float:
    """H(C) - E[-log q(c | x)] in nats on held-out ``x``: a lower bound on I(X; C)."""
    labels = check_array("labels", labels, ndim=1)
    if not np.isin(labels, classifier.classes_).all():
        raise fail("labels", labels, f"labels among the classifier's classes {list(classifier.classes_)}")
    counts = np.bincount(labels)
    prior = counts[counts > 0] / labels.size
    log_q = classifier.predict_log_proba(x)[np.arange(labels.size), np.searchsorted(classifier.classes_, labels)]
    return float(-np.sum(prior * np.log(prior)) + np.mean(log_q))


def cfg_sample(
    model: EntropyMatchingMLP,
    labels,
    w: float,
    seed: int,
    steps: int = 200,
    eps: float = 1e-3,
    interval: tuple[float, float] = (0.0, 1.0),
) -> np.ndarray:
    """Reverse-SDE samples (Euler-Maruyama from t = 1 to eps) with guided score s_u + w (s_c - s_u).

    Guidance weight ``w`` applies for t in ``interval = (t_lo, t_hi]``; elsewhere the plain conditional
    score (w = 1) is used. ``(0, 1)`` is ordinary CFG, ``(0.1, 1)`` guidance only early in generation,
    ``(0, 0.1)`` only late; w = 1 is the conditional model without guidance.
    """
    labels = torch.as_tensor(check_array("labels", labels, ndim=1)).long()
    if labels.min() < 0 or labels.max() >= model.n_classes:
        raise fail("labels", labels.numpy(), f"class labels in [0, {model.n_classes - 1}]")
    w = check_number("w", w)
    steps = check_int("steps", steps, 1)
    eps = check_closed_interval("eps", eps, 1e-6, 0.5)
    if (
        len(interval) != 2
        or not 0 <= check_number("interval", interval[0]) < check_number("interval", interval[1]) <= 1
    ):
        raise fail("interval", interval, "(t_lo, t_hi) with 0 <= t_lo < t_hi <= 1, times of the schedule")
    schedule: VPSchedule = model.schedule
    generator = torch.Generator().manual_seed(seed)
    n = labels.shape[0]
    x = schedule.kappa * torch.randn((n, model.dim), generator=generator)  # p_1 ~ N(0, kappa^2 I)
    times = np.linspace(1.0, eps, steps + 1)
    null = torch.full((n,), model.n_classes)
    with torch.no_grad():
        for t, t_next in itertools.pairwise(times):
            dt = t - t_next
            tt = torch.full((n,), float(t))
            e_cond, e_uncond = model(x, tt, labels), model(x, tt, null)
            weight = w if interval[0] < t <= interval[1] else 1.0
            score = -x / schedule.kappa**2 + e_uncond + weight * (e_cond - e_uncond)
            beta = float(schedule.beta(t))
            drift = -0.5 * beta * x - schedule.kappa**2 * beta * score  # forward drift minus sigma^2 s
            x = x - drift * dt
            if t_next > eps:
                x = x + schedule.kappa * np.sqrt(beta * dt) * torch.randn(x.shape, generator=generator)
    return x.double().numpy()
