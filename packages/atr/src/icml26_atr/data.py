"""Visual question answering data for the miniature: real images, a word vocabulary, long-tailed splits.

* Images: Fashion-MNIST (28x28, ``icml26_shared.load_fashion_mnist``) and scikit-learn's digits (8x8), as
  ``(N, 1, H, W)`` float32 in [0, 1].
* Text: every task is one question of six words and an answer of one or two words, closed by ``<eos>``:
  "what is in the image ?" -> "ankle boot <eos>" (fine-tuning), "how is the image rotated ?" -> "upside down
  <eos>" (the balanced pre-training task).
* Long tail: per-class counts ``n_i = n_max * ratio^(-i / (C - 1))`` (the CIFAR-10-LT profile of Cao et al.
  2019, class 0 the head), a balanced test set, and the many/medium/few-shot bins of the LT literature.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from icml26_shared import check_int, check_number, derive, fail, load_fashion_mnist

PAD, BOS, EOS = "<pad>", "<bos>", "<eos>"
IGNORE = -100  # target id of positions that carry no loss (question, padding)
QUESTION = ("what", "is", "in", "the", "image", "?")
ROTATION_QUESTION = ("how", "is", "the", "image", "rotated", "?")
ROTATION_ANSWERS = (("upright",), ("quarter", "left"), ("upside", "down"), ("quarter", "right"))
FASHION_ANSWERS = (
    ("t-shirt",),
    ("trouser",),
    ("pullover",),
    ("dress",),
    ("coat",),
    ("sandal",),
    ("shirt",),
    ("sneaker",),
    ("bag",),
    ("ankle", "boot"),
)
DIGIT_ANSWERS = tuple((w,) for w in ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"))
ANSWERS = {"fashion": FASHION_ANSWERS, "digits": DIGIT_ANSWERS}
DATASETS = tuple(ANSWERS)
SHOTS = ("many", "medium", "few")
FASHION_POOL = 50000  # training images 0..49999 are labelled; the rest is for pre-training


class Vocabulary:
    """Word <-> id for a fixed set of questions and answers; ids 0, 1, 2 are ``<pad>``, ``<bos>``, ``<eos>``."""

    def __init__(self, words: tuple[str, ...]) -> None:
        self.words = (PAD, BOS, EOS, *dict.fromkeys(w for w in words if w not in (PAD, BOS, EOS)))
        self.ids = {w: i for i, w in enumerate(self.words)}

    def __len__(self) -> int:
        return len(self.words)

    def encode(self, words: tuple[str, ...]) -> list[int]:
        unknown = [w for w in words if w not in self.ids]
        if unknown:
            raise fail("words", words, f"words of the vocabulary (unknown: {unknown})")
        return [self.ids[w] for w in words]


def default_vocabulary() -> Vocabulary:
    """One vocabulary for every question and answer of the package (pre-training and both data sets)."""
    answers = (*ROTATION_ANSWERS, *FASHION_ANSWERS, *DIGIT_ANSWERS)
    return Vocabulary((*QUESTION, *ROTATION_QUESTION, *(w for a in answers for w in a)))


def encode_qa(
    vocab: Vocabulary, question: tuple[str, ...], answers: tuple[tuple[str, ...], ...], labels: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Teacher-forcing text ``(B, T)`` and next-token targets ``(B, T)`` for ``answers[labels]``.

    The sequence is ``question <bos> answer <eos>``; the model reads all but the last token and is scored on
    the answer and ``<eos>`` only (``IGNORE`` elsewhere), as in LVLM instruction tuning.
    """
    if len(question) == 0:
        raise fail("question", question, "a non-empty question")
    if len(answers) == 0 or any(len(a) == 0 for a in answers):
        raise fail("answers", answers, "a non-empty list of non-empty answers")
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.size == 0 or labels.min() < 0 or labels.max() >= len(answers):
        raise fail("labels", labels, f"a non-empty 1-d array of class ids in [0, {len(answers) - 1}]")
    q = vocab.encode(question)
    length = len(q) + 1 + max(len(a) for a in answers)  # inputs: question, <bos>, answer (without <eos>)
    text = np.full((labels.size, length), vocab.ids[PAD], dtype=np.int64)
    targets = np.full((labels.size, length), IGNORE, dtype=np.int64)
    for row, y in enumerate(labels):
        seq = [*q, vocab.ids[BOS], *vocab.encode(answers[y]), vocab.ids[EOS]]
        text[row, : len(seq) - 1] = seq[:-1]
        targets[row, len(q) : len(seq) - 1] = seq[len(q) + 1 :]
    return text, targets


def long_tailed_counts(n_max: int, imbalance_ratio: float, num_classes: int) -> np.ndarray:
    """``n_i = floor(n_max * ratio^(-i / (C - 1)))`` for classes i = 0..C-1 (CIFAR-10-LT, Cao et al. 2019).

    Raises if the ratio is below 1 or a class would get no sample.
    """
    check_int("n_max", n_max, 1)
    check_int("num_classes", num_classes, 2)
    if check_number("imbalance_ratio", imbalance_ratio) < 1:
        raise fail("imbalance_ratio", imbalance_ratio, "a ratio n_max / n_min >= 1")
    counts = np.floor(n_max * imbalance_ratio ** (-np.arange(num_classes) / (num_classes - 1)) + 1e-9).astype(int)
    if counts.min() < 1:
        raise fail("imbalance_ratio", imbalance_ratio, f"a ratio <= n_max={n_max}, so that every class keeps a sample")
    return counts


