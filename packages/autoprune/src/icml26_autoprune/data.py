"""Data: disjoint calibration and evaluation windows of Shakespeare tokens, and the planted-outlier network.

* ``text_windows``: of the first ``n_chars`` of Shakespeare tokenised once (``icml26_shared.llm.shakespeare_ids``),
  calibration windows are drawn from the first half of the tokens and evaluation windows from the second half,
  so the two never overlap; the seed picks the windows (``icml26_shared.llm.token_windows``); each starts with
  the tokenizer's BOS token where the tokenizer starts text with one (Gemma-3).
* ``planted_outlier_network``: a generated stand-in from the spec (section 5a): 6 Linear/ReLU blocks of width
  128, alternating heavy-tailed (Student-t, df = 2) and Gaussian weights, all scaled to the He variance.
"""

from __future__ import annotations

import numpy as np
import torch
from icml26_shared import check_int, fail
from icml26_shared.llm import token_windows
from torch import nn


def text_windows(
    ids: torch.Tensor, n_calib: int, n_eval: int, length: int, seed: int, bos: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """(calibration (n_calib, length), evaluation (n_eval, length)): non-overlapping windows at random
    offsets, calibration from the first half of ``ids`` and evaluation from the second half.

    ``bos``: the token the tokenizer starts text with, if any (Gemma-3's does, ``ids[0]``; SmolLM2's does not):
    every window is then that token and ``length - 1`` tokens of the text after it, as the model reads text
    (Gemma-3-270M's dense held-out perplexity on seed 0's 4 x 128 windows: 390 without it, 63 with it)."""
    if bos is not None:
        if int(ids[0]) != bos:
            raise fail("bos", bos, f"the first token of ids ({int(ids[0])}), where the tokenizer put it")
        ids = ids[1:]
    half = ids.numel() // 2
    rng = np.random.default_rng(check_int("seed", seed, 0))
    calibration = token_windows(ids[:half], n_calib, length, rng, "n_calib", bos)
    return calibration, token_windows(ids[half:], n_eval, length, rng, "n_eval", bos)


def planted_outlier_network(seed: int = 0, width: int = 128, depth: int = 6) -> nn.Sequential:
    """Blocks ``Sequential(Linear, ReLU)`` (the last without ReLU); even-indexed blocks heavy-tailed
    (Student-t df = 2), odd ones Gaussian; every weight matrix scaled to std sqrt(2 / width)."""
    rng = np.random.default_rng(check_int("seed", seed, 0))
    blocks = []
    for layer in range(check_int("depth", depth, 2)):
        raw = rng.standard_t(2, size=(width, width)) if layer % 2 == 0 else rng.standard_normal((width, width))
        linear = nn.Linear(width, width, bias=False)
        linear.weight.data = torch.tensor(raw / raw.std() * np.sqrt(2 / width), dtype=torch.float32)
        blocks.append(nn.Sequential(linear, nn.ReLU()) if layer < depth - 1 else nn.Sequential(linear))
    return nn.Sequential(*blocks)
