"""The long-tailed profile, splits, shot bins and the question/answer encoding."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_atr import default_vocabulary, encode_qa, long_tailed_counts, long_tailed_task, shot_bins
from icml26_atr.data import DIGIT_ANSWERS, FASHION_ANSWERS, IGNORE, QUESTION


def test_cifar10_lt_profile():
    # CIFAR-10-LT (Cao et al. 2019), imbalance ratio 100, n_max 5000
    assert long_tailed_counts(5000, 100.0, 10).tolist() == [5000, 2997, 1796, 1077, 645, 387, 232, 139, 83, 50]
    assert long_tailed_counts(7, 1.0, 3).tolist() == [7, 7, 7]


@given(st.integers(1, 5000), st.floats(1.0, 200.0), st.integers(2, 20))
def test_counts_decrease_from_n_max_to_n_max_over_ratio(n_max, ratio, classes):
    if n_max / ratio < 1:
        with pytest.raises(ValueError, match="imbalance_ratio="):
            long_tailed_counts(n_max, ratio, classes)
        return
    counts = long_tailed_counts(n_max, ratio, classes)
    assert counts[0] == n_max and (np.diff(counts) <= 0).all()
    assert counts[-1] == int(np.floor(n_max / ratio + 1e-9))


def test_counts_reject_bad_values():
    with pytest.raises(ValueError, match="imbalance_ratio="):
        long_tailed_counts(100, 0.5, 10)  # ratio < 1
    with pytest.raises(ValueError, match="imbalance_ratio="):
        long_tailed_counts(10, 100.0, 10)  # the tail class would get no sample
    with pytest.raises(ValueError, match="num_classes="):
        long_tailed_counts(10, 2.0, 1)


def test_shot_bins():
    assert shot_bins(np.array([500, 100, 50, 20, 19, 5])).tolist() == [
        "many",
        "medium",
        "medium",
        "medium",
        "few",
        "few",
    ]


def test_encoding_scores_answer_and_eos_only():
    vocab = default_vocabulary()
    text, targets = encode_qa(vocab, QUESTION, FASHION_ANSWERS, np.array([9, 0]))
    q = len(QUESTION)
    assert text.shape == targets.shape == (2, q + 3)
    words = [vocab.words[i] for i in text[0]]
    assert words == [*QUESTION, "<bos>", "ankle", "boot"]
    assert [vocab.words[i] for i in targets[0, q:]] == ["ankle", "boot", "<eos>"]
    assert (targets[:, :q] == IGNORE).all()
    assert [vocab.words[i] for i in targets[1, q : q + 2]] == ["t-shirt", "<eos>"] and targets[1, -1] == IGNORE


def test_encoding_rejects_bad_inputs():
    vocab = default_vocabulary()
    with pytest.raises(ValueError, match="answers="):
        encode_qa(vocab, QUESTION, (), np.array([0]))  # an empty class list
    with pytest.raises(ValueError, match="labels="):
        encode_qa(vocab, QUESTION, DIGIT_ANSWERS, np.array([10]))
    with pytest.raises(ValueError, match="question="):
        encode_qa(vocab, (), DIGIT_ANSWERS, np.array([0]))
    with pytest.raises(ValueError, match="words="):
        encode_qa(vocab, ("why", "?"), DIGIT_ANSWERS, np.array([0]))


def test_digits_task_is_long_tailed_with_a_balanced_test_set():
    task = long_tailed_task("digits", 100, 50.0, 20, seed=0)
    assert np.bincount(task.train_labels).tolist() == task.counts.tolist() == long_tailed_counts(100, 50.0, 10).tolist()
    assert np.bincount(task.test_labels).tolist() == [20] * 10
    assert task.train_images.shape[1:] == (1, 8, 8) and 0 <= task.train_images.min() and task.train_images.max() <= 1
    other = long_tailed_task("digits", 100, 50.0, 20, seed=1)
    assert not np.array_equal(task.train_images, other.train_images)


def test_task_rejects_bad_inputs():
    with pytest.raises(ValueError, match="dataset="):
        long_tailed_task("cifar", 100, 10.0, 5, 0)
    with pytest.raises(ValueError, match="counts="):
        long_tailed_task("digits", 500, 10.0, 5, 0)  # more than the pool has
    with pytest.raises(ValueError, match="test_per_class="):
        long_tailed_task("digits", 100, 10.0, 0, 0)
