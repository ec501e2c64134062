"""PENCIL: a plain (BERT-style, post-LN) transformer encoder over adjacency-row tokens of a sampled
subgraph, read out at the two task tokens by a linear pair head; with its training loops.

Forward pass for a batch of token matrices X (B, L, 2M+2):

    H_0 = X P                                   fixed random orthogonal P (2M+2, d), not trained
    H_l = EncoderLayer_l(H_{l-1})               post-LN self-attention + GELU FFN, padding masked
    H_l <- H_l + GELU(W_l (A_hat H_l) + b_l)    message-passing residual (``mp_residual``, official code)
    logit = w^T [h_task_u ; h_task_v] + b       pair head (2d -> 1)

A_hat is read from the tokens: (onehot + adjacency row) over node positions, row-normalised by degree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from icml26_shared import check_int, check_positive, derive, fail
from torch import nn

from .data import Graph, sample_non_edges
from .sampler import Subgraph, sample_subgraphs, size_buckets, tokenize

INIT_STD = 0.02  # BERT initializer_range, used for the head and the message-passing projections
LAYER_NORM_EPS = 1e-12  # BERT's layer_norm_eps (torch's default 1e-5 gave the whole 3.2e-6 forward gap)


@dataclass(frozen=True)
class Sampling:
    """Subgraph sampling: ``depth`` hops, ``num_neighbors`` per node per hop, ``max_num_nodes`` IDs
    (official Cora/CiteSeer run: 2 hops, 20 neighbours, 2 (1 + 20 + 400) = 842 IDs; our default 256)."""

    depth: int = 2
    num_neighbors: int = 20
    max_num_nodes: int = 256

    def __post_init__(self) -> None:
        check_int("depth", self.depth, 1)
        check_int("num_neighbors", self.num_neighbors, 1)
        check_int("max_num_nodes", self.max_num_nodes, 2)

    def subgraphs(self, graph: Graph, pairs: np.ndarray, rng, remove_target: bool) -> list[Subgraph]:
        return sample_subgraphs(graph, pairs, self.depth, self.num_neighbors, rng, remove_target)

    def tensors(self, subgraphs: list[Subgraph], rng=None) -> tuple[torch.Tensor, torch.Tensor]:
        """(tokens, mask) of ``subgraphs``; ``rng`` draws random local IDs (training), None keeps them fixed."""
        tb = tokenize(subgraphs, self.max_num_nodes, rng)
        return torch.from_numpy(tb.tokens), torch.from_numpy(tb.mask)


class Pencil(nn.Module):
    """The PENCIL encoder and pair head. Defaults are the official Cora/CiteSeer config (d=512, 8 layers,
    8 heads, FFN 2048, 256 IDs); the heuristic-regression study uses d=256, 1 layer, 4 heads, FFN 512."""

    def __init__(
        self,
        max_num_nodes: int = 256,
        d_model: int = 512,
        n_layers: int = 8,
        n_heads: int = 8,
        d_ffn: int = 2048,
        mp_residual: bool = True,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.M = check_int("max_num_nodes", max_num_nodes, 2)
        check_int("d_model", d_model, 1)
        check_int("n_layers", n_layers, 1)
        check_int("n_heads", n_heads, 1)
        check_int("d_ffn", d_ffn, 1)
        if d_model % n_heads:
            raise fail("n_heads", n_heads, f"a divisor of d_model={d_model}")
        if not 0.0 <= dropout < 1.0:
            raise fail("dropout", dropout, "a number in [0, 1)")
        P = torch.empty(2 * self.M + 2, d_model)
        nn.init.orthogonal_(P)
        self.register_buffer("P", P)  # fixed random orthogonal input projection (requires_grad=False)
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(  # BERT's LayerNorm eps 1e-12 (official BertLayer)
                d_model, n_heads, d_ffn, dropout, "gelu", LAYER_NORM_EPS, batch_first=True, norm_first=False
            )
            for _ in range(n_layers)
        )
        self.mp = nn.ModuleList(nn.Sequential(nn.Linear(d_model, d_model), nn.GELU()) for _ in range(n_layers))
        self.mp_residual = mp_residual
        if not mp_residual:
            self.mp = None
        self.head = nn.Linear(2 * d_model, 1)
        for linear in [self.head, *([m[0] for m in self.mp] if self.mp is not None else [])]:
            nn.init.normal_(linear.weight, std=INIT_STD)
            nn.init.zeros_(linear.bias)

    def adjacency(self, tokens: torch.Tensor) -> torch.Tensor:
        """A_hat (B, L, L): (onehot + adjacency row) over node positions, zero columns for the task tokens,
        each row divided by its sum (+1e-8).

        The tokens index their columns by node ID; the node tokens' one-hots O (B, N, N: position -> ID)
        map those columns to positions, A = (onehot + adjacency row) O^T, so the message passing does not
        depend on where a node token sits (``tokenize`` puts it at position = ID, where O = I).
        """
        N = tokens.shape[1] - 2
        A = tokens[:, :, :N] + tokens[:, :, self.M : self.M + N]  # (B, L, N) over IDs
        A = torch.bmm(A, tokens[:, :N, :N].transpose(1, 2))  # (B, L, N) over positions
        A = nn.functional.pad(A, (0, 2))  # (B, L, L)
        return A / (A.sum(-1, keepdim=True) + 1e-8)

    def encode(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Hidden states (B, L, d) of tokens (B, L, 2M+2) with ``mask`` (B, L) True on real tokens."""
        if tokens.shape[-1] != 2 * self.M + 2:
            raise fail("tokens", tuple(tokens.shape), f"last dimension 2 * max_num_nodes + 2 = {2 * self.M + 2}")
        H = tokens @ self.P  # H_0 = X P
        A_hat = self.adjacency(tokens) if self.mp is not None else None
        for l, layer in enumerate(self.layers):
            H = layer(H, src_key_padding_mask=~mask)
            if A_hat is not None:
                H = H + self.mp[l](torch.bmm(A_hat, H))  # message-passing residual
        return H

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Link logits (B,): the pair head on the two task tokens (the last two positions)."""
        H = self.encode(tokens, mask)
        return self.head(torch.cat([H[:, -2], H[:, -1]], dim=-1)).squeeze(-1)

    def num_parameters(self) -> int:
        """Trainable parameters (the fixed projection P is a buffer and not counted)."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)


