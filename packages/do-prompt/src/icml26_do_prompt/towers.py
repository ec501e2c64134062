"""The two towers of the miniature CLIP: the real all-MiniLM-L6-v2 text tower and a small CNN image tower.

* ``TextTower``: all-MiniLM-L6-v2 (a 6-layer BERT, width 384) with the sentence-transformers convention,
  mean pooling over tokens then L2 normalisation; frozen. ``encode_prompts`` feeds learned context vectors
  in the token-embedding space, ``[CLS] p_1 .. p_n <class name> . [SEP]``, and optionally replaces the context
  positions of the first layers by deep prompts (MaPLe).
* ``ImageTower``: a small CNN stem (16x16 RGB -> 4x4 tokens of width 64), two pre-norm transformer layers
  with a [CLS] token, and a linear projection into the text space. Visual prompt tokens (MaPLe) are appended
  before the first layer and replaced before the deeper ones. The stem never sees a prompt, so its tokens are
  computed once per image (``ImageTower.tokens``) and prompt learning only runs the two small layers.

Both towers hold float64 by default (issue 27): in float32 the rounding differences between CPU kernel paths
(another CPU vendor, another vector width) grow through the image tower's pretraining until two machines
cache different towers and the claims' verdicts flip; in float64 they stay near rounding level.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from icml26_shared import fail
from torch import nn

TEMPLATE = "a photo of a {}."  # the hand prompt of zero-shot CLIP
CTX_INIT = "a photo of a"  # CoOp / MaPLe context initialisation


def check_prompts(prompts: torch.Tensor, width: int, max_depth: int) -> torch.Tensor:
    """Prompts as (S, J, n_ctx, width): S prompt sets, J depths, n_ctx context tokens."""
    if prompts.ndim == 3:
        prompts = prompts[None]
    if prompts.ndim != 4 or prompts.shape[-1] != width or prompts.shape[2] < 1:
        raise fail("prompts", tuple(prompts.shape), f"a tensor (J, n_ctx, {width}) or (S, J, n_ctx, {width})")
    if not 1 <= prompts.shape[1] <= max_depth:
        raise fail("prompt depth", prompts.shape[1], f"an integer in [1, {max_depth}] (the tower's layers)")
    if not torch.isfinite(prompts).all():
        raise fail("prompts", tuple(prompts.shape), "finite values (found NaN or inf)")
    return prompts


def check_class_names(class_names) -> tuple[str, ...]:
    """A non-empty sequence of distinct, non-empty class names."""
    names = tuple(class_names) if not isinstance(class_names, str) else ()
    if not names or not all(isinstance(n, str) and n.strip() for n in names):
        raise fail("class_names", class_names, "a non-empty list of non-empty strings")
    if len(set(names)) != len(names):
        raise fail("class_names", class_names, "distinct class names")
    return names


class TextTower(nn.Module):
    """The frozen all-MiniLM-L6-v2 sentence encoder, read from ``icml26_shared.minilm_weights_path()``."""

    def __init__(self, folder: str | Path | None = None, dtype: torch.dtype = torch.float64):
        super().__init__()
        from safetensors.torch import load_file
        from tokenizers import Tokenizer
        from transformers import BertConfig, BertModel

        if folder is None:
            from icml26_shared.datasets import minilm_weights_path

            folder = minilm_weights_path().parent
        folder = Path(folder)
        config = BertConfig.from_json_file(str(folder / "config.json"))
        config.hidden_dropout_prob = config.attention_probs_dropout_prob = 0.0  # frozen: deterministic always
        self.bert = BertModel(config, add_pooling_layer=False)
        weights = load_file(str(folder / "model.safetensors"))
        own = self.bert.state_dict()
        self.bert.load_state_dict({k: weights[k] for k in own if k in weights}, strict=False)
        missing = [k for k in own if k not in weights and not k.endswith("position_ids")]
        if missing:
            raise fail("folder", str(folder), f"all-MiniLM-L6-v2 weights (missing {missing[:3]})")
        self.bert.to(dtype).eval().requires_grad_(False)
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self.width = config.hidden_size
        self.layers = config.num_hidden_layers
        self.max_length = config.max_position_embeddings
        self.cls_id, self.sep_id = self.tokenizer.token_to_id("[CLS]"), self.tokenizer.token_to_id("[SEP]")

    @property
    def dtype(self) -> torch.dtype:
        """The tower's floating-point type (prompts are cast to it)."""
        return self.bert.embeddings.word_embeddings.weight.dtype

    def token_ids(self, text: str) -> list[int]:
        """WordPiece ids of ``text`` without special tokens."""
        return self.tokenizer.encode(text, add_special_tokens=False).ids

    def word_embeddings(self, text: str) -> torch.Tensor:
        """The token embeddings (n_tokens, width) of ``text``: where CoOp's context vectors live."""
        return self.bert.embeddings.word_embeddings.weight[self.token_ids(text)].detach().clone()

    def _check_length(self, n_tokens: int, what: str) -> None:
        if n_tokens > self.max_length:
            raise fail(what, n_tokens, f"a prompt of at most {self.max_length} tokens (the text tower's limit)")

    def encode(self, sentences: list[str]) -> torch.Tensor:
        """Sentence embeddings (n, width): mean pooling over non-pad tokens, then L2 normalisation."""
        if isinstance(sentences, str) or not sentences or not all(isinstance(s, str) for s in sentences):
            raise fail("sentences", sentences, "a non-empty list of strings")
        encoded = [self.tokenizer.encode(s).ids for s in sentences]
        for ids in encoded:
            self._check_length(len(ids), "sentences")
        length = max(map(len, encoded))
        ids = torch.tensor([e + [0] * (length - len(e)) for e in encoded])
        mask = (torch.arange(length)[None] < torch.tensor([len(e) for e in encoded])[:, None]).to(self.dtype)
        with torch.no_grad():
            hidden = self.bert(input_ids=ids, attention_mask=mask.long()).last_hidden_state
        pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
        return F.normalize(pooled, dim=-1)

    def encode_prompts(self, prompts: torch.Tensor, class_names) -> torch.Tensor:
        """Text features (S, C, width) of ``[CLS] prompts[s, 0] <name_c> . [SEP]`` for every prompt set s.

        ``prompts`` (S, J, n_ctx, width) or (J, n_ctx, width): depth 0 is in the token-embedding space (CoOp);
        depths 1..J-1 replace the context positions of the hidden states entering layers 1..J-1 (MaPLe's deep
        text prompts); they are cast to the tower's dtype. Gradients flow through the frozen tower into them.
        """
        names = check_class_names(class_names)
        prompts = check_prompts(prompts, self.width, self.layers).to(self.dtype)
        S, J, n_ctx, _ = prompts.shape
        suffix = [self.token_ids(n) + self.token_ids(".") + [self.sep_id] for n in names]
        for s in suffix:
            self._check_length(2 + n_ctx + len(s) - 1, "prompt length")
        table = self.bert.embeddings.word_embeddings.weight
        out = torch.empty(S, len(names), self.width, dtype=self.dtype)
        for length in sorted({len(s) for s in suffix}):  # equal lengths: no padding, exact mean pooling
            rows = [c for c, s in enumerate(suffix) if len(s) == length]
            tail = table[torch.tensor([suffix[c] for c in rows])]  # (G, L, width)
            G = len(rows)
            head = table[self.cls_id].expand(S, G, 1, self.width)
            x = torch.cat([head, prompts[:, 0, None].expand(S, G, n_ctx, self.width), tail.expand(S, -1, -1, -1)], 2)
            h = self.bert.embeddings(inputs_embeds=x.flatten(0, 1))
            for i, layer in enumerate(self.bert.encoder.layer):
                if 0 < i < J:  # MaPLe: deep prompts replace the context tokens entering layer i
                    deep = prompts[:, i, None].expand(S, G, n_ctx, self.width).flatten(0, 1)
                    h = torch.cat([h[:, :1], deep, h[:, 1 + n_ctx :]], 1)
                h = layer(h)
                h = h[0] if isinstance(h, tuple) else h  # transformers 4 returns a tuple
            out[:, rows] = F.normalize(h.mean(1), dim=-1).view(S, G, self.width)
        return out


