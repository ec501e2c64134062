"""What ATR is compared against, as token losses on the answer tokens of the LVLM.

* ``token_cross_entropy``: plain instruction-tuning loss, the mean CE over answer tokens.
* ``focal_loss``: Lin et al. 2017, ``-(1 - p)^gamma log p`` (gamma = 2), distribution-agnostic like ATR.
* ``logit_adjusted_loss``: Menon et al. 2021, CE on ``z + tau log pi`` with the *true* training prior pi
  (an oracle that needs the class counts ATR does without); predict with the raw logits z.
"""

from __future__ import annotations

import numpy as np
import torch
from icml26_shared import check_number, check_positive, fail

from .method import check_token_inputs, token_log_probs


def token_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over the scored tokens (targets != IGNORE)."""
    return -token_log_probs(logits, targets).mean()


def focal_loss(logits: torch.Tensor, targets: torch.Tensor, gamma: float = 2.0) -> torch.Tensor:
    """Mean ``-(1 - p_t)^gamma log p_t`` over the scored tokens (gamma = 0 is cross-entropy)."""
    if check_number("gamma", gamma) < 0:
        raise fail("gamma", gamma, "a number >= 0")
    log_p = token_log_probs(logits, targets)
    return (-((1 - log_p.exp()).clamp_min(0) ** gamma) * log_p).mean()


def answer_log_prior(
    counts: np.ndarray, first_word_ids: list[int], vocab_size: int, length: int, position: int
) -> torch.Tensor:
    """log pi at each text position (T, V): the class prior on the class-word position, 0 elsewhere.

    The class word is the first answer token (``position``: the index of ``<bos>`` in the input, which
    predicts it); pi(word) = count / N summed over the classes that start with that word. Tokens that are no
    class word get the smallest class prior [INF]. Later answer tokens carry no class information (they follow
    from the first), so they are not adjusted.
    """
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 1 or counts.size != len(first_word_ids) or counts.min() <= 0:
        raise fail("counts", counts.tolist(), f"{len(first_word_ids)} positive class counts, one per class")
    if not 0 <= position < length:
        raise fail("position", position, f"a text position in [0, {length - 1}]")
    prior = np.zeros(vocab_size)
    np.add.at(prior, first_word_ids, counts / counts.sum())
    log_prior = np.full(vocab_size, np.log(prior[prior > 0].min()))
    log_prior[prior > 0] = np.log(prior[prior > 0])
    out = torch.zeros(length, vocab_size, dtype=torch.float64)  # cast to the logits' dtype where it is used
    out[position] = torch.as_tensor(log_prior)
    return out


def logit_adjusted_loss(
    logits: torch.Tensor, targets: torch.Tensor, log_prior: torch.Tensor, tau: float = 1.0
) -> torch.Tensor:
    """Logit-adjusted CE (Menon et al. 2021, eq. 10): mean CE of ``z + tau log pi`` over the scored tokens.

    ``log_prior`` is (T, V) per text position (``answer_log_prior``) or (V,) for every position.
    """
    check_positive("tau", tau)
    check_token_inputs(logits, targets)
    if log_prior.shape not in (logits.shape[-2:], logits.shape[-1:]):
        raise fail("log_prior", tuple(log_prior.shape), f"(T, V) = {tuple(logits.shape[-2:])} or (V,)")
    adjusted = logits + tau * log_prior.to(logits.device, logits.dtype)
    return -token_log_probs(adjusted, targets).mean()
