"""The ReCAP agent: a native screenshot-to-action model with a reflection head, and its training.

``ReCAPAgent`` reads the screenshot (CNN encoder with coordinate channels), the instruction words and the
context (previous action and the status it got). It first predicts a **reflection** (the error category
of the previous action: none, overshoot, undershoot, wrong direction, wrong item, misread, missed target,
wrong action), then the action conditioned on it (teacher-forced in training, its own prediction when
acting), mirroring "reflection, then corrected action" in the paper's self-correction targets:

* action head: click / drag / type;
* coordinate heads: three 16x16 heatmaps (click point, drag start, drag end) from FiLM-modulated
  multi-scale features plus coordinate channels, so a point is a softmax over cells;
* text head: up to 4 digits, each a 10-way choice plus an end token.

``train`` runs supervised fine-tuning (SFT) on a list of samples; "self-corrective training" is the same
objective on a mixture that contains the self-correction samples (``data.mixture``), started from the
weights of the agent it improves, as in the paper.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from icml26_shared import check_int, check_positive, fail
from torch import nn
from torch.nn import functional as F

from .actions import ACTION_KINDS, MAX_TEXT, Action
from .data import CONTEXT_DIM, Sample
from .env import Observation
from .tasks import ERRORS

GRID = 16  # heatmap cells per side (4-px cells on a 64-px screenshot)
END = 10  # text-head token after the last digit
MAX_WORDS = 6
WORDS = (
    "type the characters sum drag piece to gap knob rotate upright click digits in ascending order image of digit "
    "matching slot button number field value"
).split()
VOCAB = ("<pad>", "<unk>", *sorted({*WORDS, *(str(d) for d in range(10))}))  # the instruction words of TASKS
POINT_HEADS = ("click", "start", "end")


def tokens(instruction: tuple[str, ...]) -> list[int]:
    """Word ids of an instruction, padded to MAX_WORDS (unknown words map to <unk>)."""
    if len(instruction) > MAX_WORDS:
        raise fail("instruction", instruction, f"at most {MAX_WORDS} words")
    ids = [VOCAB.index(w) if w in VOCAB else 1 for w in instruction]
    return ids + [0] * (MAX_WORDS - len(ids))


DTYPES = {"float32": torch.float32, "float64": torch.float64}


def check_dtype(dtype: str) -> torch.dtype:
    """The torch dtype named ``dtype`` (``float32`` or ``float64``); else ValueError naming it."""
    if dtype not in DTYPES:
        raise fail("dtype", dtype, f"one of {list(DTYPES)}")
    return DTYPES[dtype]


def init_parameters(module: nn.Module, seed: int) -> nn.Module:
    """Initialise ``module`` in place from numpy's generator ``seed``, with PyTorch's default bounds:
    U(+-1/sqrt(fan_in)) for convolution and linear weights and biases, unit variance U(+-sqrt 3) for embeddings
    (padding row 0).
    Why not torch's own initialisers: its ``uniform_``/``normal_`` kernels and the global generator they read round
    the last bits differently on different CPU capabilities (AVX512 vs default), and training grows those bits;
    numpy's draws, correctly rounded, are the same on every CPU and need no global state."""
    rng = np.random.default_rng(check_int("seed", seed, 0))
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.Conv2d | nn.Linear):
                bound = 1 / math.sqrt(m.weight[0].numel())
                params = [m.weight] + ([] if m.bias is None else [m.bias])
            elif isinstance(m, nn.Embedding | nn.EmbeddingBag):
                bound, params = math.sqrt(3), [m.weight]
            else:
                continue
            for p in params:
                p.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(p.shape))))
            if getattr(m, "padding_idx", None) is not None:
                m.weight[m.padding_idx] = 0
    return module


def grid_axis(n: int) -> torch.Tensor:
    """``n`` points evenly spaced over [-1, 1] (float64), each one correctly rounded division, so the same bits on
    every CPU (``torch.linspace``'s vectorised kernel rounds differently between CPU capabilities)."""
    return (2 * torch.arange(n, dtype=torch.float64) - (n - 1)) / (n - 1)


