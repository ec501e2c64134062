"""Data: scikit-learn's 8x8 handwritten digits (real images, shipped with scikit-learn), the in- and
out-of-distribution conditions of the miniature, and the official prompt-pair file format."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np
import torch
from icml26_shared import check_int, fail

NUM_CLASSES = 10


def load_digits_images() -> tuple[torch.Tensor, torch.Tensor]:
    """All 1797 digits as images in [-1, 1] (N, 1, 8, 8) float32 and their labels (N,) int64."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = torch.tensor(digits.images / 8.0 - 1.0, dtype=torch.float32).unsqueeze(1)
    return images, torch.tensor(digits.target, dtype=torch.int64)


def class_conditions(classes: np.ndarray) -> torch.Tensor:
    """In-distribution conditions: one-hot vectors (N, 10) of the given classes (N,)."""
    classes = np.asarray(classes)
    if classes.ndim != 1 or ((classes < 0) | (classes >= NUM_CLASSES)).any():
        raise fail("classes", classes, f"a 1-D array of class indices in [0, {NUM_CLASSES - 1}]")
    return torch.nn.functional.one_hot(torch.as_tensor(classes, dtype=torch.int64), NUM_CLASSES).double()


def mixture_conditions(first: np.ndarray, second: np.ndarray, weight: float = 0.5) -> torch.Tensor:
    """Out-of-distribution conditions (ours, [INF]): ``w e_a + (1 - w) e_b`` for distinct classes a != b,
    a point between two classes that training never showed (an 'impossible composition')."""
    if not 0 < weight < 1:
        raise fail("weight", weight, "a number in the open interval (0, 1)")
    first, second = np.asarray(first), np.asarray(second)
    if first.shape != second.shape or (first == second).any():
        raise fail("second", second, "class indices of the shape of first, each different from first")
    return weight * class_conditions(first) + (1 - weight) * class_conditions(second)


def draw_pairs(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """n random (a, b) class pairs with a != b: a is the ID class, (a, b) the OOD mixture."""
    n = check_int("n", n, 1)
    a = rng.integers(0, NUM_CLASSES, size=n)
    b = (a + rng.integers(1, NUM_CLASSES, size=n)) % NUM_CLASSES
    return a, b


def load_prompt_pairs(path: str | os.PathLike) -> dict[int, dict[str, str]]:
    """The official prompt-pair file: tab-separated columns ``pair_id, label, prompt`` with label in
    {id, ood} (any case); every pair needs both. Returns ``{pair_id: {"ID": ..., "OOD": ...}}``."""
    path = Path(path)
    if not path.is_file():
        raise fail("path", str(path), "an existing tab-separated prompt-pair file")
    pairs: dict[int, dict[str, str]] = {}
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t")
        missing = {"pair_id", "label", "prompt"} - set(reader.fieldnames or [])
        if missing:
            raise fail("path", str(path), f"a TSV with columns pair_id, label, prompt (missing {sorted(missing)})")
        for row in reader:
            label = (row["label"] or "").strip().lower()
            if label not in ("id", "ood"):
                raise fail("label", row["label"], f"'id' or 'ood' (pair_id {row['pair_id']})")
            try:
                pair_id = int(row["pair_id"])
            except (TypeError, ValueError):
                raise fail("pair_id", row["pair_id"], "an integer") from None
            pairs.setdefault(pair_id, {})[label.upper()] = (row["prompt"] or "").strip()
    incomplete = [pid for pid, d in pairs.items() if set(d) != {"ID", "OOD"}]
    if not pairs or incomplete:
        raise fail("pair_id", incomplete or "none", "pairs with both an ID and an OOD prompt")
    return pairs