@dataclass(frozen=True)
class Training:
    """Optimisation (AdamW, the official choice); official Cora: lr 1e-4, wd 0.01, 150 epochs, batch 2048."""

    epochs: int = 150
    batch_size: int = 2048
    lr: float = 1e-4
    weight_decay: float = 0.01
    neg_ratio: int = 1
    pairs_per_epoch: int = 0  # 0: every training edge each epoch; else a random subset of that many

    def __post_init__(self) -> None:
        check_int("epochs", self.epochs, 1)
        check_int("batch_size", self.batch_size, 1)
        check_positive("lr", self.lr)
        check_int("neg_ratio", self.neg_ratio, 1)
        check_int("pairs_per_epoch", self.pairs_per_epoch, 0)
        if self.weight_decay < 0:
            raise fail("weight_decay", self.weight_decay, "a number >= 0")


def _fit(model: Pencil, batches, training: Training, loss_fn) -> list[float]:
    """AdamW over the (tokens, mask, target) batches yielded by ``batches(epoch)``; mean loss per epoch."""
    opt = torch.optim.AdamW(model.parameters(), lr=training.lr, weight_decay=training.weight_decay)
    model.train()
    history = []
    for epoch in range(training.epochs):
        losses = []
        for tokens, mask, y in batches(epoch):
            loss = loss_fn(model(tokens, mask), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        history.append(float(np.mean(losses)))
    model.eval()
    return history


def _epoch_batches(
    graph: Graph, pairs: np.ndarray, y: np.ndarray, sampling: Sampling, training: Training, rng, remove_target: bool
):
    """One epoch: sample every pair's subgraph, then yield size-bucketed (tokens, mask, target) batches."""
    subs = sampling.subgraphs(graph, pairs, rng, remove_target)
    for idx in size_buckets(subs, training.batch_size, rng):
        yield (*sampling.tensors([subs[i] for i in idx], rng), torch.as_tensor(y[idx], dtype=torch.float32))


def train_link(model: Pencil, graph: Graph, sampling: Sampling, training: Training, seed: int) -> list[float]:
    """Supervised link prediction (BCE): positives are the edges of ``graph`` (the training graph), each
    removed from its own subgraph; uniform negatives are resampled every epoch at ``neg_ratio``."""
    positives = graph.edges()
    if len(positives) == 0:
        raise fail("graph", graph.num_edges, "a training graph with edges")

    def batches(epoch: int):
        rng = np.random.default_rng(derive(seed, "epoch", epoch))
        pos = positives
        if 0 < training.pairs_per_epoch < len(pos):
            pos = pos[rng.choice(len(pos), training.pairs_per_epoch, replace=False)]
        neg = sample_non_edges(graph, training.neg_ratio * len(pos), rng)
        y = np.concatenate([np.ones(len(pos)), np.zeros(len(neg))])
        yield from _epoch_batches(graph, np.concatenate([pos, neg]), y, sampling, training, rng, remove_target=True)

    return _fit(model, batches, training, nn.BCEWithLogitsLoss())


def train_regression(
    model: Pencil,
    graph: Graph,
    pairs: np.ndarray,
    targets: np.ndarray,
    sampling: Sampling,
    training: Training,
    seed: int,
) -> list[float]:
    """Heuristic regression (MSE) of ``targets`` (P,) on ``pairs`` (P, 2); target edges stay in the subgraphs."""
    targets = np.asarray(targets, dtype=np.float64)
    if len(targets) != len(pairs):
        raise fail("targets", targets, f"one target per pair ({len(pairs)})")

    def batches(epoch: int):
        rng = np.random.default_rng(derive(seed, "epoch", epoch))
        yield from _epoch_batches(graph, pairs, targets, sampling, training, rng, remove_target=False)

    return _fit(model, batches, training, nn.MSELoss())


@torch.no_grad()
def predict(
    model: Pencil,
    graph: Graph,
    pairs: np.ndarray,
    sampling: Sampling,
    seed: int = 0,
    batch_size: int = 512,
) -> np.ndarray:
    """Scores (P,) of ``pairs`` (P, 2) on ``graph`` as is: subgraphs sampled with a seeded generator,
    local IDs in fixed order, size-bucketed batches."""
    rng = np.random.default_rng(derive(seed, "predict"))
    subs = sampling.subgraphs(graph, pairs, rng, remove_target=False)
    model.eval()
    scores = np.empty(len(subs))
    for idx in size_buckets(subs, batch_size, rng):
        scores[idx] = model(*sampling.tensors([subs[i] for i in idx])).numpy()
    return scores
