"""AdaEraser: token-wise adaptive self-attention suppression driven by the estimated presence of the object.

Notation (pre-softmax self-attention scores of one layer): ``S`` (B, heads, N, N) with queries i and keys j,
``m_j`` in {0, 1} the object's token mask (the pixel mask max-pooled to the patch grid, as AttentiveEraser does)
and ``lambda_ij`` in [0, 1] a suppression strength. Every suppression law of this package is the same edit

    S'_ij = S_ij + m_j log(1 - lambda_ij)                                            (eq. 1, ours)

with ``log 0`` read as ``finfo.min``: lambda = 1 is AttentiveEraser's hard block of object keys
(``S + M`` with ``M_j = finfo.min`` on the mask), lambda = 0 leaves attention untouched, and in between the
attention on object keys is scaled by ``1 - lambda`` and renormalised (``softmax(S')_ij`` is proportional to
``(1 - lambda_ij) softmax(S)_ij`` on the mask; test_method checks this output-gating form).

AdaEraser (ICML 2026) makes lambda token-wise and time-dependent, driven by the *presence of the object
concept* estimated from the self-attention maps before and during removal. The paper's exact estimator is not in
public text; ours [INF] is the ratio of a query's attention mass on the object region during removal to the
same mass before removal (the unedited model on the source trajectory at the same timestep and layer):

    a_i = (1 / heads) sum_h sum_j m_j softmax(S)_hij                                 (eq. 2, ours)
    p_i(t) = clip(a_i^edit(t) / (a_i^src(t) + delta), 0, 1)                          (eq. 3, ours)
    lambda_ij(t) = lambda_max p_i(t)                                                  (eq. 4, ours)

A token that still attends to the object region as much as when the object was there (p = 1) is blocked as
hard as AttentiveEraser does; once the hole has been filled with background, its tokens stop singling the
region out (p < 1) and get their self-attention back, which the background reconstruction needs. p is
recomputed at every step and layer, so the suppression follows the removal as it progresses.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from icml26_shared import check_closed_interval, check_int, check_positive, fail

DELTA = 1e-6  # eq. (3): keeps the ratio finite where a query ignored the object before removal


def suppression_bias(strength: torch.Tensor, token_mask: torch.Tensor) -> torch.Tensor:
    """eq. (1): the additive bias ``m_j log(1 - lambda)``; ``lambda = 1`` on a masked key gives ``finfo.min``.

    ``strength`` broadcasts against the scores with its last axis of size 1 (per query) and ``token_mask`` is
    (B, N) over keys; the result broadcasts to (B, heads, N, N)."""
    if strength.min() < 0 or strength.max() > 1:
        raise fail("strength", float(strength.min() if strength.min() < 0 else strength.max()), "values in [0, 1]")
    gated = strength * token_mask[:, None, None, :]
    floor = torch.finfo(gated.dtype).min
    return torch.where(gated >= 1, torch.full_like(gated, floor), torch.log1p(-gated.clamp(max=1)))


def suppress(scores: torch.Tensor, token_mask: torch.Tensor, strength: torch.Tensor | float) -> torch.Tensor:
    """eq. (1): ``S + m_j log(1 - lambda)`` for scores (B, heads, N, N), a key mask (B, N) and lambda as a
    number or a tensor broadcasting to (B, heads, N, 1) (one strength per query)."""
    check_token_mask(token_mask, scores.shape[0], scores.shape[-1])
    if not torch.is_tensor(strength):
        strength = torch.tensor(check_closed_interval("strength", strength, 0.0, 1.0), dtype=scores.dtype)
    strength = strength.to(scores.dtype)
    if strength.ndim == 0:
        strength = strength.reshape(1, 1, 1, 1)
    if strength.ndim != 4 or strength.shape[-1] != 1:
        raise fail("strength", tuple(strength.shape), "a number or a tensor broadcasting to (B, heads, N, 1)")
    return scores + suppression_bias(strength, token_mask.to(scores.dtype))


def object_affinity(scores: torch.Tensor, token_mask: torch.Tensor) -> torch.Tensor:
    """eq. (2): the attention mass each query puts on the object's keys, averaged over heads: (B, N)."""
    check_token_mask(token_mask, scores.shape[0], scores.shape[-1])
    return (scores.softmax(-1) * token_mask[:, None, None, :].to(scores.dtype)).sum(-1).mean(1)


def object_presence(edit_scores: torch.Tensor, source_scores: torch.Tensor, token_mask: torch.Tensor) -> torch.Tensor:
    """eq. (3): per-query presence of the object concept in [0, 1], (B, N), from the unedited scores of the
    image being edited and of the source image at the same timestep and layer."""
    if edit_scores.shape != source_scores.shape:
        raise fail("source_scores", tuple(source_scores.shape), f"the shape of edit_scores {tuple(edit_scores.shape)}")
    ratio = object_affinity(edit_scores, token_mask) / (object_affinity(source_scores, token_mask) + DELTA)
    return ratio.clamp(0.0, 1.0)


