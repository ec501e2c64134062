"""The networks engrams are read from: an MLP classifier and a tiny causal transformer language model.

Both consist of ``nn.Linear`` layers with biases (plus LayerNorm and embeddings in the LM), so every weight
matrix that carries the computation has an engram. Training and evaluation helpers live here too.
"""

from __future__ import annotations

import itertools

import numpy as np
import torch
import torch.nn.functional as F
from icml26_shared import check_int, check_positive, fail
from torch import nn


class MLP(nn.Module):
    """``in_dim -> hidden... -> out_dim`` with ReLU and biases (the paper's MLP-MNIST shape)."""

    def __init__(self, in_dim: int, hidden: tuple[int, ...] = (128, 128), out_dim: int = 10):
        super().__init__()
        self.in_dim = check_int("in_dim", in_dim, 1)
        dims = [in_dim, *(check_int("hidden", h, 1) for h in hidden), check_int("out_dim", out_dim, 1)]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(dims))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(n, in_dim) -> logits (n, out_dim)."""
        if x.ndim != 2 or x.shape[1] != self.in_dim:
            raise fail("x", tuple(x.shape), f"a batch (n, {self.in_dim}) matching the model's input size")
        for layer in self.layers[:-1]:
            x = F.relu(layer(x))
        return self.layers[-1](x)


class Block(nn.Module):
    """Pre-LayerNorm transformer block: causal multi-head attention (q, k, v, o) and a GELU MLP (up, down)."""

    def __init__(self, dim: int, heads: int, mlp_ratio: int):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.q, self.k, self.v, self.o = (nn.Linear(dim, dim) for _ in range(4))
        self.up, self.down = nn.Linear(dim, mlp_ratio * dim), nn.Linear(mlp_ratio * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        h = self.ln1(x)

        def split(z):  # (b, t, d) -> (b, heads, t, d / heads)
            return z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)

        att = F.scaled_dot_product_attention(split(self.q(h)), split(self.k(h)), split(self.v(h)), is_causal=True)
        x = x + self.o(att.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


class TinyLM(nn.Module):
    """A small causal transformer LM over token ids (n, T) -> next-token logits (n, T, vocab)."""

    def __init__(self, vocab_size: int, context: int, dim: int = 64, heads: int = 4, layers: int = 2, mlp_ratio=4):
        super().__init__()
        self.vocab_size = check_int("vocab_size", vocab_size, 2)
        self.context = check_int("context", context, 1)
        check_int("layers", layers, 1)
        if check_int("heads", heads, 1) and dim % heads:
            raise fail("dim", dim, f"a multiple of heads={heads}")
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Parameter(torch.zeros(context, dim))
        self.blocks = nn.ModuleList(Block(dim, heads, check_int("mlp_ratio", mlp_ratio, 1)) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab_size)
        nn.init.normal_(self.position, std=0.02)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        if ids.ndim != 2 or ids.dtype != torch.long or not 1 <= ids.shape[1] <= self.context:
            raise fail("ids", tuple(ids.shape), f"int64 token ids (n, T) with 1 <= T <= {self.context}")
        if int(ids.min()) < 0 or int(ids.max()) >= self.vocab_size:
            raise fail("ids", (int(ids.min()), int(ids.max())), f"token ids in [0, {self.vocab_size})")
        x = self.embed(ids) + self.position[: ids.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def train_classifier(
    model: nn.Module, X: torch.Tensor, y: torch.Tensor, epochs: int, seed: int, lr: float = 1e-3, batch_size=64
) -> nn.Module:
    """Adam on cross-entropy, shuffled mini-batches from a seeded generator; trains in place."""
    check_int("epochs", epochs, 1)
    check_positive("lr", lr)
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for _ in range(epochs):
        for idx in torch.randperm(len(y), generator=generator).split(batch_size):
            optimizer.zero_grad()
            F.cross_entropy(model(X[idx]), y[idx]).backward()
            optimizer.step()
    return model.eval()


@torch.no_grad()
def class_accuracy(model: nn.Module, X: torch.Tensor, y: torch.Tensor, classes: int) -> np.ndarray:
    """Accuracy on each class (classes,); NaN for a class without samples."""
    hits = (model.eval()(X).argmax(1) == y).double()
    return np.array([float(hits[y == c].mean()) if (y == c).any() else float("nan") for c in range(classes)])


def train_lm(model: TinyLM, ids: torch.Tensor, steps: int, seed: int, lr: float = 3e-3) -> TinyLM:
    """Full-batch Adam on next-token cross-entropy over every position (the facts are memorised)."""
    check_int("steps", steps, 1)
    check_positive("lr", lr)
    torch.manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for _ in range(steps):
        optimizer.zero_grad()
        logits = model(ids[:, :-1])
        F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1)).backward()
        optimizer.step()
    return model.eval()


@torch.no_grad()
def answer_scores(model: TinyLM, ids: torch.Tensor, answer_position: int) -> tuple[np.ndarray, np.ndarray]:
    """Per sentence: top-1 hit (0/1) and NLL of the answer token at ``answer_position`` given its prefix."""
    check_int("answer_position", answer_position, 1, ids.shape[1] - 1)
    logits = model.eval()(ids[:, :answer_position])[:, -1]
    target = ids[:, answer_position]
    nll = F.cross_entropy(logits, target, reduction="none")
    return (logits.argmax(1) == target).double().numpy(), nll.numpy()