def long_tailed_indices(labels: np.ndarray, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Indices of a random subset with ``counts[c]`` samples of each class c (sorted)."""
    labels = np.asarray(labels)
    picked = []
    for c, n in enumerate(counts):
        pool = np.flatnonzero(labels == c)
        if pool.size < n:
            raise fail("counts", counts.tolist(), f"at most {pool.size} samples for class {c} (the pool has no more)")
        picked.append(rng.choice(pool, size=int(n), replace=False))
    return np.sort(np.concatenate(picked))


def shot_bins(counts: np.ndarray, many: int = 100, few: int = 20) -> np.ndarray:
    """ "many" (> ``many`` training samples), "few" (< ``few``) or "medium" per class (the ImageNet-LT bins)."""
    counts = np.asarray(counts)
    return np.where(counts > many, "many", np.where(counts < few, "few", "medium"))


@dataclass(frozen=True)
class LongTailedTask:
    """A long-tailed training set, a balanced test set and the class answers."""

    train_images: np.ndarray  # (N, 1, H, W) in [0, 1]
    train_labels: np.ndarray  # (N,)
    test_images: np.ndarray
    test_labels: np.ndarray
    counts: np.ndarray  # training samples per class
    answers: tuple[tuple[str, ...], ...]


def _balanced_subset(labels: np.ndarray, per_class: int, num_classes: int) -> np.ndarray:
    idx = [np.flatnonzero(labels == c)[:per_class] for c in range(num_classes)]
    if min(i.size for i in idx) < per_class:
        raise fail("test_per_class", per_class, f"at most {min(i.size for i in idx)} test images per class")
    return np.sort(np.concatenate(idx))


@functools.lru_cache(maxsize=2)
def load_images(dataset: str) -> tuple[np.ndarray, ...]:
    """``(pool images, pool labels, test images, test labels, spare images)``, images ``(N, 1, H, W)`` in [0, 1].

    Fashion-MNIST: training images 0..49999 are the labelled pool, 50000.. the spare (label-free) images for
    pre-training; the test split for testing. digits (no images to spare): the first 50 images of every class
    for testing, the rest is both the pool and the spare images (pre-training never sees labels).
    """
    if dataset == "fashion":
        X, y, X_test, y_test = load_fashion_mnist(60000, 10000)
        X, X_test = X.reshape(-1, 1, 28, 28), X_test.reshape(-1, 1, 28, 28)
        return X[:FASHION_POOL], y[:FASHION_POOL], X_test, y_test, X[FASHION_POOL:]
    if dataset == "digits":
        from sklearn.datasets import load_digits

        bunch = load_digits()
        images, labels = (bunch.images[:, None] / 16.0).astype(np.float32), bunch.target.astype(np.int64)
        test = _balanced_subset(labels, 50, 10)
        pool = np.setdiff1d(np.arange(labels.size), test)
        return images[pool], labels[pool], images[test], labels[test], images[pool]
    raise fail("dataset", dataset, f"one of {list(DATASETS)}")


def long_tailed_task(
    dataset: str, n_max: int, imbalance_ratio: float, test_per_class: int, seed: int
) -> LongTailedTask:
    """The seed's long-tailed split of ``dataset`` (class 0 is the head, class C-1 the tail, as in CIFAR-10-LT)
    and the first ``test_per_class`` test images of every class (balanced)."""
    answers = ANSWERS.get(dataset)
    if answers is None:
        raise fail("dataset", dataset, f"one of {list(DATASETS)}")
    check_int("test_per_class", test_per_class, 1)
    pool_x, pool_y, test_x, test_y, _ = load_images(dataset)
    counts = long_tailed_counts(n_max, imbalance_ratio, len(answers))
    train = long_tailed_indices(pool_y, counts, np.random.default_rng(derive(seed, "long-tail")))
    test = _balanced_subset(test_y, test_per_class, len(answers))
    return LongTailedTask(pool_x[train], pool_y[train], test_x[test], test_y[test], counts, answers)


def pretraining_images(dataset: str, n_pretrain: int, seed: int) -> np.ndarray:
    """``n_pretrain`` label-free images for the balanced pre-training task (Fashion-MNIST: from training images
    50000.., which the long-tailed pool never uses; digits: from its pool)."""
    check_int("n_pretrain", n_pretrain, 1)
    spare = load_images(dataset)[4]
    if n_pretrain > len(spare):
        raise fail("n_pretrain", n_pretrain, f"at most {len(spare)} pre-training images for {dataset}")
    return spare[np.random.default_rng(derive(seed, "pretrain-images")).choice(len(spare), n_pretrain, replace=False)]


def pretraining_token_ids(vocab: Vocabulary) -> tuple[list[int], list[int]]:
    """``(ids the pre-training task uses, ids of its answer words)``: special tokens, the rotation question and
    its answers; the answer words alone."""
    answer_words = tuple(w for a in ROTATION_ANSWERS for w in a)
    used = sorted(set(vocab.encode((PAD, BOS, EOS, *ROTATION_QUESTION, *answer_words))))
    return used, sorted(set(vocab.encode(answer_words)))
