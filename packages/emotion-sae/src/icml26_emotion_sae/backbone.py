"""The tiny LLM-based TTS backbone (trained in-repo; stands in for IndexTTS2's text-to-semantic GPT).

A causal transformer reads ``[text phones][emotion token][BOS]`` and generates semantic tokens
autoregressively until EOS. Hidden states are read and edited through one hook on the residual stream
after block ``layer`` (``forward(tokens, hook=..., layer=...)``), from the emotion token on: the edit also
reaches the emotion token's state, which later blocks could otherwise read the original emotion from.
This is the ``HiddenStateBackbone`` interface a real model (IndexTTS2, CosyVoice) would implement with a
forward hook on the same point.

Sequence layout (left-padded so that every prompt ends at the same position)::

    [PAD .. PAD p_1 .. p_L] [EMO_e] [BOS] s_1 .. s_T [EOS]
     <---- MAX_PHONES ---->   1       1    generated
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np
import torch
import torch.nn.functional as F
from einops import rearrange
from icml26_shared import check_int, fail
from torch import nn

from .data import EMOTIONS, MAX_FRAMES, MAX_PHONES, N_PHONES, check_text, emotion_index

Hook = Callable[[torch.Tensor], torch.Tensor]  # (B, T, d) residual -> edited residual, position-wise
KV = tuple[torch.Tensor, torch.Tensor]
PROMPT_LEN = MAX_PHONES + 2  # text, emotion, BOS
EMOTION_POSITION = MAX_PHONES  # the first position a hook edits


class HiddenStateBackbone(Protocol):
    """What the SAE analysis needs from a TTS backbone: residual states at a layer, and generation with a
    hook editing them at every step."""

    d_model: int
    n_layers: int

    def residuals(self, tokens: torch.Tensor, layer: int) -> torch.Tensor: ...

    def generate(self, texts: list[list[int]], emotions: list[str], hook: Hook | None, layer: int) -> np.ndarray: ...


class Vocabulary:
    """Token ids: semantic tokens 0..K-1, EOS = K (the output classes), then phones, emotions, BOS, PAD."""

    def __init__(self, n_semantic: int) -> None:
        self.n_semantic = check_int("n_semantic", n_semantic, 2)
        self.eos = n_semantic
        self.phone0 = n_semantic + 1
        self.emotion0 = self.phone0 + N_PHONES
        self.bos = self.emotion0 + len(EMOTIONS)
        self.pad = self.bos + 1
        self.size = self.pad + 1

    def prompt(self, text: list[int], emotion: str) -> list[int]:
        text = check_text(text)
        return (
            [self.pad] * (MAX_PHONES - len(text))
            + [self.phone0 + p for p in text]
            + [
                self.emotion0 + emotion_index(emotion),
                self.bos,
            ]
        )

    def training_sequence(self, text: list[int], emotion: str, semantic: np.ndarray) -> list[int]:
        """Prompt + semantic tokens + EOS, right-padded to the longest utterance."""
        seq = self.prompt(text, emotion) + [int(s) for s in semantic] + [self.eos]
        return seq + [self.pad] * (PROMPT_LEN + MAX_FRAMES + 1 - len(seq))


class Block(nn.Module):
    """Pre-LayerNorm transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x: torch.Tensor, past: KV | None = None) -> tuple[torch.Tensor, KV]:
        """b t d -> b t d (h heads, causal), and the keys/values of every position so far (KV cache).

        With ``past`` (the cache of earlier positions), ``x`` is one new position that attends to all of them.
        """
        q, k, v = rearrange(self.qkv(self.ln1(x)), "b t (three h e) -> three b h t e", three=3, h=self.n_heads)
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        attention = F.scaled_dot_product_attention(q, k, v, is_causal=past is None)
        x = x + self.out(rearrange(attention, "b h t e -> b t (h e)"))
        return x + self.mlp(self.ln2(x)), (k, v)


