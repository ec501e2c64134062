"""A tiny vision-language model in the LLaVA shape: vision encoder -> projector -> causal language model.

Axis letters: b batch, c channels, h/w patch grid, p1/p2 pixels in a patch, n visual tokens, t text tokens,
d model width, v vocabulary.

The language model reads ``[visual tokens, question, <bos>, answer]`` with causal attention and predicts the
next text token (LLaVA: the projected visual tokens are the first input tokens of the LLM). A learned
``[MASK]`` embedding can replace visual input tokens: ATR's visual token mask (``method.visual_token_mask``).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from einops import rearrange
from icml26_shared import check_int, fail
from torch import nn

from .portable import LayerNorm, gelu, softmax


def check_images(images: torch.Tensor, channels: int, image_size: int) -> None:
    """Images must be ``(B, channels, image_size, image_size)``, finite, in [0, 1]."""
    if not isinstance(images, torch.Tensor) or tuple(images.shape[1:]) != (channels, image_size, image_size):
        shape = tuple(images.shape) if isinstance(images, torch.Tensor) else type(images).__name__
        raise fail("images", shape, f"a tensor (B, {channels}, {image_size}, {image_size})")
    if images.shape[0] == 0:
        raise fail("images", tuple(images.shape), "a non-empty batch")
    if not torch.isfinite(images).all() or images.min() < 0 or images.max() > 1:
        lo, hi = images.min().item(), images.max().item()
        raise fail("images", f"values in [{lo:.3g}, {hi:.3g}]", "finite pixel values in [0, 1]")


class Block(nn.Module):
    """A pre-norm transformer layer, as ``nn.TransformerEncoderLayer(norm_first=True, activation="gelu",
    dim_feedforward=2 d, dropout=0)``, in portable ops (``portable``: the same bits on every CPU kernel path).

    The key projection has no bias: it adds q . b_k to every score of a query, which softmax ignores, so its
    exact gradient is 0 and the one computed is rounding noise that AdamW turns into steps (the same function).
    """

    def __init__(self, d_model: int, heads: int, dtype: torch.dtype) -> None:
        super().__init__()
        f = {"dtype": dtype}
        self.heads = heads
        self.norm1, self.norm2 = LayerNorm(d_model, **f), LayerNorm(d_model, **f)
        self.query, self.value = nn.Linear(d_model, d_model, **f), nn.Linear(d_model, d_model, **f)
        self.key = nn.Linear(d_model, d_model, bias=False, **f)
        self.out = nn.Linear(d_model, d_model, **f)
        self.linear1, self.linear2 = nn.Linear(d_model, 2 * d_model, **f), nn.Linear(2 * d_model, d_model, **f)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """x (b, t, d); ``mask`` (t, t) added to the attention scores (-inf: not attended)."""
        h = self.norm1(x)
        q, k, v = (rearrange(f(h), "b t (a e) -> b a t e", a=self.heads) for f in (self.query, self.key, self.value))
        scores = q @ k.transpose(-1, -2) * (1.0 / math.sqrt(q.shape[-1]))
        attention = softmax(scores if mask is None else scores + mask)
        x = x + self.out(rearrange(attention @ v, "b a t e -> b t (a e)"))
        return x + self.linear2(gelu(self.linear1(self.norm2(x))))

    @torch.no_grad()
    def draw(self, rng: np.random.Generator) -> None:
        """torch's initialisation of the layer, drawn by numpy: q, k, v weights as ``nn.MultiheadAttention``'s
        packed projection (Xavier uniform over (3 d, d)), zero attention biases, the others as ``nn.Linear``."""
        d = self.query.in_features
        for linear in (self.query, self.key, self.value):
            _uniform(rng, linear.weight, math.sqrt(6.0 / (d + 3 * d)))
        for linear in (self.query, self.value, self.out):
            linear.bias.zero_()
        _uniform(rng, self.out.weight, 1.0 / math.sqrt(d))
        for linear in (self.linear1, self.linear2):
            _draw_linear(rng, linear)


def _uniform(rng: np.random.Generator, tensor: torch.Tensor, bound: float) -> None:
    """Fill ``tensor`` with U(-bound, bound) draws of numpy's generator (the same bits on every CPU)."""
    tensor.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(tensor.shape))))


def _normal(rng: np.random.Generator, tensor: torch.Tensor) -> None:
    """Fill ``tensor`` with N(0, 1) draws of numpy's generator."""
    tensor.copy_(torch.from_numpy(rng.standard_normal(tuple(tensor.shape))))


