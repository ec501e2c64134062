"""Procedural scenes whose clean background is known: the ground truth that object removal is scored against.

A scene is a smooth colour gradient with a periodic stripe texture (so the hole left by an object can only be
filled plausibly by continuing the surrounding context) and, optionally, one solid object (a disk or a square,
a saturated colour, 5-15 % of the image). The removal mask is the object's support dilated by one pixel, as a
user's brush mask covers an object loosely. Images are float32 in [-1, 1], channels first (3, S, S).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icml26_shared import check_closed_interval, check_int

OBJECT_AREA = (0.05, 0.15)  # fraction of the image an object covers (ours, as in the research notes)
DILATION = 1  # pixels by which the removal mask exceeds the object


@dataclass(frozen=True)
class Scenes:
    """A batch of scenes: ``image`` (n, 3, S, S) with the object, ``background`` (n, 3, S, S) without it,
    ``mask`` (n, S, S) the removal mask in {0, 1}, ``object_mask`` (n, S, S) the object's own pixels and
    ``object_color`` (n, 3) its colour."""

    image: np.ndarray
    background: np.ndarray
    mask: np.ndarray
    object_mask: np.ndarray
    object_color: np.ndarray

    def __len__(self) -> int:
        return len(self.image)


def backgrounds(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` backgrounds (n, 3, S, S): a bilinear gradient between 4 random corner colours plus stripes of
    random orientation, period (4-8 px), phase and contrast, clipped to [-1, 1]."""
    check_int("n", n, 1)
    check_int("size", size, 4)
    u = np.linspace(0.0, 1.0, size)
    yy, xx = np.meshgrid(u, u, indexing="ij")  # (S, S)
    corners = rng.uniform(-0.6, 0.6, (n, 4, 3))  # colours at (top-left, top-right, bottom-left, bottom-right)
    weights = np.stack([(1 - yy) * (1 - xx), (1 - yy) * xx, yy * (1 - xx), yy * xx])  # (4, S, S)
    gradient = np.einsum("nkc,kij->ncij", corners, weights)
    angle = rng.uniform(0, np.pi, n)
    period = rng.uniform(4.0, 8.0, n)
    phase = rng.uniform(0, 2 * np.pi, n)
    coordinate = (np.cos(angle)[:, None, None] * xx + np.sin(angle)[:, None, None] * yy) * (size - 1)
    wave = np.sin(2 * np.pi * coordinate / period[:, None, None] + phase[:, None, None])  # (n, S, S)
    tint = rng.uniform(0.15, 0.35, (n, 3)) * rng.choice([-1.0, 1.0], (n, 1))  # stripe colour contrast
    return np.clip(gradient + tint[:, :, None, None] * wave[:, None], -1, 1).astype(np.float32)


def object_masks(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` object supports (n, S, S) in {0, 1}: disks or squares covering 5-15 % of the image, placed fully
    inside it with room for the dilated mask."""
    check_int("n", n, 1)
    check_int("size", size, 8)
    area = rng.uniform(*OBJECT_AREA, n) * size * size
    is_disk = rng.random(n) < 0.5
    yy, xx = np.mgrid[0:size, 0:size] + 0.5
    out = np.zeros((n, size, size), dtype=np.float32)
    for i in range(n):
        half = np.sqrt(area[i] / np.pi) if is_disk[i] else np.sqrt(area[i]) / 2
        margin = half + DILATION
        cy, cx = rng.uniform(margin, size - margin, 2)
        if is_disk[i]:
            inside = (yy - cy) ** 2 + (xx - cx) ** 2 <= half**2
        else:
            inside = (np.abs(yy - cy) <= half) & (np.abs(xx - cx) <= half)
        out[i] = inside
    return out


def dilate(mask: np.ndarray, pixels: int = DILATION) -> np.ndarray:
    """Binary dilation of (n, S, S) masks by ``pixels`` with a square structuring element."""
    check_int("pixels", pixels, 0)
    out = mask.astype(bool)
    for _ in range(pixels):
        padded = np.pad(out, ((0, 0), (1, 1), (1, 1)))
        grown = np.zeros_like(out)
        for dy in (0, 1, 2):
            for dx in (0, 1, 2):
                grown |= padded[:, dy : dy + out.shape[1], dx : dx + out.shape[2]]
        out = grown
    return out.astype(np.float32)


def make_scenes(n: int, size: int, rng: np.random.Generator, object_rate: float = 1.0) -> Scenes:
    """``n`` scenes; each holds an object with probability ``object_rate`` (removal scenes use 1.0; the
    denoiser's training data mixes scenes with and without objects)."""
    check_closed_interval("object_rate", object_rate, 0.0, 1.0)
    background = backgrounds(n, size, rng)
    support = object_masks(n, size, rng) * (rng.random(n) < object_rate)[:, None, None]
    hue = rng.uniform(0, 1, n)
    # saturated colours on the RGB cube's edges: two channels at the extremes, one in between
    color = np.stack([np.clip(np.abs((hue * 6 - k) % 6 - 3) - 1, 0, 1) for k in (0, 4, 2)], axis=1) * 1.8 - 0.9
    color = color.astype(np.float32)
    image = background * (1 - support[:, None]) + color[:, :, None, None] * support[:, None]
    return Scenes(image, background, dilate(support), support, color)