class TinyTTS(nn.Module):
    """Text + emotion -> semantic tokens: a GPT-style causal transformer (learned positions)."""

    def __init__(self, n_semantic: int, d_model: int = 64, n_layers: int = 3, n_heads: int = 4) -> None:
        super().__init__()
        check_int("d_model", d_model, 1)
        check_int("n_layers", n_layers, 1)
        check_int("n_heads", n_heads, 1)
        if d_model % n_heads:
            raise fail("n_heads", n_heads, f"a divisor of d_model={d_model}")
        self.vocab = Vocabulary(n_semantic)
        self.d_model, self.n_layers = d_model, n_layers
        self.max_len = PROMPT_LEN + MAX_FRAMES + 1
        self.embed = nn.Embedding(self.vocab.size, d_model)
        self.position = nn.Parameter(0.02 * torch.randn(self.max_len, d_model))
        self.blocks = nn.ModuleList(Block(d_model, n_heads) for _ in range(n_layers))
        self.ln = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, n_semantic + 1)  # semantic tokens and EOS

    def check_layer(self, layer: int) -> int:
        """A hook point: the residual stream after block ``layer`` (1..n_layers)."""
        if isinstance(layer, bool) or not isinstance(layer, int) or not 1 <= layer <= self.n_layers:
            raise IndexError(f"layer={layer!r}: expected a block index in [1, {self.n_layers}]")
        return layer

    def run(
        self,
        tokens: torch.Tensor,
        hook: Hook | None = None,
        layer: int | None = None,
        start: int = 0,
        past: list[KV] | None = None,
    ) -> tuple[torch.Tensor, list[KV]]:
        """Logits (B, T, K + 1) of tokens at positions ``start``.. and the KV cache. ``hook`` edits the
        residual after block ``layer`` at every position from the emotion token on (in the prefill and at
        each generated token, as a forward hook on a real model fires on both). The text positions before
        the emotion token cannot carry emotion (causal attention) and are left alone."""
        x = self.embed(tokens) + self.position[start : start + tokens.shape[1]]
        cache = []
        for i, block in enumerate(self.blocks, start=1):
            x, kv = block(x, None if past is None else past[i - 1])
            cache.append(kv)
            if hook is not None and i == layer:
                first = max(EMOTION_POSITION - start, 0)
                x = torch.cat([x[:, :first], hook(x[:, first:])], dim=1)
        return self.head(self.ln(x)), cache

    def forward(self, tokens: torch.Tensor, hook: Hook | None = None, layer: int | None = None) -> torch.Tensor:
        """(B, T) token ids -> (B, T, K + 1) next-token logits (teacher forcing)."""
        return self.run(tokens, hook, layer)[0]

    def residuals(self, tokens: torch.Tensor, layer: int) -> torch.Tensor:
        """(B, T, d) residual stream after block ``layer``."""
        self.check_layer(layer)
        x = self.embed(tokens) + self.position[: tokens.shape[1]]
        for block in self.blocks[:layer]:
            x = block(x)[0]
        return x

    @torch.no_grad()
    def generate(
        self, texts: list[list[int]], emotions: list[str], hook: Hook | None = None, layer: int | None = None
    ) -> np.ndarray:
        """Greedy decoding of every sentence in parallel, with a KV cache; (B, MAX_FRAMES) tokens, EOS-padded
        after the end. The hook edits each new position once, at every step (as a hook on a KV-cached
        model does): the same states as re-running the whole sequence with the hook on every position."""
        if len(texts) != len(emotions) or not texts:
            raise fail("emotions", emotions, f"one emotion per text ({len(texts)} texts)")
        if hook is not None:
            self.check_layer(layer)
        tokens = torch.tensor([self.vocab.prompt(t, e) for t, e in zip(texts, emotions)])
        logits, cache = self.run(tokens, hook, layer)
        done = torch.zeros(len(texts), dtype=torch.bool)
        out = []
        for step in range(MAX_FRAMES):
            nxt = torch.where(done, self.vocab.eos, logits[:, -1].argmax(-1))
            out.append(nxt)
            done |= nxt == self.vocab.eos
            if done.all() or step == MAX_FRAMES - 1:
                break
            logits, cache = self.run(nxt[:, None], hook, layer, PROMPT_LEN + step, cache)
        out = torch.stack(out, 1).numpy()
        return np.pad(out, ((0, 0), (0, MAX_FRAMES - out.shape[1])), constant_values=self.vocab.eos)


def train_tts(
    model: TinyTTS, sequences: torch.Tensor, steps: int, batch: int, lr: float, generator: torch.Generator
) -> list[float]:
    """Teacher-forced next-token cross-entropy on the generated part (semantic tokens and EOS), AdamW with
    cosine decay; returns the loss per step."""
    inputs, targets = sequences[:, :-1], sequences[:, 1:].clone()
    targets[:, : PROMPT_LEN - 1] = -100  # the prompt is given, not predicted
    targets[targets >= model.vocab.eos + 1] = -100  # padding after EOS
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, steps)
    losses = []
    for _ in range(steps):
        idx = torch.randint(len(sequences), (batch,), generator=generator)
        logits = model(inputs[idx])
        loss = F.cross_entropy(logits.flatten(0, 1), targets[idx].flatten(), ignore_index=-100)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        schedule.step()
        losses.append(loss.item())
    return losses


def decoded_lengths(tokens: np.ndarray, eos: int) -> np.ndarray:
    """Number of semantic tokens before the first EOS in each row of (B, T) generated tokens."""
    is_eos = np.asarray(tokens) == eos
    return np.where(is_eos.any(1), is_eos.argmax(1), is_eos.shape[1])
