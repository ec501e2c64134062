"""BIT-LLM: fMRI tokens as a persistent key/value memory, read by gated cross-attention in every decoder layer.

Axis letters: b batch, l text positions, t fMRI tokens, h heads, d channels.

The frozen LLM's decoder layers are left untouched; before every ``interval``-th layer a Flamingo gated
cross-attention block (Alayrac et al. 2022, lucidrains/flamingo-pytorch) updates the hidden states:

    h <- h + tanh(alpha) * CrossAttn(LN(h), M)        # queries from the text, keys/values from M
    h <- h + tanh(beta)  * FFN(LN(h))

with alpha = beta = 0 at initialisation, so the LLM's output is unchanged until the interface learns
(spec section 3, [INF] placement before each layer as in Flamingo). The keys/values of the memory M are
computed once per sample (``bind``) and reused at every layer input of every generated token: the
"persistent" memory, as opposed to a prefix that the LM reads once at the input. Decoding keeps the LM's
self-attention keys/values in a ``transformers`` KV cache and feeds only the new token after the prompt: the
adapters act per position against the fixed memory, so the cached states are those a full re-run computes.
"""

from __future__ import annotations

import contextlib

import torch
from einops import rearrange
from icml26_shared import check_int, fail
from torch import nn
from torch.nn import functional as F
from transformers import DynamicCache

from .lm import PROMPT, context_length, encode, shifted_ce


