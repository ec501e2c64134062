"""A small MoE language model (torch) to serve: trained in float32 on real text, served in bf16.

``TinyMoE``: token + position embeddings, ``layers`` pre-norm blocks of causal self-attention and a sparse
MoE feed-forward (``num_experts`` GELU experts ``w2 @ gelu(w1 @ x)``, top-k router with the softmax over
the k chosen logits, Switch-style load-balancing loss), a final norm and a linear head.

Serving (``decode_step``) runs one token per sequence with a KV cache and asks ``get_expert(layer, e)``
for each routed expert's weights, so the same code runs on resident weights (the reference) or on weights
coming from an offloading engine. Expert outputs are summed in expert-id order, whatever order the
weights arrive in, so outputs are bit-identical when the weights are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch
import torch.nn.functional as F
from icml26_shared import check_int, check_positive
from torch import nn

ExpertWeights = tuple[torch.Tensor, torch.Tensor]  # (w1 (d_ff, d), w2 (d, d_ff))


class MoEFeedForward(nn.Module):
    """Sparse MoE feed-forward: router (N, d), experts' w1 (N, d_ff, d) and w2 (N, d, d_ff)."""

    def __init__(self, d: int, d_ff: int, num_experts: int, k: int):
        super().__init__()
        self.k = check_int("k", k, 1, num_experts)
        self.router = nn.Linear(d, num_experts, bias=False)
        self.w1 = nn.Parameter(torch.randn(num_experts, d_ff, d) * 0.02)
        self.w2 = nn.Parameter(torch.randn(num_experts, d, d_ff) * 0.02)

    def route(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """x (n, d) -> top-k expert ids (n, k), gates (n, k) (softmax over the k logits), router probs (n, N)."""
        logits = self.router(x)
        top, ids = logits.topk(self.k, dim=-1)
        return ids, top.softmax(-1), logits.float().softmax(-1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x (n, d) -> (y (n, d), load-balancing loss N * sum_e f_e P_e)."""
        ids, gates, probs = self.route(x)
        y = torch.zeros_like(x)
        for e in range(self.w1.shape[0]):
            rows, slot = (ids == e).nonzero(as_tuple=True)
            if rows.numel():
                y = y.index_add(0, rows, gates[rows, slot, None] * expert_forward(x[rows], self.w1[e], self.w2[e]))
        fraction = F.one_hot(ids, probs.shape[-1]).float().sum(1).mean(0) / self.k
        return y, probs.shape[-1] * (fraction * probs.mean(0)).sum()


def expert_forward(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    """One expert: ``w2 @ gelu(w1 @ x)`` for rows x (n, d)."""
    return F.gelu(x @ w1.T) @ w2.T


class Block(nn.Module):
    """Pre-norm block: x + attention(ln(x)); x + MoE(ln(x))."""

    def __init__(self, d: int, heads: int, d_ff: int, num_experts: int, k: int):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.moe = MoEFeedForward(d, d_ff, num_experts, k)

    def attend(self, x: torch.Tensor, past: tuple[torch.Tensor, torch.Tensor] | None = None):
        """Causal self-attention of x (B, t, d) after ``past`` keys/values; returns (out, (k, v))."""
        B, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(B, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        if past is not None:
            k, v = torch.cat([past[0], k], 2), torch.cat([past[1], v], 2)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=past is None)
        return self.proj(out.transpose(1, 2).reshape(B, t, d)), (k, v)


class TinyMoE(nn.Module):
    """The MoE language model (vocabulary ``vocab``, context ``context``)."""

    def __init__(self, vocab: int, d=128, heads=4, layers=4, d_ff=256, num_experts=16, k=2, context=64):
        super().__init__()
        for name, value in (("vocab", vocab), ("d", d), ("layers", layers), ("d_ff", d_ff), ("context", context)):
            check_int(name, value, 1)
        check_int("heads", heads, 1, d)
        self.context = context
        self.embed, self.position = nn.Embedding(vocab, d), nn.Embedding(context, d)
        self.blocks = nn.ModuleList(Block(d, heads, d_ff, num_experts, k) for _ in range(layers))
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab)

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """tokens (B, t) -> (logits (B, t, vocab), mean load-balancing loss)."""
        B, t = tokens.shape
        x = self.embed(tokens) + self.position(torch.arange(t))
        balance = x.new_zeros(())
        for block in self.blocks:
            x = x + block.attend(x)[0]
            y, aux = block.moe(block.ln2(x).reshape(B * t, -1))
            x, balance = x + y.view(B, t, -1), balance + aux
        return self.head(self.ln(x)), balance / len(self.blocks)

    def expert(self, layer: int, e: int) -> ExpertWeights:
        """The resident weights (w1, w2) of expert ``e`` in ``layer``."""
        moe = self.blocks[layer].moe
        return moe.w1[e], moe.w2[e]


def train_moe(model: TinyMoE, data: torch.Tensor, steps: int, batch: int, lr: float, seed: int, alpha=0.01):
    """AdamW on next-token cross-entropy + ``alpha`` * load-balancing loss over random windows of ``data``."""
    check_int("steps", steps, 0)
    check_int("batch", batch, 1)
    check_positive("lr", lr)
    generator = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    model.train()
    for _ in range(steps):
        start = torch.randint(0, data.numel() - model.context - 1, (batch,), generator=generator)
        window = torch.stack([data[s : s + model.context + 1] for s in start.tolist()])
        logits, balance = model(window[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), window[:, 1:].reshape(-1)) + alpha * balance
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    model.eval()
    return float(loss.detach())


@torch.no_grad()
def decode_step(
    model: TinyMoE,
    tokens: torch.Tensor,
    position: int,
    kv: list,
    get_experts: Callable[[int, dict[int, int]], Iterable[tuple[int, ExpertWeights]]],
) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """One serving step: tokens (B,) at ``position`` -> (logits (B, vocab), routed ids per layer (B, k)).

    ``kv`` (one entry per layer, None at first) is updated in place. ``get_experts(layer, {e: tokens})``
    yields ``(e, (w1, w2))`` for the routed experts of a layer as they become available (an offloading
    engine loads the rest meanwhile); each expert is computed on arrival.
    """
    x = model.embed(tokens[:, None]) + model.position.weight[position]
    routed = []
    for layer, block in enumerate(model.blocks):
        out, kv[layer] = block.attend(x, kv[layer])
        x = x + out
        h = block.ln2(x)[:, 0]
        ids, gates, _ = block.moe.route(h)
        routed.append(ids)
        need = {int(e): int((ids == e).sum()) for e in ids.unique()}
        outputs = {}
        for e, weights in get_experts(layer, need):
            rows, slot = (ids == e).nonzero(as_tuple=True)
            outputs[e] = (rows, gates[rows, slot, None] * expert_forward(h[rows], *weights))
        y = torch.zeros_like(h)
        for e in sorted(need):  # fixed accumulation order: bit-identical outputs for identical weights
            y = y.index_add(0, *outputs[e])
        x = x + y[:, None]
    return model.head(model.ln(x))[:, 0], routed