class ReCAPAgent(nn.Module):
    """Screenshot encoder, instruction and context embeddings, reflection/action/coordinate/text heads.

    ``size``: screenshot side (px, multiple of 32); ``width``: encoder channels; ``hidden``: joint embedding;
    ``dtype``: of the weights and activations (``float64`` keeps CPU runs identical across kernel paths far
    longer than ``float32``; see the README's "Across machines"); ``seed``: of ``init_parameters``.
    """

    def __init__(
        self, size: int = 64, width: int = 32, hidden: int = 128, dtype: str = "float32", seed: int = 0
    ) -> None:
        super().__init__()
        check_int("size", size, 2 * GRID)
        if size % (2 * GRID):
            raise fail("size", size, f"a multiple of {2 * GRID}")
        torch_dtype = check_dtype(dtype)
        self.size = size
        w2 = width // 2
        stride = size // (2 * GRID)  # the first stage brings any size to twice the heatmap grid
        # no bias before a batch norm (it subtracts the bias again): its exact gradient is 0, so Adam would
        # turn the gradient's rounding noise into steps of size lr
        self.stage1 = nn.Conv2d(5, w2, stride + 2, stride, 1, bias=False)  # 32 x 32
        self.stage2 = nn.Conv2d(w2, width, 3, 2, 1, bias=False)  # 16 x 16 = GRID
        self.stage3 = nn.Conv2d(width, width, 3, 2, 1, bias=False)  # 8 x 8
        self.norms = nn.ModuleList(nn.BatchNorm2d(c) for c in (w2, width, width))
        self.glimpse = nn.Linear(width * (GRID // 2) ** 2, hidden)
        self.words = nn.Embedding(len(VOCAB), 16, padding_idx=0)
        self.instruction = nn.Linear(16 * MAX_WORDS, hidden)
        self.context = nn.Linear(CONTEXT_DIM, hidden)
        self.joint = nn.Linear(hidden, hidden)
        self.reflection_head = nn.Linear(hidden, len(ERRORS))
        self.reflection_embedding = nn.Embedding(len(ERRORS), hidden)
        self.kind_head = nn.Linear(hidden, len(ACTION_KINDS))
        self.text_head = nn.Linear(hidden, MAX_TEXT * (END + 1))
        channels = 2 * width + 4
        self.film = nn.Linear(hidden, 2 * channels)
        self.point_prior = nn.Linear(hidden, len(POINT_HEADS) * GRID * GRID)  # where global cues point
        # no bias on the last layer: a constant per heatmap cancels in its softmax (exact gradient 0, as above)
        self.point_mlp = nn.Sequential(
            nn.Conv2d(channels, 32, 1), nn.ReLU(), nn.Conv2d(32, len(POINT_HEADS), 1, bias=False)
        )
        axis = grid_axis(GRID)
        y, x = torch.meshgrid(axis, axis, indexing="ij")
        self.register_buffer("coords", torch.stack([x, y, x * x, y * y])[None], persistent=False)
        full = grid_axis(size)
        fy, fx = torch.meshgrid(full, full, indexing="ij")
        self.register_buffer("coords_in", torch.stack([fx, fy])[None], persistent=False)
        init_parameters(self, seed).to(torch_dtype)

    @property
    def dtype(self) -> torch.dtype:
        return self.coords.dtype

    def encode(self, image: torch.Tensor, words: torch.Tensor, context: torch.Tensor):
        """image (B, 3, H, W) uint8, words (B, MAX_WORDS), context (B, CONTEXT_DIM) ->
        (h (B, hidden), multi-scale maps (B, C, GRID, GRID))."""
        pixels = image.to(self.dtype) / 127.5 - 1
        x = torch.cat([pixels, self.coords_in.expand(len(image), -1, -1, -1)], 1)
        f1 = F.relu(self.norms[0](self.stage1(x)))
        f2 = F.relu(self.norms[1](self.stage2(f1)))
        f3 = F.relu(self.norms[2](self.stage3(f2)))
        g = self.glimpse(f3.flatten(1))
        e = self.instruction(self.words(words).flatten(1))
        h = F.relu(self.joint(F.relu(g + e + self.context(context.to(self.dtype)))))
        maps = torch.cat(
            [f2, F.interpolate(f3, size=GRID, mode="nearest"), self.coords.expand(len(image), -1, -1, -1)], 1
        )
        return h, maps

    def heads(self, h: torch.Tensor, maps: torch.Tensor, reflection: torch.Tensor) -> dict[str, torch.Tensor]:
        """Action, text and point logits given the reflection ids (B,) the action is conditioned on."""
        h2 = h + self.reflection_embedding(reflection)
        gamma, beta = self.film(h2)[:, :, None, None].chunk(2, 1)
        local = self.point_mlp(maps * (1 + gamma) + beta).flatten(2)  # (B, 3, GRID * GRID)
        points = local + self.point_prior(h2).view_as(local)
        return {
            "kind": self.kind_head(h2),
            "text": self.text_head(h2).view(-1, MAX_TEXT, END + 1),
            "points": points,
        }

    def forward(self, image, words, context, reflection=None) -> dict[str, torch.Tensor]:
        """All logits; the action heads use ``reflection`` (teacher forcing) or the predicted one."""
        h, maps = self.encode(image, words, context)
        reflection_logits = self.reflection_head(h)
        if reflection is None:
            reflection = reflection_logits.argmax(-1)
        return {"reflection": reflection_logits, **self.heads(h, maps, reflection)}


def batch(samples: list[Sample], size: int) -> dict[str, torch.Tensor]:
    """Stack samples into input and target tensors (targets of absent parts are -100, ignored by the loss)."""
    if not samples:
        raise fail("samples", samples, "a non-empty list of samples")
    cell = size / GRID
    n = len(samples)
    points = torch.full((n, len(POINT_HEADS)), -100, dtype=torch.long)
    text = torch.full((n, MAX_TEXT), -100, dtype=torch.long)
    for i, s in enumerate(samples):
        a = s.action
        cells = [int(min(max(v // cell, 0), GRID - 1)) for v in (a.x, a.y, a.x2, a.y2)]
        if a.kind == "click":
            points[i, 0] = cells[1] * GRID + cells[0]
        elif a.kind == "drag":
            points[i, 1], points[i, 2] = cells[1] * GRID + cells[0], cells[3] * GRID + cells[2]
        else:
            digits = [int(c) for c in a.text] + ([END] if len(a.text) < MAX_TEXT else [])
            text[i, : len(digits)] = torch.tensor(digits)
    return {
        "image": torch.from_numpy(np.stack([s.image for s in samples])).permute(0, 3, 1, 2).contiguous(),
        "words": torch.tensor([tokens(s.instruction) for s in samples]),
        "context": torch.from_numpy(np.stack([s.context for s in samples])),
        "kind": torch.tensor([ACTION_KINDS.index(s.action.kind) for s in samples]),
        "reflection": torch.tensor([ERRORS.index(s.reflection) for s in samples]),
        "points": points,
        "text": text,
    }


def loss(agent: ReCAPAgent, b: dict[str, torch.Tensor]) -> torch.Tensor:
    """Sum of cross-entropies: reflection + action kind + the points and digits the target action has."""
    out = agent(b["image"], b["words"], b["context"], b["reflection"])
    total = F.cross_entropy(out["reflection"], b["reflection"]) + F.cross_entropy(out["kind"], b["kind"])
    for j in range(len(POINT_HEADS)):
        if (b["points"][:, j] >= 0).any():
            total = total + F.cross_entropy(out["points"][:, j], b["points"][:, j], ignore_index=-100)
    if (b["text"] >= 0).any():
        total = total + F.cross_entropy(out["text"].flatten(0, 1), b["text"].flatten(), ignore_index=-100)
    return total


def train(
    agent: ReCAPAgent,
    samples: list[Sample],
    epochs: int = 4,
    lr: float = 2e-3,
    batch_size: int = 32,
    seed: int = 0,
) -> list[float]:
    """Minimise ``loss`` with Adam over shuffled mini-batches; the per-step losses."""
    check_int("epochs", epochs, 1)
    check_positive("lr", lr)
    check_int("batch_size", batch_size, 1)
    data = batch(samples, agent.size)
    generator = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.Adam(agent.parameters(), lr=lr)
    agent.train()
    losses = []
    for _ in range(epochs):
        order = torch.randperm(len(samples), generator=generator)
        for start in range(0, len(samples), batch_size):
            idx = order[start : start + batch_size]
            value = loss(agent, {k: v[idx] for k, v in data.items()})
            optimiser.zero_grad()
            value.backward()
            optimiser.step()
            losses.append(value.item())
    agent.eval()
    return losses


class AgentPolicy:
    """A ReCAPAgent as a batched policy: greedy reflection, then greedy action."""

    def __init__(self, agent: ReCAPAgent) -> None:
        self.agent = agent

    def act(self, observations: list[Observation], contexts: np.ndarray) -> tuple[list[Action], list[str]]:
        """Actions (screen pixels, at cell centres) and reflections for a batch of observations."""
        if not observations:
            return [], []
        size = self.agent.size
        image = torch.from_numpy(np.stack([o.image for o in observations])).permute(0, 3, 1, 2)
        if tuple(image.shape[1:]) != (3, size, size):
            raise fail("image", tuple(observations[0].image.shape), f"screenshots of shape ({size}, {size}, 3)")
        words = torch.tensor([tokens(o.instruction) for o in observations])
        with torch.no_grad():
            out = self.agent(image, words, torch.from_numpy(np.asarray(contexts, np.float32)))
        cell = size / GRID
        kinds = out["kind"].argmax(-1).tolist()
        cells = out["points"].argmax(-1)
        text_logits = out["text"].clone()
        text_logits[:, 0, END] = -torch.inf  # at least one digit
        digits = text_logits.argmax(-1).tolist()
        actions = []
        for i, k in enumerate(kinds):
            xy = [((int(c) % GRID + 0.5) * cell - 0.5, (int(c) // GRID + 0.5) * cell - 0.5) for c in cells[i]]
            kind = ACTION_KINDS[k]
            if kind == "click":
                actions.append(Action("click", *xy[0]))
            elif kind == "drag":
                actions.append(Action("drag", *xy[1], *xy[2]))
            else:
                d = digits[i][: digits[i].index(END)] if END in digits[i] else digits[i]
                actions.append(Action("type", text="".join(map(str, d))))
        reflections = [ERRORS[r] for r in out["reflection"].argmax(-1).tolist()]
        return actions, reflections
