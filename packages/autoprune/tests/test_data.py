"""Calibration and held-out windows: disjoint, seeded, and opened by the BOS token where the tokenizer uses one."""

import pytest
import torch
from icml26_autoprune.data import text_windows

IDS = torch.arange(100, 1100)  # distinct ids: a window's tokens say where it came from


def test_windows_are_disjoint_halves():
    calib, held = text_windows(IDS, 3, 4, 16, seed=1)
    assert calib.shape == (3, 16) and held.shape == (4, 16)
    assert int(calib.max()) < 600 <= int(held.min())  # first half / second half


def test_each_window_starts_with_bos_when_the_text_does():
    """Gemma-3's tokenizer starts text with BOS (id 2) and the model needs it at the start of every window
    (dense perplexity 390 without, 63 with, on seed 0's windows): every window is BOS + length - 1 text tokens."""
    ids = torch.cat([torch.tensor([2]), IDS])
    calib, held = text_windows(ids, 3, 4, 16, seed=1, bos=2)
    assert calib.shape == (3, 16) and held.shape == (4, 16)
    assert bool((calib[:, 0] == 2).all() and (held[:, 0] == 2).all())
    assert int((torch.cat([calib, held]) == 2).sum()) == 7  # only at the starts
    assert bool((calib[:, 1:].diff(dim=1) == 1).all())  # then contiguous text
    plain = text_windows(IDS, 3, 4, 15, seed=1)  # the same draws as windows one shorter of the text after the BOS
    assert torch.equal(calib[:, 1:], plain[0]) and torch.equal(held[:, 1:], plain[1])


def test_a_bos_the_text_does_not_start_with_is_refused():
    with pytest.raises(ValueError, match="^bos=2"):
        text_windows(IDS, 3, 4, 16, seed=1, bos=2)
