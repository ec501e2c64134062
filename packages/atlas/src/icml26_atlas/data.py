"""Generated data: random key-value pairs (memory capacity) and multi-query associative recall (MQAR).

MQAR (Arora et al., Zoology, 2023; the recall task of the paper's Section 6) shows ``n_pairs`` key-value
token pairs, then every key again in a random order; at each repeated key the model must output the
value that followed it. Keys and values come from disjoint halves of the vocabulary.
"""

from __future__ import annotations

import torch
from icml26_shared import check_int, fail

IGNORE = -100  # target at positions that are not scored (torch's cross-entropy ignore_index)


def random_pairs(n: int, d_k: int, d_v: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` unit-norm Gaussian keys (n, d_k) and Gaussian values (n, d_v), float64."""
    n, d_k, d_v = check_int("n", n, 1), check_int("d_k", d_k, 1), check_int("d_v", d_v, 1)
    keys = torch.randn(n, d_k, generator=generator, dtype=torch.float64)
    values = torch.randn(n, d_v, generator=generator, dtype=torch.float64)
    return keys / keys.norm(dim=-1, keepdim=True), values


def mqar_batch(batch: int, n_pairs: int, vocab: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Tokens (batch, 3 n_pairs) ``k_1 v_1 ... k_n v_n q_1 ... q_n`` and targets (IGNORE except at queries).

    Keys are distinct within a sequence, drawn from ids [0, vocab/2); values from [vocab/2, vocab).
    """
    batch, n_pairs, vocab = check_int("batch", batch, 1), check_int("n_pairs", n_pairs, 1), check_int("vocab", vocab, 2)
    half = vocab // 2
    if n_pairs > half:
        raise fail("n_pairs", n_pairs, f"at most vocab // 2 = {half} (keys are distinct within a sequence)")
    keys = torch.rand(batch, half, generator=generator).argsort(dim=-1)[:, :n_pairs]
    values = half + torch.randint(0, vocab - half, (batch, n_pairs), generator=generator)
    order = torch.rand(batch, n_pairs, generator=generator).argsort(dim=-1)
    queries = keys.gather(1, order)
    tokens = torch.cat([torch.stack([keys, values], dim=-1).flatten(1), queries], dim=1)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, 2 * n_pairs :] = values.gather(1, order)
    return tokens, targets
