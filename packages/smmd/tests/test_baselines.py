"""Number Token Loss: closed forms on one-hot predictions, Jensen's bound between the variants, bad inputs."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_smmd import NumberTokenizer, NumberTokenLoss, NumericVocab

TOK = NumberTokenizer(99)
VOCAB = NumericVocab.from_tokenizer(TOK, 99)
V = TOK.vocab_size


@given(st.integers(0, 99), st.integers(0, 99))
def test_one_hot_prediction_gives_the_absolute_and_squared_error(pred, target):
    logits = torch.full((1, 1, V), -60.0, dtype=torch.float64)
    logits[0, 0, VOCAB.token_ids[pred]] = 60.0
    y = VOCAB.token_ids[target].view(1, 1)
    assert float(NumberTokenLoss(VOCAB, "was")(logits, y)) == pytest.approx(abs(pred - target), abs=1e-3)
    assert float(NumberTokenLoss(VOCAB, "mse")(logits, y)) == pytest.approx((pred - target) ** 2, abs=1e-2)


@given(st.integers(0, 10_000), st.integers(0, 99))
def test_wasserstein_bounds_the_error_of_the_expected_value(seed, target):
    logits = torch.randn(1, 1, V, generator=torch.Generator().manual_seed(seed))
    y = VOCAB.token_ids[target].view(1, 1)
    was = float(NumberTokenLoss(VOCAB, "was")(logits, y))
    mse = float(NumberTokenLoss(VOCAB, "mse")(logits, y))
    assert was + 1e-3 >= mse**0.5  # Jensen: E|v - y| >= |E v - y|


def test_ignores_non_numeric_targets():
    logits = torch.randn(1, 2, V)
    assert float(NumberTokenLoss(VOCAB)(logits, torch.tensor([[TOK.eos_id, -100]]))) == 0.0


def test_rejects_unknown_variant():
    with pytest.raises(ValueError, match="variant="):
        NumberTokenLoss(VOCAB, "huber")
