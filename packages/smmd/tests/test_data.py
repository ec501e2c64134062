"""Generated tasks: clock images show the hands where the time says, addition answers are the sums."""

import numpy as np
import pytest
import torch
from icml26_smmd import NumberTokenizer
from icml26_smmd.data import addition_task, clock_task, render_clocks
from icml26_smmd.models import AnswerHead, ClockEncoder, PromptEncoder, TokenReader


def test_clock_hands_point_where_the_time_says():
    img = render_clocks(np.array([3 * 60, 9 * 60]), size=32, noise=0.0)[:, 0]
    assert img.shape == (2, 32, 32) and img.min() >= 0 and img.max() <= 1
    # 3:00 has the hour hand to the right of centre, 9:00 to the left (the minute hand points up in both)
    centre_row = img[:, 14:18]
    assert centre_row[0, :, 18:28].sum() > 2 * centre_row[0, :, 4:14].sum()
    assert centre_row[1, :, 4:14].sum() > 2 * centre_row[1, :, 18:28].sum()


def test_clock_targets_read_back_as_the_time():
    tok = NumberTokenizer(99)
    task = clock_task(20, tok, np.random.default_rng(0), noise=0.0)
    for row, (h, m) in zip(task.targets, task.values, strict=True):
        assert tok.decode(row[:-1]) == f"{h}:{m}" and row[-1] == tok.eos_id and 1 <= h <= 12


def test_addition_answers_are_the_sums_and_splits_are_disjoint():
    tok = NumberTokenizer(9)
    train, test = addition_task(tok, 300, 200, np.random.default_rng(1))
    prompts = {tuple(p) for p in train.inputs}
    assert not prompts & {tuple(p) for p in test.inputs}
    for prompt, answer, value in zip(train.inputs[:20], train.targets[:20], train.values[:20], strict=True):
        a, b = tok.decode(prompt).rstrip("=").split("+")
        assert int(tok.decode(answer[:-1])) == int(a) + int(b) == value[0]


def test_models_emit_logits_over_the_vocabulary():
    tok = NumberTokenizer(99)
    clock = TokenReader(ClockEncoder(), AnswerHead(128, 4, tok.vocab_size))
    assert clock(torch.zeros(3, 1, 32, 32)).shape == (3, 4, tok.vocab_size)
    adder = TokenReader(PromptEncoder(tok.vocab_size, 6), AnswerHead(256, 4, tok.vocab_size))
    assert adder(torch.zeros(3, 6, dtype=torch.long)).shape == (3, 4, tok.vocab_size)


def test_bad_inputs_are_rejected():
    with pytest.raises(ValueError, match="minutes_of_day="):
        render_clocks(np.array([720]))
    with pytest.raises(ValueError, match="noise="):
        render_clocks(np.array([0]), noise=-0.1)
    with pytest.raises(ValueError, match="tokenizer="):
        clock_task(4, NumberTokenizer(9), np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_test="):
        addition_task(NumberTokenizer(9), 9000, 2000, np.random.default_rng(0))
    with pytest.raises(ValueError, match="prompts="):
        PromptEncoder(10, 6)(torch.zeros(2, 5, dtype=torch.long))


def test_float64_models_draw_and_keep_float64():
    """float32 pixels into a float64 encoder give float64 logits; float16 is refused by name."""
    tok = NumberTokenizer(99)
    clock = TokenReader(ClockEncoder(dtype=torch.float64), AnswerHead(128, 4, tok.vocab_size, dtype=torch.float64))
    adder = TokenReader(
        PromptEncoder(tok.vocab_size, 6, dtype=torch.float64), AnswerHead(256, 4, tok.vocab_size, dtype=torch.float64)
    )
    assert {p.dtype for m in (clock, adder) for p in m.parameters()} == {torch.float64}
    assert clock(torch.zeros(3, 1, 32, 32)).dtype == adder(torch.zeros(3, 6, dtype=torch.long)).dtype == torch.float64
    with pytest.raises(ValueError, match="dtype="):
        ClockEncoder(dtype=torch.float16)
