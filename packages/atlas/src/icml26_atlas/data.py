"""Generated data: random key-value pairs (memory capacity) and multi-query associative recall (MQAR).

MQAR (Arora et al., Zoology, 2023; the recall task of the paper's Section 6) shows ``n_pairs`` key-value
pairs, then every key again in a random order; at each repeated key the model must output the value
stored with it. Keys and values come from disjoint halves of the vocabulary. Ours: each pair arrives
at one position (key and value ids, embedded and summed) instead of two consecutive tokens, so the test
measures what the memory stores rather than how fast a tiny model learns to pair neighbours (the
shift/induction step that Zoology's format adds).
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
    """Inputs (batch, 2 n_pairs, 2) and targets (batch, 2 n_pairs): ``n_pairs`` (key, value) positions,
    then every key again as a query in a random order, with the blank id ``vocab`` in the value slot.

    Keys are distinct within a sequence, drawn from ids [0, vocab/2); values from [vocab/2, vocab).
    Targets are IGNORE except at the queries, where they are the value stored with that key.
    """
    batch, n_pairs, vocab = check_int("batch", batch, 1), check_int("n_pairs", n_pairs, 1), check_int("vocab", vocab, 2)
    half = vocab // 2
    if n_pairs > half:
        raise fail("n_pairs", n_pairs, f"at most vocab // 2 = {half} (keys are distinct within a sequence)")
    keys = torch.rand(batch, half, generator=generator).argsort(dim=-1)[:, :n_pairs]
    values = half + torch.randint(0, vocab - half, (batch, n_pairs), generator=generator)
    order = torch.rand(batch, n_pairs, generator=generator).argsort(dim=-1)
    queries = keys.gather(1, order)
    blank = torch.full_like(values, vocab)
    inputs = torch.stack([torch.cat([keys, queries], 1), torch.cat([values, blank], 1)], dim=-1)
    targets = torch.full((batch, 2 * n_pairs), IGNORE, dtype=torch.long)
    targets[:, n_pairs:] = values.gather(1, order)
    return inputs, targets
