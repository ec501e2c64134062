"""The baseline FUSE is compared against: sample-wise error-minimising noise (EM, Huang et al., ICLR 2021).

The bi-level problem ``min_theta min_{||delta_i||_inf <= eps} sum_i CE(f_theta(x_i + delta_i), y_i)`` is
solved as in the EM reference code: alternate ``train_steps`` surrogate minibatches on ``x + delta`` with a
PGD pass that *descends* the loss for every sample (``pgd_steps`` steps of size ``alpha = eps / 10``, sign
gradient, projection onto the L-infinity ball and onto the image range), until the surrogate's accuracy on the
perturbed training set reaches ``stop_accuracy`` or ``max_rounds`` is spent.

The other baseline, the plain generator EM (no RSM, no CBG), is ``method.train_generator`` with
``FuseSettings(rsm=False, cbg_weight=0.0)``.
"""

from __future__ import annotations

import torch
from icml26_shared import check_closed_interval, check_int, check_positive
from torch import nn

from .data import check_images, check_labels
from .method import protect
from .networks import SmallCNN, accuracy
from .spectral import check_budget


def error_minimising_noise(
    x,
    y,
    eps: float,
    seed: int,
    pgd_steps: int = 20,
    train_steps: int = 10,
    max_rounds: int = 10,
    stop_accuracy: float = 0.99,
    batch_size: int = 64,
    lr: float = 3e-3,
) -> torch.Tensor:
    """Sample-wise EM noise ``delta`` (n, C, H, W), ``||delta||_inf <= eps``, for images ``x`` in [0, 1]."""
    x = check_images("x", x)
    y = check_labels("y", y, x.shape[0])
    eps = check_budget(eps)
    pgd_steps = check_int("pgd_steps", pgd_steps, 1)
    train_steps = check_int("train_steps", train_steps, 1)
    max_rounds = check_int("max_rounds", max_rounds, 1)
    stop_accuracy = check_closed_interval("stop_accuracy", stop_accuracy, 0.0, 1.0)
    batch_size = check_int("batch_size", batch_size, 1)
    lr = check_positive("lr", lr)
    rng = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    surrogate = SmallCNN(x.shape[1])
    optimiser = torch.optim.Adam(surrogate.parameters(), lr=lr)
    delta = (torch.rand(x.shape, generator=rng) * 2 - 1) * eps  # uniform start in the eps-ball
    alpha = eps / 10
    for _ in range(max_rounds):
        for batch in torch.randint(len(y), (train_steps, batch_size), generator=rng):
            loss = nn.functional.cross_entropy(surrogate(protect(x[batch], delta[batch])), y[batch])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        for batch in torch.arange(len(y)).split(batch_size):  # PGD that minimises the loss, per sample
            xb, yb, db = x[batch], y[batch], delta[batch].clone()
            for _ in range(pgd_steps):
                db.requires_grad_(True)
                loss = nn.functional.cross_entropy(surrogate(protect(xb, db)), yb)
                (grad,) = torch.autograd.grad(loss, db)
                db = (db.detach() - alpha * grad.sign()).clamp(-eps, eps)
                db = protect(xb, db) - xb  # stay inside the image range
            delta[batch] = db.detach()
        if accuracy(surrogate, protect(x, delta), y) >= stop_accuracy:
            break
    return delta
