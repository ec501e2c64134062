import numpy as np
import pytest
from icml26_sateen import CORRUPTIONS, continual_stream, corrupt, corruption_suite, load_dataset
from icml26_sateen.experiment import ALL_CORRUPTIONS


def _images(n=6, side=8):
    return np.random.default_rng(0).random((n, 1, side, side)).astype(np.float32)


def test_experiment_lists_the_same_corruptions():
    assert ALL_CORRUPTIONS == CORRUPTIONS


def test_digits_split_is_fixed_and_balanced():
    X_train, y_train, X_test, y_test = load_dataset("digits")
    assert X_train.shape[1:] == (1, 8, 8) and len(X_train) + len(X_test) == 1797
    assert 0.0 <= X_test.min() and X_test.max() <= 1.0
    assert np.array_equal(load_dataset("digits")[3], y_test)
    assert np.abs(np.bincount(y_test) - np.bincount(y_train)).max() <= 1


@pytest.mark.parametrize("name", CORRUPTIONS)
def test_corruptions_are_deterministic_in_range_and_change_the_image(name):
    x = _images()
    a = corrupt(x, name, 5, np.random.default_rng(1))
    assert a.shape == x.shape and a.dtype == np.float32 and a.min() >= 0 and a.max() <= 1
    assert np.array_equal(a, corrupt(x, name, 5, np.random.default_rng(1)))
    assert not np.allclose(a, x)


def test_severity_ladders_are_monotone():
    x = _images(50, 28)
    for name in ("gaussian_noise", "impulse_noise", "gaussian_blur"):
        errors = [np.abs(corrupt(x, name, s, np.random.default_rng(0)) - x).mean() for s in range(1, 6)]
        assert np.all(np.diff(errors) > 0), name
    stds = [corrupt(x, "contrast", s, np.random.default_rng(0)).std() for s in range(1, 6)]
    assert np.all(np.diff(stds) < 0)


def test_continual_stream_visits_every_domain_in_order_each_round():
    labels = np.arange(10)
    suite = corruption_suite(_images(10), 3, np.random.default_rng(0), ("contrast", "pixelate"))
    seen = [(r, name, len(y)) for r, name, _, y in continual_stream(suite, labels, 2, 4, np.random.default_rng(0))]
    assert [(r, n) for r, n, _ in seen] == [
        (r, n) for r in range(2) for n in ("contrast", "pixelate") for _ in range(3)
    ]
    assert sum(k for _, _, k in seen) == 40


def test_rejects_severity_outside_one_to_five():
    with pytest.raises(ValueError, match="severity="):
        corrupt(_images(), "contrast", 6, np.random.default_rng(0))


def test_rejects_unknown_corruption():
    with pytest.raises(ValueError, match="name="):
        corrupt(_images(), "fog", 1, np.random.default_rng(0))


def test_rejects_non_image_array():
    with pytest.raises(ValueError, match="images="):
        corrupt(np.zeros((4, 8, 8)), "contrast", 1, np.random.default_rng(0))


def test_rejects_unknown_dataset():
    with pytest.raises(ValueError, match="name="):
        load_dataset("cifar10")


def test_rejects_zero_rounds():
    with pytest.raises(ValueError, match="rounds="):
        next(continual_stream({"contrast": _images()}, np.zeros(6, dtype=np.int64), 0, 2, np.random.default_rng(0)))
