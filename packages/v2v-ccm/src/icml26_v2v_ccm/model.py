"""A small multimodal transformer standing in for the V2V-LLM (LLaVA + per-CAV LiDAR tokens), trained in-repo.

Sequence (axis letters: b batch, l sequence, h heads, d width): the question tokens ``[answer (type +
reference), ego position]``, then the visual tokens of every agent (ego first), each a linear embedding of its raw
BEV patch + 2-D sinusoidal position (ego frame) + an ego/CAV embedding. Attention carries a 2-D ALiBi bias
(-slope_h x distance between token positions) [INF]. A pruned token is removed by a key mask, which is the same
computation as deleting it (tested). The answer is read from the answer token. The QSM head (``W_q``, ``W_k``)
is trained on the side by distillation [INF, spec option]: the dense model's attention from the answer token to
the visual tokens is the target of ``softmax(r_i)``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

N_QUESTION_TOKENS = 2


class Inputs(NamedTuple):
    """One batch for the model: question tokens (b, 2, d), visual tokens (b, a, n, d), positions (b, l, 2)."""

    question: torch.Tensor
    visual: torch.Tensor
    positions: torch.Tensor


def sinusoidal_2d(pos: torch.Tensor, d: int, grid: int) -> torch.Tensor:
    """(..., 2) positions in cells -> (..., d) features [sin, cos](omega_k x), [sin, cos](omega_k y) with
    omega_k = (k + 1) pi / grid, k < d / 4: periods from 2 grid down to 8 grid / d cells, so that no frequency
    aliases on a patch lattice of d / 8 patches or fewer a side [INF]."""
    n = d // 4
    omega = torch.arange(1, n + 1, dtype=pos.dtype, device=pos.device) * math.pi / grid
    angles = pos[..., :, None] * omega  # (..., 2, n)
    return torch.cat([angles.sin(), angles.cos()], -1).flatten(-2)


class Block(nn.Module):
    """Pre-LN transformer block whose attention probabilities can be read (FastV needs them)."""

    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x: torch.Tensor, keep: torch.Tensor, bias: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x (b, l, d), keep (b, l) bool key mask, bias (b, h, l, l) -> new x and attention (b, h, l, l)."""
        b, l, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, l, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // self.heads) + bias
        attention = scores.masked_fill(~keep[:, None, None, :], float("-inf")).softmax(-1)
        x = x + self.proj((attention @ v).transpose(1, 2).reshape(b, l, d))
        return x + self.mlp(self.ln2(x)), attention


class CooperativeQA(nn.Module):
    """The tiny V2V MLLM: question + all agents' visual tokens -> answer logits over ``n_answers``."""

    def __init__(
        self,
        token_dim: int,
        grid: int = 32,
        d: int = 32,
        heads: int = 4,
        layers: int = 2,
        n_types: int = 4,
        n_answers: int = 5,
        d_m: int = 16,
    ):
        super().__init__()
        self.grid, self.d = grid, d
        self.patch_embed = nn.Linear(token_dim, d)
        self.agent_embed = nn.Embedding(2, d)  # 0 ego, 1 CAV
        self.type_embed = nn.Embedding(n_types, d)
        self.role_embed = nn.Embedding(N_QUESTION_TOKENS, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, n_answers)
        # 2-D ALiBi [INF]: head h adds -slope_h * |p_i - p_j| (cells) to its attention logits; slopes start
        # log-spaced from ~0 (a global head) to 2 (a head that reads the patch at a referenced point)
        self.slope = nn.Parameter(torch.log(torch.expm1(torch.logspace(-2, math.log10(2.0), heads))))
        self.W_q = nn.Linear(d, d_m, bias=False)  # QSM projection of the pooled question
        self.W_k = nn.Linear(d, d_m, bias=False)  # sender-side projection of each token

    def embed_tokens(self, raw: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """raw (b, a, n, D), pos (n, 2) -> (b, a, n, d) visual tokens; agent 0 is the ego."""
        agent = torch.ones(raw.shape[1], dtype=torch.long, device=raw.device)
        agent[0] = 0
        pe = sinusoidal_2d(pos, self.d, self.grid)
        return self.patch_embed(raw) + pe + self.agent_embed(agent)[:, None]

    def positions(self, ref: torch.Tensor, ego: torch.Tensor, pos: torch.Tensor, n_agents: int) -> torch.Tensor:
        """(b, l, 2) positions of the sequence: ref, ego, then every agent's patch centres ``pos`` (n, 2)."""
        visual = pos.repeat(n_agents, 1).expand(ref.shape[0], -1, -1)
        return torch.cat([ref[:, None], ego[:, None], visual], 1)

    def embed_question(self, qtype: torch.Tensor, ref: torch.Tensor, ego: torch.Tensor) -> torch.Tensor:
        """qtype (b,), ref (b, 2), ego (b, 2) -> (b, 2, d) question tokens: the answer token (question type +
        referenced point, the template with its slot filled) and the ego-position token."""
        tokens = torch.stack(
            [self.type_embed(qtype) + sinusoidal_2d(ref, self.d, self.grid), sinusoidal_2d(ego, self.d, self.grid)],
            1,
        )
        return tokens + self.role_embed.weight

    def forward(self, inputs: Inputs, keep: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """``inputs`` and keep (b, a, n) bool (agent 0 = ego) -> logits (b, n_answers) and the attention maps of
        every layer (b, h, l, l)."""
        question, visual, positions = inputs
        b = question.shape[0]
        x = torch.cat([question, visual.flatten(1, 2)], 1)
        mask = torch.cat([torch.ones(b, question.shape[1], dtype=torch.bool, device=x.device), keep.flatten(1)], 1)
        bias = -F.softplus(self.slope)[:, None, None] * torch.cdist(positions, positions)[:, None]
        attentions = []
        for block in self.blocks:
            x, attention = block(x, mask, bias)
            attentions.append(attention)
        return self.head(self.norm(x[:, 0])), attentions

    def qsm(self, question: torch.Tensor) -> torch.Tensor:
        """Question Semantic Message: q = W_q mean(question token embeddings), (b, d_m) [INF]."""
        return self.W_q(question.mean(1))

    def relevance(self, qsm: torch.Tensor, visual: torch.Tensor) -> torch.Tensor:
        """r_i = <q, W_k x_i> / sqrt(d_m) for the tokens (b, ..., n, d) of a sender -> (b, ..., n)."""
        k = self.W_k(visual)
        q = qsm.view(qsm.shape[0], *([1] * (k.dim() - 2)), qsm.shape[-1])
        return (k * q).sum(-1) / math.sqrt(qsm.shape[-1])


def answer_attention(attentions: list[torch.Tensor]) -> torch.Tensor:
    """Attention from the answer (type) token to each visual token, mean over heads and layers -> (b, a*n)."""
    return torch.stack([a[:, :, 0, N_QUESTION_TOKENS:] for a in attentions]).mean((0, 2))


def distillation_loss(model: CooperativeQA, inputs: Inputs, attentions: list[torch.Tensor]) -> torch.Tensor:
    """KL(dense answer attention || softmax(r)) over the visual tokens; trains only W_q and W_k."""
    target = answer_attention([a.detach() for a in attentions])
    r = model.relevance(model.qsm(inputs.question.detach()), inputs.visual.detach().flatten(1, 2))
    return F.kl_div(r.log_softmax(-1), target, reduction="batchmean")
