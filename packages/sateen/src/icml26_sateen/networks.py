"""The source model: a small convolutional classifier with GroupNorm (the paper's main backbone is
ResNet-50-GN), trained on clean images, then handed to a test-time adaptation method."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from icml26_shared import check_array, check_choice, check_int, check_positive, check_same_length, fail
from torch import nn

NORMS = ("group", "batch")


def _norm(kind: str, channels: int) -> nn.Module:
    return nn.GroupNorm(max(1, channels // 8), channels) if kind == "group" else nn.BatchNorm2d(channels)


class SmallCNN(nn.Module):
    """conv3x3(width) - norm - ReLU - [conv3x3 stride 2 - norm - ReLU] x 2 - global mean - linear.

    Input (b, in_channels, h, w); logits (b, num_classes). ``norm`` is "group" (8 channels per group) or
    "batch"; every norm layer has affine parameters, the ones test-time adaptation updates.
    """

    def __init__(self, in_channels: int = 1, num_classes: int = 10, width: int = 16, norm: str = "group"):
        super().__init__()
        self.in_channels = check_int("in_channels", in_channels, 1)
        check_int("num_classes", num_classes, 2)
        check_int("width", width, 1)
        check_choice("norm", norm, NORMS)
        w = width
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, w, 3, padding=1),
            _norm(norm, w),
            nn.ReLU(),
            nn.Conv2d(w, 2 * w, 3, stride=2, padding=1),
            _norm(norm, 2 * w),
            nn.ReLU(),
            nn.Conv2d(2 * w, 4 * w, 3, stride=2, padding=1),
            _norm(norm, 4 * w),
            nn.ReLU(),
        )
        self.head = nn.Linear(4 * w, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim != 4 or x.shape[1] != self.in_channels:
            raise fail("x", tuple(x.shape), f"a batch (b, {self.in_channels}, h, w)")
        return self.head(self.features(x).mean(dim=(2, 3)))


def train_source(
    model: nn.Module,
    images: np.ndarray,
    labels: np.ndarray,
    epochs: int,
    seed: int,
    lr: float = 1e-3,
    batch_size: int = 64,
) -> nn.Module:
    """Train ``model`` on clean ``images`` (n, c, h, w) / ``labels`` (n,) with Adam and cross-entropy."""
    images = check_array("images", images, ndim=4).astype(np.float32)
    labels = check_array("labels", labels, ndim=1).astype(np.int64)
    check_same_length(images=images, labels=labels)
    check_int("epochs", epochs, 1)
    check_int("batch_size", batch_size, 1)
    optimizer = torch.optim.Adam(model.parameters(), lr=check_positive("lr", lr))
    rng = np.random.default_rng(seed)
    X, y = torch.from_numpy(images), torch.from_numpy(labels)
    model.train()
    for _ in range(epochs):
        order = torch.from_numpy(rng.permutation(len(y)))
        for start in range(0, len(y), batch_size):
            idx = order[start : start + batch_size]
            loss = F.cross_entropy(model(X[idx]), y[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model.eval()


def accuracy(model: nn.Module, images: np.ndarray, labels: np.ndarray, batch_size: int = 512) -> float:
    """Top-1 accuracy of ``model`` (eval mode, no adaptation) on ``images``/``labels``."""
    model.eval()
    with torch.no_grad():
        correct = sum(
            int(
                (
                    model(torch.from_numpy(images[s : s + batch_size])).argmax(1)
                    == torch.from_numpy(labels[s : s + batch_size])
                ).sum()
            )
            for s in range(0, len(labels), batch_size)
        )
    return correct / len(labels)