class ImageTower(nn.Module):
    """Small CNN stem + transformer layers + projection; ``logit_scale`` is CLIP's learnable temperature.

    Parameters are drawn in ``dtype``: a float32 ``torch.randn`` of 16 or more values takes a vectorised path
    whose last bits depend on the CPU kernels, a float64 one does not."""

    def __init__(
        self,
        embed_dim: int = 384,
        width: int = 64,
        layers: int = 2,
        heads: int = 4,
        size: int = 16,
        dtype: torch.dtype = torch.float64,
    ):
        super().__init__()
        self.size, self.width, self.layers = size, width, layers
        self.stem = nn.Sequential(
            nn.Conv2d(3, 32, 4, stride=2, padding=1, dtype=dtype),
            nn.GELU(),
            nn.Conv2d(32, width, 3, stride=2, padding=1, dtype=dtype),
        )
        n_tokens = (size // 4) ** 2
        self.cls = nn.Parameter(torch.zeros(1, 1, width, dtype=dtype))
        self.pos = nn.Parameter(0.02 * torch.randn(1, 1 + n_tokens, width, dtype=dtype))
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(
                width, heads, 4 * width, dropout=0.0, batch_first=True, norm_first=True, dtype=dtype
            )
            for _ in range(layers)
        )
        self.norm = nn.LayerNorm(width, dtype=dtype)
        self.proj = nn.Linear(width, embed_dim, bias=False, dtype=dtype)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07), dtype=dtype))  # CLIP's initial value

    @property
    def dtype(self) -> torch.dtype:
        return self.cls.dtype

    def check_images(self, images) -> torch.Tensor:
        """Images (B, 3, size, size) with values in [0, 1], cast to the tower's dtype."""
        x = torch.as_tensor(np.asarray(images) if not isinstance(images, torch.Tensor) else images).to(self.dtype)
        if x.ndim != 4 or tuple(x.shape[1:]) != (3, self.size, self.size):
            raise fail("images", tuple(x.shape), f"a batch of shape (B, 3, {self.size}, {self.size})")
        if not torch.isfinite(x).all() or x.min() < 0 or x.max() > 1:
            raise fail("images", tuple(x.shape), "finite values in [0, 1]")
        return x

    def tokens(self, images) -> torch.Tensor:
        """Stem tokens (B, (size/4)^2, width): what no prompt changes, computed once per image."""
        return self.stem(self.check_images(images)).flatten(2).transpose(1, 2)

    def encode_tokens(self, tokens: torch.Tensor, visual_prompts: torch.Tensor | None = None) -> torch.Tensor:
        """L2-normalised image features (B, embed_dim); ``visual_prompts`` (J, n_ctx, width) enter layers < J."""
        B = tokens.shape[0]
        x = torch.cat([self.cls.expand(B, -1, -1), tokens], 1) + self.pos
        if visual_prompts is not None:
            visual_prompts = check_prompts(visual_prompts, self.width, self.layers)[0].to(self.dtype)
        for i, block in enumerate(self.blocks):
            if visual_prompts is not None and i < len(visual_prompts):
                v = visual_prompts[i].expand(B, -1, -1)
                x = torch.cat([x if i == 0 else x[:, : -v.shape[1]], v], 1)  # append, then replace (MaPLe)
            x = block(x)
        return F.normalize(self.proj(self.norm(x[:, 0])), dim=-1)

    def forward(self, images, visual_prompts: torch.Tensor | None = None) -> torch.Tensor:
        return self.encode_tokens(self.tokens(images), visual_prompts)


