import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_diffusion_info.baselines import classifier_mutual_information, fit_classifier
from icml26_diffusion_info.data import load_digits_dequantised, low_pass, split


def test_classifier_mi_is_log_k_for_separable_classes_and_zero_for_noise():
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(4), 50)
    separable = 10.0 * np.eye(4)[labels] + 0.1 * rng.standard_normal((200, 4))
    clf = fit_classifier(separable, labels, 0)
    assert np.isclose(classifier_mutual_information(clf, separable, labels), np.log(4), atol=0.05)
    noise, shuffled = rng.standard_normal((400, 4)), rng.permutation(np.repeat(np.arange(4), 100))
    clf = fit_classifier(noise[:200], shuffled[:200], 0)
    assert classifier_mutual_information(clf, noise[200:], shuffled[200:]) < 0.1


@given(st.integers(0, 100))
def test_low_pass_averages_blocks(seed):
    x = np.random.default_rng(seed).standard_normal((3, 64))
    y = low_pass(x)
    assert y.shape == (3, 16)
    assert np.isclose(y[0, 0], x[0].reshape(8, 8)[:2, :2].mean())
    assert np.allclose(y.mean(axis=1), x.mean(axis=1))  # block means preserve the image mean


def test_digits_are_dequantised_into_minus_one_one():
    x, labels = load_digits_dequantised(np.random.default_rng(0))
    assert x.shape == (1797, 64) and set(labels) == set(range(10))
    assert x.min() >= -1 and x.max() < 1 and len(np.unique(x)) > 1000
    x_train, _, x_test, _ = split(x, labels, 0.2, np.random.default_rng(0))
    assert len(x_test) == 359 and len(x_train) + len(x_test) == 1797


def test_classifier_mi_rejects_unknown_labels():
    clf = fit_classifier(np.eye(2), np.array([0, 1]), 0)
    with pytest.raises(ValueError, match="labels="):
        classifier_mutual_information(clf, np.eye(2), np.array([0, 2]))


def test_data_rejects_bad_arguments():
    with pytest.raises(ValueError, match="images="):
        low_pass(np.zeros((2, 10)))
    with pytest.raises(ValueError, match="factor="):
        low_pass(np.zeros((2, 64)), 3)
    with pytest.raises(ValueError, match="test_fraction="):
        split(np.zeros((4, 2)), np.zeros(4), 1.0, np.random.default_rng(0))
