"""The tokenizer's two tokenisations and V_num construction (probing and Algorithm 1), bad inputs."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_smmd import NumberTokenizer, NumericVocab


def test_digit_level_splits_every_number_into_digits():
    tok = NumberTokenizer(9)
    assert tok.decode(tok.encode("12+7=")) == "12+7="
    assert len(tok.encode("123")) == 3 and len(tok.encode("7")) == 1


def test_multi_digit_keeps_integers_up_to_the_bound_and_splits_leading_zeros():
    tok = NumberTokenizer(999)
    assert len(tok.encode("999")) == 1 and len(tok.encode("1000")) == 4
    assert len(tok.encode("05")) == 2 and len(tok.encode("0")) == 1
    assert tok.encode("what time is it ?", add_special_tokens=True)[0] == tok.bos_id


@given(st.integers(0, 10**6), st.sampled_from([9, 99, 999]))
def test_encode_decode_round_trip(n, bound):
    tok = NumberTokenizer(bound)
    assert tok.decode(tok.encode(f"{n}:{n}")) == f"{n}:{n}"


def test_vocab_from_tokenizer_is_sorted_bijection():
    tok = NumberTokenizer(99)
    vocab = NumericVocab.from_tokenizer(tok, max_value=999)
    assert len(vocab) == 100 and torch.equal(vocab.values, torch.arange(100, dtype=torch.float64))
    is_numeric, index = vocab.lookup()
    assert int(is_numeric.sum()) == 100
    assert torch.equal(index[vocab.token_ids], torch.arange(100))
    assert tok.decode([int(vocab.token_ids[42])]) == "42"


def test_vocab_from_token_strings_parses_numbers_algorithm_1():
    vocab = NumericVocab.from_token_strings(["a", "\u01207", "3.5", "=", "-2", "12"])
    assert vocab.values.tolist() == [-2.0, 3.5, 7.0, 12.0]
    assert vocab.token_ids.tolist() == [4, 2, 1, 5] and vocab.vocab_size == 6


def test_several_tokens_may_carry_one_value():
    # issue 16.7: GPT-2 has "3" and "Ġ3", and a full-width "３" also reads 3; all were refused
    vocab = NumericVocab.from_token_strings(["7", "a", "\u01203", "3", "\uff13", "07", "8"])
    assert vocab.values.tolist() == [3.0, 7.0, 8.0] and len(vocab) == 3
    assert vocab.token_ids.tolist() == [2, 3, 4, 0, 5, 6]
    assert vocab.value_index.tolist() == [0, 0, 0, 1, 1, 2]
    is_numeric, index = vocab.lookup()
    assert is_numeric.tolist() == [True, False, True, True, True, True, True]
    assert index[[2, 3, 4, 0, 5, 6]].tolist() == [0, 0, 0, 1, 1, 2]


def test_value_probabilities_pool_the_tokens_of_one_value():
    vocab = NumericVocab([3.0, 7.0, 3.0], [0, 1, 2], 4)
    logits = torch.tensor([[0.5, -1.0, 2.0, 9.0]], dtype=torch.float64)
    p_tokens = torch.softmax(logits[0, :3], 0)
    torch.testing.assert_close(
        vocab.value_probabilities(logits)[0], torch.stack([p_tokens[0] + p_tokens[2], p_tokens[1]])
    )


def test_duplicate_token_ids_are_rejected():
    with pytest.raises(ValueError, match="token_ids="):
        NumericVocab([1, 2], [3, 3], 5)


def test_token_ids_outside_the_vocabulary_are_rejected():
    with pytest.raises(ValueError, match="token_ids="):
        NumericVocab([1, 2], [3, 5], 5)


def test_empty_values_are_rejected():
    with pytest.raises(ValueError, match="values="):
        NumericVocab([], [], 5)


def test_tokenizer_without_single_token_integers_is_rejected():
    class TwoTokens:
        vocab_size = 4

        def encode(self, text, add_special_tokens=False):
            return [0, 1]

    with pytest.raises(ValueError, match="tokenizer="):
        NumericVocab.from_tokenizer(TwoTokens(), max_value=9)


def test_negative_max_value_is_rejected():
    with pytest.raises(ValueError, match="max_value="):
        NumericVocab.from_tokenizer(NumberTokenizer(9), max_value=-1)


def test_vocabulary_without_numbers_is_rejected():
    with pytest.raises(ValueError, match="tokens="):
        NumericVocab.from_token_strings(["a", "b"])


def test_unknown_text_and_bad_bound_are_rejected():
    with pytest.raises(ValueError, match="text="):
        NumberTokenizer(9).encode("x@y")
    with pytest.raises(ValueError, match="max_number_token="):
        NumberTokenizer(5)
