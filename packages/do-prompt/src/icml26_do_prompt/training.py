"""Building the frozen miniature CLIP (cached) and training / scoring a prompt learner on it."""

from __future__ import annotations

import math

import numpy as np
import torch
from icml26_shared import cached, check_int, check_positive, fingerprint

from .data import CAPTION, CLASS_NAMES, ENVIRONMENT_NAMES, load_foregrounds
from .towers import FrozenCLIP, ImageTower, TextTower, pretrain_image_tower

TOWER_VERSION = 3  # bump when the tower or its pretraining changes (part of the cache key); 3: float64, 1 thread


def build_clip(dataset: str, n_pretrain: int, epochs: int, seed: int = 0) -> FrozenCLIP:
    """The frozen towers: MiniLM text tower + an image tower pretrained (and cached) on the first
    ``n_pretrain`` images of ``dataset`` against captions naming the class and the background."""
    check_int("n_pretrain", n_pretrain, 10)
    check_int("epochs", epochs, 1)
    text = TextTower()
    X, y = load_foregrounds(dataset)
    captions = [CAPTION.format(c, e) for c in CLASS_NAMES[dataset] for e in ENVIRONMENT_NAMES]
    features = text.encode(captions)  # (10 * 10, 384): row c * 10 + e
    key = fingerprint({"v": TOWER_VERSION, "dataset": dataset, "n": n_pretrain, "epochs": epochs, "seed": seed})
    state = cached(
        f"do-prompt/image-tower-{key}",
        lambda: pretrain_image_tower(X[:n_pretrain], y[:n_pretrain], features, epochs, seed),
    )
    image = ImageTower(embed_dim=text.width, dtype=text.dtype)
    image.load_state_dict(state)
    return FrozenCLIP(text, image)


def train_prompt(
    learner: torch.nn.Module,
    clip: FrozenCLIP,
    tokens: torch.Tensor,
    y: torch.Tensor,
    class_names,
    steps: int,
    lr: float,
    seed: int,
) -> list[dict[str, float]]:
    """Full-batch Adam with cosine decay on the learner's objective; its history (the loss parts per step)."""
    check_int("steps", steps, 1)
    check_positive("lr", lr)
    params = [p for p in learner.parameters() if p.requires_grad]
    if not params:
        return []
    generator = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.Adam(params, lr=lr)
    history = []
    for step in range(steps):
        for group in optimiser.param_groups:
            group["lr"] = 0.5 * lr * (1 + math.cos(math.pi * step / steps))
        loss, parts = learner.loss(clip, tokens, y, class_names, generator, progress=step / steps)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        history.append(parts)
    return history


@torch.no_grad()
def accuracy(learner, clip: FrozenCLIP, tokens: torch.Tensor, y: np.ndarray, class_names) -> float:
    """Top-1 accuracy of ``learner`` over ``class_names``; labels ``y`` index into ``class_names``."""
    predictions = learner.logits(clip, tokens, class_names).argmax(-1).numpy()
    return float((predictions == np.asarray(y)).mean())


def harmonic_mean(base: float, novel: float) -> float:
    """HM = 2 B N / (B + N), the base-to-novel summary (CoCoOp)."""
    return 2 * base * novel / (base + novel) if base + novel > 0 else 0.0


@torch.no_grad()
def nuisance_probe(
    learner, clip: FrozenCLIP, tokens: torch.Tensor, environments: np.ndarray, class_names, seed: int
) -> float:
    """How well a linear probe recovers the environment from the prompt-conditioned logits over
    ``class_names`` (2-fold cross-validated accuracy of a logistic regression; chance 1/10)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    features = learner.logits(clip, tokens, class_names).numpy()
    probe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))
    folds = StratifiedKFold(2, shuffle=True, random_state=seed)
    return float(cross_val_score(probe, features, environments, cv=folds).mean())
