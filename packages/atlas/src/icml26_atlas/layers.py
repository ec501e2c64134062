"""Sequence-model layers around the memories: the Atlas layer, its baselines and a small recall model.

``MemoryLayer`` is one token mixer with every memory rule behind the same shell (as in the paper's
Section 6 comparisons): projections, a short causal convolution and SiLU on q, k, v (Titans/Atlas),
l2-normalised queries and keys, input-dependent gates, then the memory read-out and an output
projection. ``rule`` picks the memory:

- ``atlas``: polynomial features (eq. 5), Omega rule over ``window`` tokens, momentum and Muon (NS5);
- ``omeganet``: Omega rule with plain momentum, identity features;
- ``deltanet``: the delta rule (window 1, no momentum), identity features;
- ``linear_attention``: Hebbian memory, identity features;
- ``softmax``: causal softmax attention.

The memories run their updates in every mode: test-time learning happens inside ``forward`` through
closed-form gradients, so ``model.eval()`` and ``torch.no_grad()`` do not switch it off.

Axis letters (einops): b batch, t tokens, h heads, d head dimension, three (q, k, v), four (the four
Omega gates eta, alpha, theta, gamma).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from einops import rearrange
from icml26_shared import check_choice, check_int, fail
from torch import nn

from .baselines import delta_rule, linear_attention, softmax_attention
from .features import PolynomialFeatures
from .method import omega_memory

RULES = ("atlas", "omeganet", "deltanet", "linear_attention", "softmax")
DECAY_INIT_BIAS = 4.0  # alpha = sigmoid(4) ~ 0.98 at init: the memory forgets slowly (ours [INF])
ETA_INIT_BIAS = -2.0  # eta = sigmoid(-2) ~ 0.12 at init: small inner steps, as Titans' lr init (ours [INF])


class ShortConv(nn.Module):
    """Causal depthwise 1-D convolution over time, then SiLU: (B, T, F) -> (B, T, F), contiguous.

    Contiguous so that the heads split from it have unit stride in the feature axis: PyTorch's fused
    (flash) CPU attention kernel needs that, and falls back to materialising the T x T scores without it.
    """

    def __init__(self, channels: int, size: int) -> None:
        super().__init__()
        self.size = size
        self.conv = nn.Conv1d(channels, channels, size, groups=channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.pad(x.transpose(1, 2), (self.size - 1, 0))
        return F.silu(self.conv(x)).transpose(1, 2).contiguous()


class MemoryLayer(nn.Module):
    """One token mixer: (B, T, d_model) -> (B, T, d_model), with the memory picked by ``rule``."""

    def __init__(
        self,
        d_model: int,
        heads: int = 2,
        head_dim: int = 16,
        rule: str = "atlas",
        degree: int = 2,
        window: int = 4,
        chunk_size: int = 16,
        ns_steps: int = 5,
        conv_size: int = 4,
    ) -> None:
        super().__init__()
        self.d_model = check_int("d_model", d_model, 1)
        self.heads = check_int("heads", heads, 1)
        self.head_dim = check_int("head_dim", head_dim, 1)
        self.rule = check_choice("rule", rule, RULES)
        self.window = check_int("window", window, 1)
        self.chunk_size = check_int("chunk_size", chunk_size, 1)
        self.ns_steps = check_int("ns_steps", ns_steps, 1)
        check_int("conv_size", conv_size, 1)
        inner = heads * head_dim
        self.qkv = nn.Linear(d_model, 3 * inner, bias=False)
        self.conv = ShortConv(3 * inner, conv_size)
        n_gates = {"atlas": 4, "omeganet": 4, "deltanet": 1}.get(rule, 0)
        self.gates = nn.Linear(d_model, n_gates * heads) if n_gates else None
        if rule in ("atlas", "omeganet"):
            with torch.no_grad():  # order eta, alpha, theta, gamma: small steps, slow decay
                self.gates.bias.view(4, heads)[0].fill_(ETA_INIT_BIAS)
                self.gates.bias.view(4, heads)[1].fill_(DECAY_INIT_BIAS)
        self.features = PolynomialFeatures(head_dim, degree) if rule == "atlas" else None
        self.out = nn.Linear(inner, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim != 3 or x.shape[-1] != self.d_model:
            raise fail("x", tuple(x.shape), f"a (B, T, {self.d_model}) tensor")
        q, k, v = rearrange(self.conv(self.qkv(x)), "b t (three h d) -> three b h t d", three=3, h=self.heads)
        q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
        if self.rule == "softmax":
            y = softmax_attention(q * self.head_dim**0.5, k, v)  # unit q, k: logits in [-sqrt(d), sqrt(d)]
        elif self.rule == "linear_attention":
            y = linear_attention(q, k, v)
        elif self.rule == "deltanet":
            beta = rearrange(torch.sigmoid(self.gates(x)), "b t h -> b h t")  # in (0, 1)
            y, _ = delta_rule(q, k, v, beta, self.chunk_size)
        else:
            eta, alpha, theta, gamma = rearrange(torch.sigmoid(self.gates(x)), "b t (four h) -> four b h t", four=4)
            if self.features is not None:
                q, k = self.features(q), self.features(k)
            ns_steps = self.ns_steps if self.rule == "atlas" else None
            y, _ = omega_memory(q, k, v, eta, alpha, theta, gamma, self.window, self.chunk_size, ns_steps)
        return self.out(rearrange(y, "b h t d -> b t (h d)"))


class RecallModel(nn.Module):
    """Embedding, ``layers`` pre-norm blocks (memory layer + MLP), norm, vocabulary head.

    Input ids (B, T) or (B, T, S) with ``S`` id slots per position whose embeddings are summed (MQAR's
    key and value slots); id ``vocab`` is the blank. Output logits (B, T, vocab).
    """

    def __init__(self, vocab: int, d_model: int = 32, layers: int = 1, **layer_kwargs) -> None:
        super().__init__()
        self.vocab = check_int("vocab", vocab, 2)
        check_int("layers", layers, 1)
        self.embed = nn.Embedding(vocab + 1, d_model)
        self.mixers = nn.ModuleList(MemoryLayer(d_model, **layer_kwargs) for _ in range(layers))
        self.mlps = nn.ModuleList(
            nn.Sequential(
                nn.LayerNorm(d_model), nn.Linear(d_model, 2 * d_model), nn.GELU(), nn.Linear(2 * d_model, d_model)
            )
            for _ in range(layers)
        )
        self.norms = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(layers))
        self.head = nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, vocab))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        if tokens.ndim not in (2, 3) or tokens.dtype != torch.long or tokens.min() < 0 or tokens.max() > self.vocab:
            raise fail("tokens", tuple(tokens.shape), f"a (B, T) or (B, T, S) long tensor of ids in [0, {self.vocab}]")
        x = self.embed(tokens)
        x = x.sum(-2) if tokens.ndim == 3 else x
        for norm, mixer, mlp in zip(self.norms, self.mixers, self.mlps, strict=True):
            x = x + mixer(norm(x))
            x = x + mlp(x)
        return self.head(x)
