"""Real digits, image and label validation."""

import pytest
import torch
from icml26_fuse import check_images, load_digits_images, split_digits
from icml26_fuse.data import check_labels


def test_digits_are_real_16x16_images_in_range():
    x, y = load_digits_images()
    assert x.shape == (1797, 1, 16, 16) and y.shape == (1797,)
    assert x.min() >= 0 and x.max() <= 1 and set(y.tolist()) == set(range(10))
    from sklearn.datasets import load_digits  # the same data through scikit-learn's own loader

    reference = load_digits()
    native = torch.tensor(reference.images / 16.0, dtype=torch.float32)[:, None]
    torch.testing.assert_close(x, torch.nn.functional.interpolate(native, size=(16, 16), mode="bilinear"))
    assert torch.equal(y, torch.tensor(reference.target))


def test_split_is_seeded_and_disjoint():
    a = split_digits(1000, seed=3)
    b = split_digits(1000, seed=3)
    assert all(torch.equal(u, v) for u, v in zip(a, b, strict=True))
    assert a[0].shape[0] == 1000 and a[2].shape[0] == 797
    assert not torch.equal(split_digits(1000, seed=4)[0], a[0])


def test_split_rejects_bad_sizes():
    with pytest.raises(ValueError, match="n_train="):
        split_digits(1797, 0)  # leaves an empty test set
    with pytest.raises(ValueError, match="n_train="):
        split_digits(0, 0)


@pytest.mark.parametrize(
    "x",
    [
        torch.rand(2, 16, 16),  # no channel axis
        torch.rand(0, 1, 16, 16),  # empty
        torch.rand(2, 1, 16, 16) * 2,  # outside [0, 1]
        torch.full((2, 1, 4, 4), float("nan")),
        torch.ones(2, 1, 4, 4, dtype=torch.uint8),  # integer pixels
    ],
)
def test_check_images_rejects_bad_batches(x):
    with pytest.raises(ValueError, match="images="):
        check_images("images", x)


def test_check_images_rejects_a_wrong_channel_count():
    with pytest.raises(ValueError, match="images="):
        check_images("images", torch.rand(2, 3, 4, 4), channels=1)


@pytest.mark.parametrize("y", [torch.zeros(3, dtype=torch.long), torch.zeros(4), torch.full((4,), 10)])
def test_check_labels_rejects_bad_labels(y):
    with pytest.raises(ValueError, match="y="):
        check_labels("y", y, 4)
