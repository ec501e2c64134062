"""Real images with an injected environment nuisance: digits / Fashion-MNIST on textured backgrounds.

Every image is a real foreground (scikit-learn's 8x8 digits upsampled to 16x16, or Fashion-MNIST pooled to
16x16) composited over one of ten coloured background textures, the *environment* ``e``. The domains differ
only in how ``e`` depends on the class ``y`` (issue 13; spec section 5):

* ``source``: ``e = y`` with probability ``rho`` (90-95%), else another texture uniformly;
* ``shifted``: the correlation reversed: ``e = shift(y)`` with probability ``rho``, where ``shift`` moves each
  class to the texture of the next class of its group (base or novel), so the source cue now points elsewhere;
* ``balanced``: ``e`` uniform and independent of ``y`` (the pretraining data and the nuisance probe).
"""

from __future__ import annotations

import numpy as np
from icml26_shared import check_choice, check_closed_interval, check_int, fail, load_fashion_mnist

SIZE = 16  # images are (3, SIZE, SIZE) in [0, 1]
N_ENVIRONMENTS = 10
DATASETS = ("digits", "fashion")
DOMAINS = ("source", "shifted", "balanced")
CLASS_NAMES = {
    "digits": ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"),
    "fashion": ("t-shirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "ankle boot"),
}
ENVIRONMENT_NAMES = (  # how the pretraining captions name the ten backgrounds
    "red striped",
    "green striped",
    "blue diagonal",
    "yellow diagonal",
    "purple checkered",
    "cyan grid",
    "orange dotted",
    "violet striped",
    "lime striped",
    "grey checkered",
)
CAPTION = "a photo of a {} on a {} background."
COLOURS = np.array(  # one colour per texture, so that colour and pattern both carry the nuisance
    [
        [0.9, 0.2, 0.2],
        [0.2, 0.8, 0.2],
        [0.2, 0.3, 0.9],
        [0.9, 0.8, 0.1],
        [0.8, 0.2, 0.8],
        [0.1, 0.8, 0.8],
        [0.9, 0.5, 0.1],
        [0.5, 0.5, 0.9],
        [0.6, 0.9, 0.4],
        [0.7, 0.7, 0.7],
    ]
)


def textures(size: int = SIZE) -> np.ndarray:
    """The ten background textures (10, 3, size, size) in [0, 0.7]: stripes, diagonals, checkers, grid, dots."""
    i, j = np.mgrid[:size, :size]
    patterns = [
        (i // 2) % 2,  # horizontal stripes
        (j // 2) % 2,  # vertical stripes
        ((i + j) // 2) % 2,  # diagonal stripes
        ((i - j) // 2) % 2,  # anti-diagonal stripes
        ((i // 2) + (j // 2)) % 2,  # fine checkerboard
        ((i % 4) == 0) | ((j % 4) == 0),  # grid
        ((i % 4) < 1) & ((j % 4) < 1),  # dots
        (i // 4) % 2,  # wide horizontal stripes
        (j // 4) % 2,  # wide vertical stripes
        ((i // 4) + (j // 4)) % 2,  # coarse checkerboard
    ]
    pattern = np.stack(patterns).astype(np.float64)
    return 0.7 * pattern[:, None] * COLOURS[:, :, None, None]


TEXTURES = textures()


def load_foregrounds(dataset: str, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Real foregrounds ``(X (N, 16, 16) in [0, 1], y (N,))``: all 1797 digits, or the first ``n`` Fashion-MNIST
    training images (default 6000)."""
    check_choice("dataset", dataset, DATASETS)
    if dataset == "digits":
        from sklearn.datasets import load_digits

        digits = load_digits()
        X = np.kron(digits.images / 16.0, np.ones((2, 2)))  # 8x8 -> 16x16, nearest neighbour
        y = digits.target.astype(np.int64)
    else:
        X, y, _, _ = load_fashion_mnist(n_train=6000 if n is None else n, n_test=1)
        X = np.pad(X.reshape(-1, 28, 28), ((0, 0), (2, 2), (2, 2)))  # 32x32, then 2x2 average pooling
        X = X.reshape(-1, SIZE, 2, SIZE, 2).mean(axis=(2, 4))
    if n is not None:
        check_int("n", n, 1, len(y))
        X, y = X[:n], y[:n]
    return X.astype(np.float32), y


def render(foregrounds: np.ndarray, environments: np.ndarray, contrast: float = 1.0) -> np.ndarray:
    """Composite foregrounds (N, 16, 16) in [0, 1] over textures ``environments`` (N,): (N, 3, 16, 16) float32.

    ``contrast`` in (0, 1] scales the foreground's opacity: the downstream task shows fainter objects than
    pretraining, so the class is harder to read than the background (a texture-biased dataset)."""
    check_closed_interval("contrast", contrast, 0.0, 1.0)
    if contrast == 0:
        raise fail("contrast", contrast, "a number in (0, 1]")
    if foregrounds.ndim != 3 or foregrounds.shape[1:] != (SIZE, SIZE):
        raise fail("foregrounds", foregrounds, f"an array of shape (N, {SIZE}, {SIZE})")
    if foregrounds.min() < 0 or foregrounds.max() > 1:
        raise fail("foregrounds", foregrounds, "values in [0, 1]")
    env = np.asarray(environments)
    if env.shape != (len(foregrounds),) or env.min() < 0 or env.max() >= N_ENVIRONMENTS:
        raise fail("environments", environments, f"{len(foregrounds)} integers in [0, {N_ENVIRONMENTS})")
    alpha = contrast * foregrounds[:, None]
    return (alpha + (1 - alpha) * TEXTURES[env]).astype(np.float32)


def shift(y: np.ndarray, base: tuple[int, ...]) -> np.ndarray:
    """The shifted domain's texture for class ``y``: the next class's texture within its group (base/novel)."""
    novel = tuple(c for c in range(N_ENVIRONMENTS) if c not in base)
    mapping = np.arange(N_ENVIRONMENTS)
    for group in (base, novel):
        for k, c in enumerate(group):
            mapping[c] = group[(k + 1) % len(group)]
    return mapping[y]


def environments(y: np.ndarray, domain: str, rho: float, base: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Draw one environment per label for ``domain`` (source / shifted / balanced), see the module docstring."""
    check_choice("domain", domain, DOMAINS)
    check_closed_interval("rho", rho, 0.0, 1.0)
    y = np.asarray(y)
    if domain == "balanced":
        return rng.integers(0, N_ENVIRONMENTS, size=len(y))
    spurious = y if domain == "source" else shift(y, base)
    other = (spurious + rng.integers(1, N_ENVIRONMENTS, size=len(y))) % N_ENVIRONMENTS  # any texture but the cue
    return np.where(rng.random(len(y)) < rho, spurious, other)


def few_shot(y: np.ndarray, classes: tuple[int, ...], shots: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of ``shots`` examples of each class in ``classes`` (the K-shot training set)."""
    check_int("shots", shots, 1)
    picked = []
    for c in classes:
        pool = np.flatnonzero(y == c)
        if len(pool) < shots:
            raise fail("shots", shots, f"at most {len(pool)}, the examples of class {c}")
        picked.append(rng.choice(pool, size=shots, replace=False))
    return np.concatenate(picked)