class GatedCrossAttention(nn.Module):
    """Flamingo's GATED XATTN-DENSE block (tanh gates initialised at 0)."""

    def __init__(self, dim: int, heads: int = 4, dim_head: int = 16, ff_mult: int = 4):
        super().__init__()
        check_int("heads", heads, 1)
        check_int("dim_head", dim_head, 1)
        check_int("ff_mult", ff_mult, 1)
        inner = heads * dim_head
        self.heads = heads
        self.norm = nn.LayerNorm(dim)
        self.to_q = nn.Linear(dim, inner, bias=False)
        self.to_kv = nn.Linear(dim, 2 * inner, bias=False)
        self.to_out = nn.Linear(inner, dim, bias=False)
        self.attn_gate = nn.Parameter(torch.tensor(0.0))  # alpha: tanh(0) = 0
        self.ff = nn.Sequential(
            nn.LayerNorm(dim), nn.Linear(dim, ff_mult * dim), nn.GELU(), nn.Linear(ff_mult * dim, dim)
        )
        self.ff_gate = nn.Parameter(torch.tensor(0.0))  # beta: tanh(0) = 0

    def memory_kv(self, memory: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Keys and values (b, h, t, d) of the memory: computed once per sample, read at every position."""
        k, v = self.to_kv(memory).chunk(2, dim=-1)
        return tuple(rearrange(x, "b t (h d) -> b h t d", h=self.heads) for x in (k, v))

    def forward(self, x: torch.Tensor, kv: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        q = rearrange(self.to_q(self.norm(x)), "b l (h d) -> b h l d", h=self.heads)
        attended = F.scaled_dot_product_attention(q, *kv)  # every text position sees every fMRI token
        x = x + torch.tanh(self.attn_gate) * self.to_out(rearrange(attended, "b h l d -> b l (h d)"))
        return x + torch.tanh(self.ff_gate) * self.ff(x)


class CaptionDecoder(nn.Module):
    """A frozen causal LM that captions fMRI tokens (b, t, d_memory): teacher-forced loss, greedy/sampled decoding.

    Subclasses define ``logits(ids, memory, cache)`` over the text positions and may bind the memory once per
    batch (``memory_scope``).
    """

    def __init__(self, lm, tokenizer, prompt: str = PROMPT):
        super().__init__()
        self.lm, self.tokenizer, self.prompt = lm, tokenizer, prompt
        self.dim = int(lm.config.hidden_size)
        self.context = context_length(lm)

    n_prefix = 0  # soft tokens the decoder puts into the LM's context

    def logits(self, ids: torch.Tensor, memory: torch.Tensor, cache: DynamicCache | None = None) -> torch.Tensor:
        """(b, l, vocab) logits at the text positions ``ids`` (b, l). With a ``cache`` that holds the positions
        before ``ids`` (empty at the first step), only ``ids`` run through the LM and the cache grows by them."""
        raise NotImplementedError

    def run_lm(self, cache: DynamicCache | None, **inputs: torch.Tensor) -> torch.Tensor:
        """The frozen LM's logits on ``inputs`` (input_ids or inputs_embeds; logits_to_keep: the positions that
        get logits), after ``cache``'s positions if given."""
        return self.lm(**inputs, cache=cache, use_cache=cache is not None).logits

    @contextlib.contextmanager
    def memory_scope(self, memory: torch.Tensor):
        yield

    def encode(self, captions: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        return encode(self.tokenizer, self.prompt, captions, self.context, self.n_prefix)

    def loss(self, memory: torch.Tensor, captions: list[str]) -> torch.Tensor:
        """Stage (ii): next-token cross-entropy on the caption tokens only (prompt masked with -100)."""
        check_memory(memory, len(captions))
        ids, labels = self.encode(captions)
        with self.memory_scope(memory):
            return shifted_ce(self.logits(ids, memory), labels)

    def prompt_ids(self, batch: int) -> torch.Tensor:
        ids, _ = self.encode([""] * batch)
        return ids[:, : ids.shape[1] - 1]  # [bos] prompt, without the eos of the empty caption

    @torch.no_grad()
    def generate(
        self, memory: torch.Tensor, max_new_tokens: int, sample: bool = False, generator: torch.Generator | None = None
    ) -> torch.Tensor:
        """(b, max_new_tokens) token ids, greedy (argmax) or sampled at temperature 1; eos then padding.

        The prompt runs once; then each step feeds only the last token, against the LM's KV cache.
        """
        check_int("max_new_tokens", max_new_tokens, 1)
        ids = self.prompt_ids(len(memory))
        if self.n_prefix + ids.shape[1] + max_new_tokens > self.context:
            raise fail("max_new_tokens", max_new_tokens, f"a length that fits the LM's context of {self.context}")
        check_memory(memory, len(ids))
        eos, start = self.tokenizer.eos_token_id, ids.shape[1]
        done = torch.zeros(len(ids), dtype=torch.bool)
        cache, new = DynamicCache(config=self.lm.config), ids
        with self.memory_scope(memory):
            for _ in range(max_new_tokens):
                last = self.logits(new, memory, cache)[:, -1]
                if sample:
                    token = torch.multinomial(torch.softmax(last, dim=-1), 1, generator=generator)[:, 0]
                else:
                    token = last.argmax(dim=-1)
                new = torch.where(done, torch.full_like(token, eos), token)[:, None]
                ids = torch.cat([ids, new], dim=1)
                done |= new[:, 0] == eos
                if done.all():
                    break
        out = ids[:, start:]
        return F.pad(out, (0, max_new_tokens - out.shape[1]), value=eos)

    def token_logprobs(self, memory: torch.Tensor, generated: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """log pi(y_t | y_<t, M) of ``generated`` tokens (b, l), with gradient, and the mask up to the first eos."""
        prompt = self.prompt_ids(len(generated))
        ids = torch.cat([prompt, generated], dim=1)
        with self.memory_scope(memory):
            logp = torch.log_softmax(self.logits(ids, memory)[:, prompt.shape[1] - 1 : -1], dim=-1)
        chosen = logp.gather(-1, generated[..., None])[..., 0]
        is_eos = (generated == self.tokenizer.eos_token_id).long()
        mask = (is_eos.cumsum(1) - is_eos) == 0  # tokens up to and including the first eos
        return chosen, mask

    def decode(self, generated: torch.Tensor) -> list[str]:
        """Captions from generated ids, cut at the first eos."""
        eos, out = self.tokenizer.eos_token_id, []
        for row in generated.tolist():
            row = row[: row.index(eos)] if eos in row else row
            out.append(self.tokenizer.decode(row, skip_special_tokens=True).strip())
        return out

    def caption(self, memory: torch.Tensor, max_new_tokens: int, batch: int = 256) -> list[str]:
        """Greedy captions (the paper's evaluation decoding), in batches."""
        return [
            c
            for i in range(0, len(memory), batch)
            for c in self.decode(self.generate(memory[i : i + batch], max_new_tokens))
        ]


def check_memory(memory: torch.Tensor, batch: int) -> None:
    if not isinstance(memory, torch.Tensor) or memory.ndim != 3:
        raise fail("memory", getattr(memory, "shape", memory), "fMRI tokens of shape (batch, n_tokens, dim)")
    if memory.shape[0] != batch:
        raise fail("memory", tuple(memory.shape), f"one row of fMRI tokens per caption ({batch})")


class BitLLM(CaptionDecoder):
    """The frozen LM with a gated cross-attention adapter before every ``interval``-th decoder layer."""

    def __init__(
        self,
        lm,
        tokenizer,
        d_memory: int,
        interval: int = 1,
        heads: int = 4,
        dim_head: int = 16,
        ff_mult: int = 4,
        prompt: str = PROMPT,
    ):
        super().__init__(lm, tokenizer, prompt)
        layers = lm.model.layers
        check_int("interval", interval, 1, len(layers))
        check_int("d_memory", d_memory, 1)
        self.project = nn.Sequential(nn.Linear(d_memory, self.dim), nn.LayerNorm(self.dim))  # fMRI tokens -> M
        self.where = list(range(0, len(layers), interval))
        self.adapters = nn.ModuleList(GatedCrossAttention(self.dim, heads, dim_head, ff_mult) for _ in self.where)
        self._kv: list | None = None
        self._hooks = [
            layers[i].register_forward_pre_hook(self._hook(k), with_kwargs=True) for k, i in enumerate(self.where)
        ]

    def _hook(self, k: int):
        def pre_hook(module, args, kwargs):
            if self._kv is None:  # no memory bound: the layer runs as the frozen LM's
                return None
            if args:
                return (self.adapters[k](args[0], self._kv[k]), *args[1:]), kwargs
            return args, {**kwargs, "hidden_states": self.adapters[k](kwargs["hidden_states"], self._kv[k])}

        return pre_hook

    @contextlib.contextmanager
    def memory_scope(self, memory: torch.Tensor):
        """Bind M: project the fMRI tokens and compute every adapter's keys/values once (persistent K/V)."""
        m = self.project(memory.to(self.lm.dtype))
        self._kv = [adapter.memory_kv(m) for adapter in self.adapters]
        try:
            yield
        finally:
            self._kv = None

    def logits(self, ids: torch.Tensor, memory: torch.Tensor, cache: DynamicCache | None = None) -> torch.Tensor:
        if self._kv is None or self._kv[0][0].shape[0] != len(ids):
            raise RuntimeError("BitLLM.logits needs its memory bound: call it inside memory_scope(memory)")
        return self.run_lm(cache, input_ids=ids)

    def remove(self) -> None:
        """Take the adapters' hooks off the LM (which is then the plain frozen LM again)."""
        for h in self._hooks:
            h.remove()
        self._hooks = []

    @property
    def gates(self) -> torch.Tensor:
        """(n_adapters, 2) tanh(alpha), tanh(beta): 0 at initialisation."""
        return torch.tanh(torch.stack([torch.stack([a.attn_gate, a.ff_gate]) for a in self.adapters]))


def scst_loss(
    decoder: CaptionDecoder,
    memory: torch.Tensor,
    references: list[list[str]],
    reward,
    max_new_tokens: int,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, float]:
    """Stage (iii), self-critical sequence training (Rennie et al. 2017) with the greedy caption as baseline:

    L = -(r(y^s) - r(y^g)) sum_t log pi(y^s_t | y^s_<t, M), averaged over the caption tokens,

    where ``reward(references, captions)`` gives per-sample rewards (CIDEr-D). Returns (loss, mean reward of y^s).
    """
    greedy = decoder.decode(decoder.generate(memory, max_new_tokens))
    sampled_ids = decoder.generate(memory, max_new_tokens, sample=True, generator=generator)
    r_sample = torch.as_tensor(reward(references, decoder.decode(sampled_ids)), dtype=torch.float32)
    advantage = r_sample - torch.as_tensor(reward(references, greedy), dtype=torch.float32)
    logp, mask = decoder.token_logprobs(memory, sampled_ids)
    loss = -(advantage[:, None] * logp * mask).sum() / mask.sum().clamp(min=1)
    return loss, float(r_sample.mean())
