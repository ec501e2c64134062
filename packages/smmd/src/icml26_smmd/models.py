"""Tiny models that end in a language-model head over the whole vocabulary, logits (B, T, V).

``AnswerHead`` turns a feature vector into T answer positions and scores each with one shared
unembedding (the LM head): the numeric tokens compete with every other token, as in an LLM, and the
same token row serves every position. ``ClockEncoder`` is a two-layer CNN over clock images (the tiny
vision encoder of a VLM); ``PromptEncoder`` embeds a fixed-length prompt and mixes it with an MLP.
"""

from __future__ import annotations

import torch
from icml26_shared import check_int, fail
from torch import nn

DTYPES = (torch.float32, torch.float64)


def _factory(dtype: torch.dtype) -> dict:
    """Layer keyword arguments that draw the parameters in ``dtype`` (float32 normal draws of 16 or more values
    differ in their last bits between torch's CPU kernel paths, AVX2/AVX512 vs default; float64 draws do not)."""
    if dtype not in DTYPES:
        raise fail("dtype", dtype, "torch.float32 or torch.float64")
    return {"dtype": dtype}


class ClockEncoder(nn.Module):
    """(B, 1, S, S) images -> (B, width) features; two stride-2 convolutions and a linear layer."""

    def __init__(
        self, size: int = 32, width: int = 128, channels: int = 16, dtype: torch.dtype = torch.float32
    ) -> None:
        super().__init__()
        f = _factory(dtype)
        size = check_int("size", size, 16)
        self.net = nn.Sequential(
            nn.Conv2d(1, channels, 5, stride=2, padding=2, **f),
            nn.ReLU(),
            nn.Conv2d(channels, 2 * channels, 3, stride=2, padding=1, **f),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(2 * channels * ((size + 3) // 4) ** 2, check_int("width", width, 1), **f),
            nn.ReLU(),
        )

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.net(images.to(self.net[0].weight.dtype))  # float32 pixels into a float64 encoder


class PromptEncoder(nn.Module):
    """(B, L) prompt token ids -> (B, width): token + position embeddings, flattened, then an MLP."""

    def __init__(
        self, vocab_size: int, length: int, embed_dim: int = 16, width: int = 256, dtype: torch.dtype = torch.float32
    ) -> None:
        super().__init__()
        f = _factory(dtype)
        self.length = check_int("length", length, 1)
        self.token = nn.Embedding(check_int("vocab_size", vocab_size, 1), check_int("embed_dim", embed_dim, 1), **f)
        self.position = nn.Parameter(torch.zeros(length, embed_dim, **f))
        self.mlp = nn.Sequential(
            nn.Linear(length * embed_dim, width, **f), nn.ReLU(), nn.Linear(width, width, **f), nn.ReLU()
        )

    def forward(self, prompts: torch.Tensor) -> torch.Tensor:
        if prompts.ndim != 2 or prompts.shape[1] != self.length:
            raise ValueError(f"prompts={tuple(prompts.shape)}: expected (B, {self.length}) token ids")
        return self.mlp((self.token(prompts) + self.position).flatten(1))


class AnswerHead(nn.Module):
    """(B, F) features -> (B, T, V) logits: a per-position projection, then the shared LM head."""

    def __init__(
        self, feature_dim: int, n_positions: int, vocab_size: int, width: int = 64, dtype: torch.dtype = torch.float32
    ) -> None:
        super().__init__()
        f = _factory(dtype)
        self.n_positions = check_int("n_positions", n_positions, 1)
        self.width = check_int("width", width, 1)
        self.project = nn.Linear(check_int("feature_dim", feature_dim, 1), n_positions * width, **f)
        self.lm_head = nn.Linear(width, check_int("vocab_size", vocab_size, 1), **f)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        z = torch.relu(self.project(features)).view(-1, self.n_positions, self.width)
        return self.lm_head(z)


class TokenReader(nn.Module):
    """An encoder followed by ``AnswerHead``: inputs -> logits (B, T, V)."""

    def __init__(self, encoder: nn.Module, head: AnswerHead) -> None:
        super().__init__()
        self.encoder, self.head = encoder, head

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(inputs))