def contrastive_loss(image_features: torch.Tensor, text_features: torch.Tensor, y: torch.Tensor, logit_scale):
    """CLIP's image-to-text InfoNCE against the class prompts: CE of ``exp(s) <f(x), t_c>`` with label y."""
    return F.cross_entropy(logit_scale.exp() * image_features @ text_features.T, y)


def pretrain_image_tower(
    foregrounds: np.ndarray,
    y: np.ndarray,
    caption_features: torch.Tensor,
    epochs: int,
    seed: int,
    batch: int = 64,
    lr: float = 3e-3,
) -> dict[str, torch.Tensor]:
    """Align a fresh ImageTower with frozen caption features on environment-balanced data (CLIP-style).

    ``caption_features`` (C * E, width) embed "a photo of a <class c> on a <environment e> background." at row
    ``c * E + e``. Every epoch re-draws each image's background uniformly over the E textures, so class and
    background are independent during pretraining: the features know both (as CLIP's know objects and their
    backgrounds), and zero-shot classification with the class-only hand prompt works before prompt learning.
    The tower takes the dtype of ``caption_features`` and trains on one torch thread whatever the caller's
    count (a thread count splits reductions differently, and the result is cached and shared by every seed).
    Returns the state dict (cache it with ``icml26_shared.cached``).
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _pretrain(foregrounds, y, caption_features, epochs, seed, batch, lr)
    finally:
        torch.set_num_threads(threads)


def _pretrain(foregrounds, y, caption_features, epochs, seed, batch, lr) -> dict[str, torch.Tensor]:
    from .data import N_ENVIRONMENTS, render

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    tower = ImageTower(embed_dim=caption_features.shape[1], dtype=caption_features.dtype)
    optimiser = torch.optim.AdamW(tower.parameters(), lr=lr, weight_decay=0.01)
    steps = epochs * math.ceil(len(y) / batch)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=lr, total_steps=steps, pct_start=0.1)
    labels = torch.as_tensor(y)
    for _ in range(epochs):
        env = rng.integers(0, N_ENVIRONMENTS, len(y))
        images, targets = torch.from_numpy(render(foregrounds, env)), labels * N_ENVIRONMENTS + torch.as_tensor(env)
        for idx in torch.from_numpy(rng.permutation(len(y))).split(batch):
            loss = contrastive_loss(tower(images[idx]), caption_features, targets[idx], tower.logit_scale)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            with torch.no_grad():
                tower.logit_scale.clamp_(0, math.log(100))  # CLIP clips the scale at 100
    return {k: v.detach().clone() for k, v in tower.state_dict().items()}


class FrozenCLIP(nn.Module):
    """The two frozen towers and the learned temperature: ``logits = exp(s) <f(x), t_c>``."""

    def __init__(self, text: TextTower, image: ImageTower):
        super().__init__()
        if image.dtype != text.dtype:
            raise fail("image", f"an ImageTower in {image.dtype}", f"the text tower's dtype {text.dtype}")
        self.text, self.image = text, image
        self.requires_grad_(False)
        self.eval()

    def logits(self, image_features: torch.Tensor, text_features: torch.Tensor) -> torch.Tensor:
        return self.image.logit_scale.exp() * image_features @ text_features.transpose(-1, -2)

    def hand_prompt_features(self, class_names, template: str = TEMPLATE) -> torch.Tensor:
        """Text features (C, width) of the zero-shot hand prompt."""
        if not isinstance(template, str) or "{}" not in template:
            raise fail("template", template, "a string with a '{}' for the class name")
        return self.text.encode([template.format(n) for n in check_class_names(class_names)])