def check_token_mask(token_mask: torch.Tensor, batch: int, tokens: int) -> torch.Tensor:
    """A (batch, tokens) mask in {0, 1} with at least one masked and one unmasked token per image."""
    if tuple(token_mask.shape) != (batch, tokens):
        raise fail("token_mask", tuple(token_mask.shape), f"shape ({batch}, {tokens}) matching the scores")
    if not ((token_mask == 0) | (token_mask == 1)).all():
        raise fail("token_mask", "non-binary values", "values in {0, 1}")
    count = token_mask.sum(-1)
    if (count == 0).any():
        raise fail("token_mask", "an empty mask", "at least one masked token per image")
    if (count == tokens).any():
        raise fail("token_mask", "a mask covering every token", "at least one unmasked token per image")
    return token_mask


class AttentionSuppression:
    """The attention control of a removal run (AttentiveEraser's AAS and its variants), called by every
    self-attention layer of the denoiser as ``control(S, layer) -> S'``.

    The batch holds ``branches`` equal chunks of ``n`` images: the last chunk is the image being edited, the
    one before it the same image under unedited attention (the other half of self-attention redirection
    guidance) and, when ``needs_source``, the first chunk is the source image noised to the same timestep.
    Only the last chunk is edited: during the first ``ss_steps`` steps the scores of queries inside the mask are
    multiplied by ``ss_scale`` (AttentiveEraser's similarity suppression), then eq. (1) applies ``strength``.
    Subclasses define the strength; ``step`` is set by the sampler before each denoiser call. A call that edits
    nothing (a layer outside ``layers``, or strength 0 everywhere outside the similarity-suppression steps)
    returns None, and the denoiser serves the scores unchanged: zero suppression is exactly no control.
    """

    needs_source = False

    def __init__(
        self, token_mask: torch.Tensor, ss_steps: int = 0, ss_scale: float = 1.0, layers: Sequence[int] | None = None
    ):
        if token_mask.ndim != 2:
            raise fail("token_mask", tuple(token_mask.shape), "a (n, N) mask over tokens")
        self.token_mask = check_token_mask(token_mask.float(), *token_mask.shape)
        self.ss_steps = check_int("ss_steps", ss_steps, 0)
        self.ss_scale = check_positive("ss_scale", ss_scale)
        self.layers = None if layers is None else frozenset(check_int("layers", x, 0) for x in layers)
        self.step = 0
        self.trace: list[tuple[int, int, torch.Tensor]] = []  # (step, layer, mean strength on masked queries)

    @property
    def branches(self) -> int:
        return 3 if self.needs_source else 2

    def strength(self, edit: torch.Tensor, chunks: tuple[torch.Tensor, ...]) -> torch.Tensor | float:
        raise NotImplementedError

    def __call__(self, scores: torch.Tensor, layer: int) -> torch.Tensor | None:
        n = self.token_mask.shape[0]
        if scores.shape[0] != self.branches * n:
            raise fail("scores", tuple(scores.shape), f"a batch of {self.branches} x {n} images")
        if self.layers is not None and layer not in self.layers:
            return None
        chunks = scores.split(n)
        edit = chunks[-1]
        strength = self.strength(edit, chunks)
        self._record(layer, strength)
        flatten = self.step < self.ss_steps and self.ss_scale != 1
        if not flatten and not bool(torch.as_tensor(strength).any()):
            return None  # lambda = 0 everywhere: the unedited attention, bit for bit
        if flatten:  # AAS: temperature-flattened scores for queries inside the mask
            inside = self.token_mask[:, None, :, None].bool()
            edit = torch.where(inside, self.ss_scale * edit, edit)
        return torch.cat([*chunks[:-1], suppress(edit, self.token_mask, strength)])

    def _record(self, layer: int, strength: torch.Tensor | float) -> None:
        lam = torch.as_tensor(strength, dtype=torch.float32).reshape(-1)
        if lam.numel() > 1:  # per-query strengths (n, 1, N, 1) -> mean over the masked queries
            lam = lam.reshape(self.token_mask.shape)
            lam = (lam * self.token_mask).sum() / self.token_mask.sum()
        self.trace.append((self.step, layer, lam.mean()))


class AdaptiveSuppression(AttentionSuppression):
    """AdaEraser [INF]: per-query strength ``lambda_max p_i(t)`` from the presence of eq. (3)."""

    needs_source = True

    def __init__(self, token_mask: torch.Tensor, lambda_max: float = 1.0, **kwargs):
        super().__init__(token_mask, **kwargs)
        self.lambda_max = check_closed_interval("lambda_max", lambda_max, 0.0, 1.0)

    def strength(self, edit: torch.Tensor, chunks: tuple[torch.Tensor, ...]) -> torch.Tensor:
        presence = object_presence(edit, chunks[0], self.token_mask)  # eq. (3)
        return (self.lambda_max * presence)[:, None, :, None]  # eq. (4), (n, 1, N, 1): one strength per query
