"""Transfer tasks: labels, class split, the pixel permutation of task B, bad inputs."""

import numpy as np
import pytest
from icml26_shared.datasets import FASHION_DIR
from icml26_think_touch.data import transfer_tasks


def test_digits_tasks_split_classes_and_permute_task_b():
    a, b = transfer_tasks("digits", seed=0)
    for task in (a, b):
        assert set(np.unique(task.y_train)) == set(range(5)) == set(np.unique(task.y_test))
        assert task.X_train.dtype == np.float32 and task.X_train.shape[1] == 64
        assert 0 <= task.X_train.min() and task.X_train.max() <= 1
    a1, b1 = transfer_tasks("digits", seed=1)
    assert np.array_equal(a.X_train, a1.X_train)  # task A does not depend on the seed
    assert not np.array_equal(b.X_train, b1.X_train)  # task B's permutation does
    assert np.allclose(np.sort(b.X_train, axis=1), np.sort(b1.X_train, axis=1))  # same images, pixels moved


def test_rejects_unknown_dataset_and_bad_sizes():
    with pytest.raises(ValueError, match="dataset="):
        transfer_tasks("mnist")
    with pytest.raises(ValueError, match="n_train="):
        transfer_tasks("digits", n_train=0)


@pytest.mark.skipif(not FASHION_DIR.is_dir(), reason="apt-get install dataset-fashion-mnist")
def test_fashion_tasks_for_the_paper_config():
    a, b = transfer_tasks("fashion", seed=0, n_train=600, n_test=200)
    assert a.X_train.shape[1] == b.X_train.shape[1] == 784
    assert len(a.y_train) + len(b.y_train) == 600 and set(np.unique(b.y_test)) <= set(range(5))
