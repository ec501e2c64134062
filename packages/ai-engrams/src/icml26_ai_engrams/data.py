"""Data: scikit-learn digits and Fashion-MNIST (real, offline) and generated "fact" sentences for a tiny LM.

* ``load_digits_split``: the 1797 8x8 digits shipped inside scikit-learn, pixels in [0, 1], a stratified
  70/30 split drawn from ``seed``.
* ``load_fashion_mnist``: ``icml26_shared.load_fashion_mnist`` (Debian's IDX files, checksum-verified, cached).
* ``make_facts``: one city and one job per person, as sentences ``<bos> NAME lives in CITY .`` and
  ``<bos> NAME works as JOB .``: a corpus of facts with known owners, to be memorised and then forgotten.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icml26_shared import check_int, check_open_interval, load_fashion_mnist

__all__ = ["Facts", "load_digits_split", "load_fashion_mnist", "make_facts"]

RELATIONS = (("lives", "in"), ("works", "as"))
ANSWER_POSITION = 4  # <bos> NAME w1 w2 ANSWER .


def load_digits_split(seed: int, test_fraction: float = 0.3) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn digits as ``(X_train (n, 64) float32 in [0, 1], y_train, X_test, y_test)``."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    check_open_interval("test_fraction", test_fraction, 0.0, 1.0)
    digits = load_digits()
    X, y = (digits.data / 16.0).astype(np.float32), digits.target.astype(np.int64)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=test_fraction, stratify=y, random_state=seed)
    return X_train, y_train, X_test, y_test


@dataclass(frozen=True)
class Facts:
    """Sentences ``ids`` (2 * people, 6) int64, the ``person`` each belongs to, and the ``vocab`` (id -> word)."""

    ids: np.ndarray
    person: np.ndarray
    vocab: tuple[str, ...]

    def decode(self, row: int) -> str:
        return " ".join(self.vocab[i] for i in self.ids[row])


def make_facts(people: int, cities: int, jobs: int, seed: int) -> Facts:
    """Random facts: person ``p`` lives in a uniformly drawn city and works as a uniformly drawn job."""
    check_int("people", people, 1)
    check_int("cities", cities, 1)
    check_int("jobs", jobs, 1)
    rng = np.random.default_rng(seed)
    names = [f"name{p}" for p in range(people)]
    answers = ([f"city{c}" for c in range(cities)], [f"job{j}" for j in range(jobs)])
    vocab = ("<bos>", ".", *[w for pair in RELATIONS for w in pair], *names, *answers[0], *answers[1])
    index = {w: i for i, w in enumerate(vocab)}
    rows, person = [], []
    for p, name in enumerate(names):
        for (w1, w2), options in zip(RELATIONS, answers, strict=True):
            answer = options[rng.integers(len(options))]
            rows.append([index[t] for t in ("<bos>", name, w1, w2, answer, ".")])
            person.append(p)
    return Facts(np.array(rows, dtype=np.int64), np.array(person, dtype=np.int64), vocab)