def _draw_linear(rng: np.random.Generator, linear: nn.Linear) -> None:
    """``nn.Linear``'s initialisation: weight and bias U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    bound = 1.0 / math.sqrt(linear.in_features)
    _uniform(rng, linear.weight, bound)
    if linear.bias is not None:
        _uniform(rng, linear.bias, bound)


class TinyVLM(nn.Module):
    """Patch tokens + question tokens -> answer tokens.

    Args:
        vocab_size: words of the text vocabulary.
        image_size, patch_size, channels: square images cut into ``(image_size / patch_size)^2`` visual tokens.
        d_model, heads: width and attention heads of both towers.
        vision_layers: bidirectional encoder blocks over the patches (the "ViT").
        lm_layers: causal decoder blocks over visual and text tokens (the "LLM").
        max_text: longest text input (question, ``<bos>`` and answer).
        dtype: of the parameters.
        seed: of numpy's generator that draws the parameters (torch's initialisation; numpy's draws are the same
            bits on every CPU, torch's vectorised ones are not).
    """

    def __init__(
        self,
        vocab_size: int,
        image_size: int = 28,
        patch_size: int = 7,
        channels: int = 1,
        d_model: int = 64,
        heads: int = 4,
        vision_layers: int = 1,
        lm_layers: int = 2,
        max_text: int = 16,
        dtype: torch.dtype = torch.float32,
        seed: int = 0,
    ) -> None:
        super().__init__()
        check_int("vocab_size", vocab_size, 4)
        check_int("patch_size", patch_size, 1)
        if check_int("image_size", image_size, 1) % patch_size:
            raise fail("image_size", image_size, f"a multiple of patch_size={patch_size}")
        check_int("channels", channels, 1)
        check_int("heads", heads, 1)
        if check_int("d_model", d_model, 1) % heads:
            raise fail("d_model", d_model, f"a multiple of heads={heads}")
        check_int("vision_layers", vision_layers, 1)
        check_int("lm_layers", lm_layers, 1)
        check_int("max_text", max_text, 1)
        check_int("seed", seed, 0)
        if dtype not in (torch.float32, torch.float64):
            raise fail("dtype", dtype, "torch.float32 or torch.float64")
        f = {"dtype": dtype}
        self.image_size, self.patch_size, self.channels = image_size, patch_size, channels
        self.num_visual = (image_size // patch_size) ** 2
        self.max_text = max_text
        self.patch_embed = nn.Linear(channels * patch_size**2, d_model, **f)
        self.vision_pos = nn.Parameter(torch.empty(self.num_visual, d_model, **f))  # N(0, 1), as nn.Embedding
        self.vision = nn.ModuleList(Block(d_model, heads, dtype) for _ in range(vision_layers))
        self.projector = nn.Sequential(LayerNorm(d_model, **f), nn.Linear(d_model, d_model, **f))
        self.mask_embedding = nn.Parameter(torch.zeros(d_model, **f))  # [MASK] for masked visual tokens
        self.token_embed = nn.Embedding(vocab_size, d_model, **f)
        self.lm_pos = nn.Parameter(torch.empty(self.num_visual + max_text, d_model, **f))
        self.lm = nn.ModuleList(Block(d_model, heads, dtype) for _ in range(lm_layers))
        self.norm = LayerNorm(d_model, **f)
        self.head = nn.Linear(d_model, vocab_size, **f)
        self.draw(np.random.default_rng(seed))

    @torch.no_grad()
    def draw(self, rng: np.random.Generator) -> None:
        """torch's initialisation of every parameter, drawn by numpy: embeddings and positions N(0, 1) (as
        ``nn.Embedding``), linear layers as ``nn.Linear``, attention as ``nn.MultiheadAttention``, layer norms
        1 and 0, the [MASK] embedding 0."""
        for table in (self.patch_embed, self.projector[1], self.head):
            _draw_linear(rng, table)
        for table in (self.vision_pos, self.token_embed.weight, self.lm_pos):
            _normal(rng, table)
        for block in (*self.vision, *self.lm):
            block.draw(rng)

    def _run(self, blocks: nn.ModuleList, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        for block in blocks:
            x = block(x, mask)
        return x

    def encode_images(self, images: torch.Tensor) -> torch.Tensor:
        """(b, c, H, W) in [0, 1] -> vision-encoder features (b, n, d) (frozen during fine-tuning, as in LLaVA)."""
        check_images(images, self.channels, self.image_size)
        p = self.patch_size
        patches = rearrange(images, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=p, p2=p)
        patches = patches.to(self.patch_embed.weight.dtype)  # float32 pixels into a float64 model
        return self._run(self.vision, self.patch_embed(patches) + self.vision_pos)

    def visual_tokens(self, images: torch.Tensor) -> torch.Tensor:
        """(b, c, H, W) in [0, 1] -> projected visual tokens (b, n, d), the LLM's visual input."""
        return self.projector(self.encode_images(images))

    def language_model(self, visual: torch.Tensor, text: torch.Tensor, visual_mask: torch.Tensor | None = None):
        """Next-token logits (b, t, v) at the text positions, from visual tokens (b, n, d) and text ids (b, t).

        ``visual_mask`` (b, n), True where a visual token is replaced by the [MASK] embedding.
        """
        if text.ndim != 2 or text.shape[0] != visual.shape[0] or not 1 <= text.shape[1] <= self.max_text:
            raise fail("text", tuple(text.shape), f"token ids (B={visual.shape[0]}, T) with 1 <= T <= {self.max_text}")
        if visual_mask is not None:
            if visual_mask.shape != visual.shape[:2] or visual_mask.dtype != torch.bool:
                raise fail("visual_mask", tuple(visual_mask.shape), f"a bool tensor {tuple(visual.shape[:2])}")
            visual = torch.where(visual_mask[..., None], self.mask_embedding.to(visual.dtype), visual)
        x = torch.cat([visual, self.token_embed(text)], dim=1)
        x = x + self.lm_pos[: x.shape[1]]
        causal = nn.Transformer.generate_square_subsequent_mask(x.shape[1], device=x.device, dtype=x.dtype)
        x = self._run(self.lm, x, causal)
        return self.head(self.norm(x[:, visual.shape[1] :]))

    def candidate_logits(self, visual: torch.Tensor, prefix: torch.Tensor, candidates: torch.Tensor) -> torch.Tensor:
        """Logits (b, C, 1 + A, v) of every candidate continuation after one shared text prefix: at the prefix's
        last position (shared) and at each of the candidate's A tokens, as ``language_model`` gives them for
        ``[visual, prefix, candidate]``.

        One packed sequence ``[visual, prefix, candidate_1, ..., candidate_C]`` per sample: each candidate
        block attends to the prefix and causally to itself, at the positions it would have after the prefix,
        so the shared prefix is computed once, not C times (visual (b, n, d), prefix (b, P), candidates (C, A)).
        """
        (b, n, _), (C, A) = visual.shape, candidates.shape
        if prefix.ndim != 2 or prefix.shape[0] != b or prefix.shape[1] + A > self.max_text:
            raise fail("prefix", tuple(prefix.shape), f"token ids (B={b}, P) with P + {A} <= {self.max_text}")
        L = n + prefix.shape[1]
        blocks = self.token_embed(candidates).flatten(0, 1).expand(b, -1, -1)
        x = torch.cat([visual, self.token_embed(prefix), blocks], dim=1)
        position = torch.cat([torch.arange(L), L + torch.arange(A).repeat(C)]).to(x.device)
        allowed = torch.ones(L + C * A, L + C * A, dtype=torch.bool, device=x.device).tril()
        allowed[L:, L:] = torch.block_diag(*[allowed[:A, :A]] * C)  # a candidate never sees another one
        mask = torch.zeros(allowed.shape, dtype=x.dtype, device=x.device).masked_fill(~allowed, float("-inf"))
        h = self.head(self.norm(self._run(self.lm, x + self.lm_pos[position], mask)))
        last = h[:, L - 1, None, None].expand(b, C, 1, h.shape[-1])
        return torch.cat([last, h[:, L:].view(b, C, A, -1)], dim=2)

    @torch.no_grad()
    def init_new_tokens(self, new_ids: list[int], source_ids: list[int]) -> None:
        """Set the input embeddings and output rows of words that pre-training never used to the mean of the
        rows of ``source_ids`` (the answer words it used): a new answer word starts as an average known answer
        word (mean initialisation of new tokens, Hewitt 2021), not with the far-down logit that pre-training
        gave every word it never had to predict."""
        if not new_ids or not source_ids or set(new_ids) & set(source_ids):
            raise fail("new_ids", new_ids, f"a non-empty list of ids disjoint from source_ids={source_ids}")
        for table in (self.token_embed.weight, self.head.weight, self.head.bias):
            table[new_ids] = table[source_ids].mean(0)

    def forward(self, images: torch.Tensor, text: torch.Tensor, visual_mask: torch.Tensor | None = None):
        """Logits (b, t, v): position i predicts text token i + 1 (the answer after ``<bos>``)."""
        return self.language_model(self.visual_tokens(images), text, visual_mask)
