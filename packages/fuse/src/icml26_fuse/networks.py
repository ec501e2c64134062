"""The classifiers: the surrogate that FUSE and EM optimise against, and the victim trained on protected data.

Both are the same small CNN family (the paper uses ResNet-18 and other architectures on 32 x 32 images; a
two-block CNN is our miniature, [INF]). The victim is trained from its own initialisation with Adam on the
(possibly filtered) protected images and evaluated on clean test images.
"""

from __future__ import annotations

import torch
from icml26_shared import check_int, check_positive
from torch import nn

from .data import N_CLASSES, check_images, check_labels


class SmallCNN(nn.Module):
    """conv3x3 at full resolution and two stride-2 conv3x3, each with BatchNorm and ReLU, global average
    pooling, linear: images (B, C, H, W) -> logits (B, 10).

    BatchNorm matters here: like the ResNets of the paper, it rescales every channel, so a faint but
    consistent perturbation pattern is as visible to the network as the image's own edges.
    """

    def __init__(self, channels: int = 1, width: int = 16):
        super().__init__()
        width = check_int("width", width, 1)

        def block(c_in: int, c_out: int, stride: int) -> list[nn.Module]:
            return [nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1), nn.BatchNorm2d(c_out), nn.ReLU()]

        self.features = nn.Sequential(
            *block(channels, width, 1),
            *block(width, 2 * width, 2),
            *block(2 * width, 2 * width, 2),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.head = nn.Linear(2 * width, N_CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def train_classifier(
    x,
    y,
    epochs: int,
    seed: int,
    lr: float = 3e-3,
    batch_size: int = 64,
) -> SmallCNN:
    """A fresh ``SmallCNN`` (initialised from ``seed``) trained with Adam + cross-entropy on ``(x, y)``."""
    x = check_images("x", x)
    y = check_labels("y", y, x.shape[0])
    epochs = check_int("epochs", epochs, 1)
    batch_size = check_int("batch_size", batch_size, 1)
    lr = check_positive("lr", lr)
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = SmallCNN(x.shape[1])
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(epochs):
        for batch in torch.randperm(len(y), generator=generator).split(batch_size):
            loss = nn.functional.cross_entropy(model(x[batch]), y[batch])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    return model


@torch.no_grad()
def accuracy(model: nn.Module, x, y) -> float:
    """Top-1 accuracy of ``model`` on ``(x, y)``."""
    x = check_images("x", x)
    y = check_labels("y", y, x.shape[0])
    model.eval()
    correct = sum(int((model(xb).argmax(1) == yb).sum()) for xb, yb in zip(x.split(512), y.split(512), strict=True))
    model.train()
    return correct / len(y)
