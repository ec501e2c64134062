"""Images and the explicit, seeded member / hold-out split.

Quick data: real Fashion-MNIST (icml26-shared's checksum-verified loader), padded 28 -> 32 and 2 x 2
average-pooled to 16 x 16 so that a CPU-sized DDPM can memorise its members. The split follows the
SecMI/PIA protocol: a seeded random half of a pool is the member set (the model is trained on it and
nothing else), the other half the hold-out set; both index arrays are returned, so a user can save or
inspect them.
"""

from __future__ import annotations

import numpy as np
from icml26_shared import check_int, derive, fail, load_fashion_mnist


def member_split(n_images: int, n_members: int, n_holdout: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint (member, hold-out) index arrays drawn without replacement from ``range(n_images)``."""
    check_int("n_images", n_images, 2)
    check_int("n_members", n_members, 1)
    check_int("n_holdout", n_holdout, 1)
    check_int("seed", seed, 0)
    if n_members + n_holdout > n_images:
        raise fail("n_members + n_holdout", n_members + n_holdout, f"at most n_images={n_images}")
    order = np.random.default_rng(derive(seed, "member_split")).permutation(n_images)
    return np.sort(order[:n_members]), np.sort(order[n_members : n_members + n_holdout])


def downsample(images: np.ndarray, size: int) -> np.ndarray:
    """(n, H, W) images in [0, 1] -> (n, size, size): zero-pad to a multiple of ``size``, average-pool."""
    check_int("size", size, 2)
    if images.ndim != 3:
        raise fail("images", images.shape, "an array (n, H, W)")
    n, h, w = images.shape
    side = -(-max(h, w) // size) * size  # smallest multiple of size that holds the image
    padded = np.zeros((n, side, side), dtype=np.float32)
    top, left = (side - h) // 2, (side - w) // 2
    padded[:, top : top + h, left : left + w] = images
    k = side // size
    return padded.reshape(n, size, k, size, k).mean(axis=(2, 4))


def fashion_mnist_images(n_images: int, size: int = 16) -> np.ndarray:
    """The first ``n_images`` Fashion-MNIST training images as (n, 1, size, size) float32 in [0, 1]."""
    check_int("n_images", n_images, 2, 60000)
    X, _, _, _ = load_fashion_mnist(n_train=n_images, n_test=1)
    return downsample(X.reshape(-1, 28, 28), size)[:, None]
