"""Images for the miniature: scikit-learn digits (quick) and Fashion-MNIST (paper), both real and offline.

The protection setting: a "creator" owns a pool of images of one class (their style); the pool is held out
of pre-training. Each seed draws from that pool a protected set (used, without authorisation, to fine-tune the
suspect model), a reference set (images the creator knows were not used) and a clean query set (unused
images that a verifier might wrongly flag: the false-positive control).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icml26_shared import check_array, check_int, fail, load_fashion_mnist


def to_unit_range(pixels: np.ndarray, top: float) -> np.ndarray:
    """Pixels in [0, top] -> float32 in [-1, 1] (DDPM's data range)."""
    return (2.0 * np.asarray(pixels, dtype=np.float32) / top - 1.0).astype(np.float32)


def load_digits_images() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 1797 digits as (1797, 1, 8, 8) in [-1, 1] and their labels (1797,)."""
    from sklearn.datasets import load_digits

    bunch = load_digits()
    return to_unit_range(bunch.images[:, None], 16.0), bunch.target.astype(np.int64)


def load_fashion_images(n_train: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``n_train`` Fashion-MNIST training images as (n, 1, 28, 28) in [-1, 1] and their labels.

    Read through ``icml26_shared.load_fashion_mnist`` (Debian's IDX files, sha256-verified; pixels in [0, 1]).
    """
    check_int("n_train", n_train, 1, 60000)
    X, y, _, _ = load_fashion_mnist(n_train, 1)
    return to_unit_range(np.asarray(X).reshape(-1, 1, 28, 28), 1.0), np.asarray(y, dtype=np.int64)


@dataclass(frozen=True)
class ProtectionSplit:
    """Pre-training images and, for one seed, the creator's protected / reference / clean query images."""

    pretrain: np.ndarray
    protected: np.ndarray
    reference: np.ndarray
    query: np.ndarray


def creator_pool(labels: np.ndarray, target_class: int, pool_size: int) -> np.ndarray:
    """Indices of the creator's pool: the first ``pool_size`` images of ``target_class`` (fixed, seed-free)."""
    labels = check_array("labels", labels, ndim=1)
    members = np.flatnonzero(labels == target_class)
    if len(members) == 0:
        raise fail("target_class", target_class, f"a class present in the labels {sorted(set(labels.tolist()))}")
    check_int("pool_size", pool_size, 3, len(members))
    return members[:pool_size]


def protection_split(
    images: np.ndarray,
    labels: np.ndarray,
    target_class: int,
    sizes: tuple[int, int, int],
    seed: int,
) -> ProtectionSplit:
    """Hold the creator's pool out of pre-training and draw (protected, reference, query) of ``sizes`` from it."""
    images = check_array("images", images, ndim=4)
    n_protected, n_reference, n_query = (
        check_int(n, s, 2) for n, s in zip(("n_protected", "n_reference", "n_query"), sizes, strict=True)
    )
    pool = creator_pool(labels, target_class, n_protected + n_reference + n_query)
    keep = np.ones(len(images), dtype=bool)
    keep[pool] = False
    order = np.random.default_rng(seed).permutation(pool)
    return ProtectionSplit(
        pretrain=images[keep],
        protected=images[order[:n_protected]],
        reference=images[order[n_protected : n_protected + n_reference]],
        query=images[order[n_protected + n_reference :]],
    )
