"""V2V-CCM: communication-conditioned token pruning (dual-stage request -> selective transmission).

Stage 1, the request: the ego broadcasts two messages to every CAV:
* QSM, the Question Semantic Message: the pooled question intent ``q = W_q mean(question embeddings)``
  (``CooperativeQA.qsm``), d_m float16 values;
* SCM, the Spatial Coverage Message: the ego's LiDAR coverage per BEV patch (the fraction of the patch's cells
  its ray casting sees), quantised to uint8, one byte per patch.
Stage 2, at each CAV: score its tokens by question relevance r_i = <q, W_k x_i> / sqrt(d_m) and spatial
redundancy c_i = SCM(patch of token i), keep the top k = ceil(rho N) and transmit them (float16 features + their
indices); the ego fuses all kept tokens with its own in the MLLM.

The score fusion is not public; ours [INF]: s_i = r~_i - lambda c_i with r~_i = softmax(r)_i / max softmax(r)
(in (0, 1]) and lambda = 1, fixed before any run.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from icml26_shared import check_int, check_number, fail

FEATURE_BYTES = 2  # a transmitted token feature is float16
COVERAGE_BYTES = 1  # one uint8 per patch in the SCM
COVERAGE_LEVELS = 255


def check_keep_ratio(keep_ratio) -> float:
    """A keep ratio rho in (0, 1]."""
    rho = check_number("keep_ratio", keep_ratio)
    if not 0 < rho <= 1:
        raise fail("keep_ratio", keep_ratio, "a number in (0, 1]")
    return rho


def keep_count(keep_ratio: float, n: int) -> int:
    """k = ceil(rho N) tokens kept of N (at least one)."""
    rho = check_keep_ratio(keep_ratio)
    check_int("n", n, 1)
    return max(1, math.ceil(rho * n - 1e-9))  # the tolerance keeps rho N = 4.000000001 at 4


def select_tokens(scores: torch.Tensor, keep_ratio: float) -> torch.Tensor:
    """Bool mask (..., N) of the top-k scores along the last axis, k = ceil(rho N); of equal scores the
    lowest token indices are kept (a stable sort on -score, so the mask depends on the data only: ``topk``
    returns tied indices in an order that differs between torch builds and devices)."""
    if not isinstance(scores, torch.Tensor) or scores.dim() < 1 or scores.shape[-1] == 0:
        raise fail("scores", scores, "a torch tensor (..., N) with N >= 1")
    if not torch.isfinite(scores).all():
        raise fail("scores", scores, "finite scores (found NaN or inf)")
    k = keep_count(keep_ratio, scores.shape[-1])
    mask = torch.zeros_like(scores, dtype=torch.bool)
    return mask.scatter_(-1, torch.sort(-scores, dim=-1, stable=True).indices[..., :k], True)


def scm_message(coverage) -> np.ndarray:
    """SCM: the ego's coverage per patch (values in [0, 1]) quantised to uint8 (what is transmitted)."""
    c = np.asarray(coverage.detach().cpu() if isinstance(coverage, torch.Tensor) else coverage, dtype=float)
    if c.size == 0 or not np.isfinite(c).all() or c.min() < 0 or c.max() > 1:
        raise fail("coverage", coverage, "a non-empty array of fractions in [0, 1]")
    return np.rint(c * COVERAGE_LEVELS).astype(np.uint8)


def scm_coverage(message: np.ndarray) -> torch.Tensor:
    """The coverage c_i a CAV reads back from an SCM (float32)."""
    if not isinstance(message, np.ndarray) or message.dtype != np.uint8:
        raise fail("message", message, "a uint8 array from scm_message")
    return torch.from_numpy(message.astype(np.float32) / COVERAGE_LEVELS)


def ccm_scores(relevance: torch.Tensor, coverage: torch.Tensor, lam: float = 1.0) -> torch.Tensor:
    """s_i = r~_i - lambda c_i over one sender's tokens (last axis) [INF fusion, see module docstring]."""
    check_number("lam", lam)
    if relevance.shape != coverage.shape:
        raise fail("coverage", tuple(coverage.shape), f"the shape of relevance {tuple(relevance.shape)}")
    p = relevance.softmax(-1)
    return p / p.amax(-1, keepdim=True) - lam * coverage


def index_bytes(n: int) -> int:
    """Bytes to address one of n tokens (uint8 up to 256 tokens)."""
    check_int("n", n, 1)
    return max(1, math.ceil(math.log2(n) / 8))


def message_bytes(k: int, n: int, d: int) -> int:
    """One CAV's transmission of k of its n tokens: k float16 features of width d plus k indices."""
    check_int("k", k, 0, n)
    check_int("d", d, 1)
    return k * (d * FEATURE_BYTES + index_bytes(n))


def dense_bytes(n: int, d: int) -> int:
    """One CAV's dense transmission: all n tokens in patch order (no indices needed)."""
    check_int("n", n, 1)
    check_int("d", d, 1)
    return n * d * FEATURE_BYTES


def request_bytes(d_m: int, n_patches: int) -> int:
    """The request one CAV receives: QSM (d_m float16) + SCM (one uint8 per patch)."""
    check_int("d_m", d_m, 1)
    check_int("n_patches", n_patches, 1)
    return d_m * FEATURE_BYTES + n_patches * COVERAGE_BYTES
