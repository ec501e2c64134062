"""A tiny vision-language model in the LLaVA shape: vision encoder -> projector -> causal language model.

Axis letters: b batch, c channels, h/w patch grid, p1/p2 pixels in a patch, n visual tokens, t text tokens,
d model width, v vocabulary.

The language model reads ``[visual tokens, question, <bos>, answer]`` with causal attention and predicts the
next text token (LLaVA: the projected visual tokens are the first input tokens of the LLM). A learned
``[MASK]`` embedding can replace visual input tokens: ATR's visual token mask (``method.visual_token_mask``).
"""

from __future__ import annotations

import torch
from einops import rearrange
from icml26_shared import check_int, fail
from torch import nn


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


def _blocks(d_model: int, heads: int, layers: int, dtype: torch.dtype) -> nn.TransformerEncoder:
    layer = nn.TransformerEncoderLayer(
        d_model, heads, 2 * d_model, dropout=0.0, activation="gelu", batch_first=True, norm_first=True, dtype=dtype
    )
    return nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)


class TinyVLM(nn.Module):
    """Patch tokens + question tokens -> answer tokens.

    Args:
        vocab_size: words of the text vocabulary.
        image_size, patch_size, channels: square images cut into ``(image_size / patch_size)^2`` visual tokens.
        d_model, heads: width and attention heads of both towers.
        vision_layers: bidirectional encoder blocks over the patches (the "ViT").
        lm_layers: causal decoder blocks over visual and text tokens (the "LLM").
        max_text: longest text input (question, ``<bos>`` and answer).
        dtype: of the parameters, drawn in it: float32 draws of 16 or more normal values differ in their last
            bits between torch's CPU kernel paths (AVX2/AVX512 vs default), float64 draws do not.
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
        if dtype not in (torch.float32, torch.float64):
            raise fail("dtype", dtype, "torch.float32 or torch.float64")
        f = {"dtype": dtype}
        self.image_size, self.patch_size, self.channels = image_size, patch_size, channels
        self.num_visual = (image_size // patch_size) ** 2
        self.max_text = max_text
        self.patch_embed = nn.Linear(channels * patch_size**2, d_model, **f)
        self.vision_pos = nn.Parameter(torch.randn(self.num_visual, d_model, **f))  # N(0, 1), as nn.Embedding
        self.vision = _blocks(d_model, heads, vision_layers, dtype)
        self.projector = nn.Sequential(nn.LayerNorm(d_model, **f), nn.Linear(d_model, d_model, **f))
        self.mask_embedding = nn.Parameter(torch.zeros(d_model, **f))  # [MASK] for masked visual tokens
        self.token_embed = nn.Embedding(vocab_size, d_model, **f)
        self.lm_pos = nn.Parameter(torch.randn(self.num_visual + max_text, d_model, **f))
        self.lm = _blocks(d_model, heads, lm_layers, dtype)
        self.norm = nn.LayerNorm(d_model, **f)
        self.head = nn.Linear(d_model, vocab_size, **f)

    def encode_images(self, images: torch.Tensor) -> torch.Tensor:
        """(b, c, H, W) in [0, 1] -> vision-encoder features (b, n, d) (frozen during fine-tuning, as in LLaVA)."""
        check_images(images, self.channels, self.image_size)
        p = self.patch_size
        patches = rearrange(images, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=p, p2=p)
        patches = patches.to(self.patch_embed.weight.dtype)  # float32 pixels into a float64 model
        return self.vision(self.patch_embed(patches) + self.vision_pos)

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
        x = self.lm(x, mask=causal, is_causal=True)
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
        h = self.head(self.norm(self.lm(x + self.lm_pos[position], mask=mask)))
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
