"""What BIT-LLM is compared with: the prefix (soft-prompt) decoder, the language prior, retrieval.

* ``PrefixDecoder``: MindLLM / LLaVA-style. The same fMRI tokens, mapped by an MLP projector into the LM's
  embedding space, are spliced into the input once, after [bos] and before the prompt; the frozen LM reads
  them only through its own self-attention.
* ``LanguagePrior``: the frozen LM alone, no fMRI (the floor every perturbation is measured against).
* ``retrieve_captions``: nearest training caption in the stage-(i) contrastive space (spec section 4).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F
from transformers import DynamicCache

from .lm import PROMPT
from .method import CaptionDecoder


class PrefixDecoder(CaptionDecoder):
    """fMRI tokens as a soft prompt: [bos] P(M) prompt caption, P a 2-layer MLP ([INF] LLaVA-1.5's projector)."""

    def __init__(self, lm, tokenizer, d_memory: int, n_tokens: int, prompt: str = PROMPT):
        super().__init__(lm, tokenizer, prompt)
        self.n_prefix = n_tokens
        self.project = nn.Sequential(nn.Linear(d_memory, self.dim), nn.GELU(), nn.Linear(self.dim, self.dim))

    def logits(self, ids: torch.Tensor, memory: torch.Tensor, cache: DynamicCache | None = None) -> torch.Tensor:
        embed = self.lm.get_input_embeddings()(ids)
        if cache is not None and cache.get_seq_length() > 0:  # the prefix sits in the cache: new text tokens only
            return self.run_lm(cache, inputs_embeds=embed)
        prefix = self.project(memory.to(embed.dtype))
        x = torch.cat([embed[:, :1], prefix, embed[:, 1:]], dim=1)
        text = torch.cat([torch.zeros(1, dtype=torch.long), torch.arange(1 + prefix.shape[1], x.shape[1])])
        return self.run_lm(cache, inputs_embeds=x, logits_to_keep=text.to(x.device))  # no LM head on the prefix


class LanguagePrior(CaptionDecoder):
    """The frozen LM captioning from the prompt alone: what generation falls back to without neural evidence."""

    def logits(self, ids: torch.Tensor, memory: torch.Tensor, cache: DynamicCache | None = None) -> torch.Tensor:
        return self.run_lm(cache, input_ids=ids)


def retrieve_captions(query: torch.Tensor, keys: torch.Tensor, captions: list[str]) -> list[str]:
    """For each query embedding (q, d), the caption of the most cosine-similar key (k, d)."""
    best = (F.normalize(query, dim=-1) @ F.normalize(keys, dim=-1).T).argmax(dim=1)
    return [captions[i] for i in best.tolist()]
