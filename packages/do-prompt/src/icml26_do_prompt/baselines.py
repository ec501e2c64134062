"""What Do-Prompt is compared with: zero-shot CLIP, CoOp and MaPLe (its multi-modal prompt-tuning host).

Every learner holds only its learnable prompts; the frozen towers (``FrozenCLIP``) are passed in, so a learner's
``state_dict`` is its prompt. ``logits(clip, tokens, class_names)`` scores stem tokens (``ImageTower.tokens``)
against class names; ``loss(...)`` is the training objective, CE for the baselines.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from icml26_shared import check_int, fail
from torch import nn

from .towers import CTX_INIT, FrozenCLIP, check_prompts


class ZeroShot(nn.Module):
    """Zero-shot CLIP: the hand prompt "a photo of a {c}." (Radford et al. 2021); nothing is learned."""

    def logits(self, clip: FrozenCLIP, tokens: torch.Tensor, class_names) -> torch.Tensor:
        return clip.logits(clip.image.encode_tokens(tokens), clip.hand_prompt_features(class_names))


class CoOp(nn.Module):
    """CoOp (Zhou et al., IJCV 2022): n_ctx context vectors in the token-embedding space, shared by all classes,
    in front of the class name: ``[CLS] v_1 .. v_n <name> . [SEP]``; initialised from "a photo of a"."""

    def __init__(self, clip: FrozenCLIP, n_ctx: int = 4, ctx_init: str = CTX_INIT):
        super().__init__()
        check_int("n_ctx", n_ctx, 1)
        init = clip.text.word_embeddings(ctx_init)
        if len(init) != n_ctx:  # CoOp's generic initialisation when the words do not fit n_ctx
            init = 0.02 * torch.randn(n_ctx, clip.text.width, dtype=clip.text.dtype)
        self.ctx = nn.Parameter(init)

    @property
    def n_ctx(self) -> int:
        return self.ctx.shape[0]

    def prompt_tokens(self) -> torch.Tensor:
        """The learnable prompts (J, n_ctx, width); J = 1 for CoOp."""
        return self.ctx[None]

    def image_features(self, clip: FrozenCLIP, tokens: torch.Tensor, prompts: torch.Tensor) -> torch.Tensor:
        """(S, B, embed): CoOp leaves the image tower alone."""
        return clip.image.encode_tokens(tokens).expand(prompts.shape[0], -1, -1)

    def prompt_logits(self, clip: FrozenCLIP, tokens: torch.Tensor, class_names, prompts: torch.Tensor):
        """Logits (S, B, C) under S prompt sets ``prompts`` (S, J, n_ctx, width)."""
        prompts = check_prompts(prompts, clip.text.width, clip.text.layers)
        text = clip.text.encode_prompts(prompts, class_names)  # (S, C, width)
        return clip.logits(self.image_features(clip, tokens, prompts), text)

    def logits(self, clip: FrozenCLIP, tokens: torch.Tensor, class_names) -> torch.Tensor:
        """Logits (B, C) under the learned prompts."""
        return self.prompt_logits(clip, tokens, class_names, self.prompt_tokens())[0]

    def loss(self, clip, tokens, y, class_names, generator=None, progress: float = 1.0):
        """CE on the few-shot batch; returns (loss, {name: value})."""
        ce = F.cross_entropy(self.logits(clip, tokens, class_names), y)
        return ce, {"ce": ce.item()}


class MaPLe(CoOp):
    """MaPLe (Khattak et al., CVPR 2023): multi-modal prompts. Text prompts at depths 0..J-1 (depth 0 = CoOp's
    context, deeper ones replace the context positions of the hidden states); the visual prompt of each depth
    is the coupling function ``F_k(P_k) = W_k P_k + b_k`` of the text prompt, so both towers adapt jointly."""

    def __init__(self, clip: FrozenCLIP, n_ctx: int = 4, depth: int = 2, ctx_init: str = CTX_INIT):
        super().__init__(clip, n_ctx, ctx_init)
        max_depth = min(clip.text.layers, clip.image.layers)
        check_int("depth", depth, 1, max_depth)
        dtype = clip.text.dtype
        self.deep = nn.Parameter(0.02 * torch.randn(depth - 1, n_ctx, clip.text.width, dtype=dtype))  # MaPLe's std
        self.couplings = nn.ModuleList(nn.Linear(clip.text.width, clip.image.width, dtype=dtype) for _ in range(depth))

    def prompt_tokens(self) -> torch.Tensor:
        return torch.cat([self.ctx[None], self.deep])

    def visual_prompts(self, prompts: torch.Tensor) -> torch.Tensor:
        """(S, J, n_ctx, image width): the coupled visual prompt of every depth."""
        if prompts.shape[1] != len(self.couplings):
            raise fail("prompts", tuple(prompts.shape), f"depth {len(self.couplings)} prompts")
        return torch.stack([F_k(prompts[:, k]) for k, F_k in enumerate(self.couplings)], 1)

    def image_features(self, clip: FrozenCLIP, tokens: torch.Tensor, prompts: torch.Tensor) -> torch.Tensor:
        return torch.stack([clip.image.encode_tokens(tokens, v) for v in self.visual_prompts(prompts)])
