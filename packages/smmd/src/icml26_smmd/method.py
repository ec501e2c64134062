"""SMMD: the smooth maximum mean discrepancy loss over numeric tokens (paper Sec. 3.2-3.4).

Per position t whose target y_t is in V_num (other positions contribute nothing):

    p = softmax(l_t[V_num])                    prediction renormalised over V_num       (Sec. 3.2)
    q = e_{pi(y_t)}, r = p - q                 one-hot target, residual
    L_MMD    = r^T K r                         kernel matching (discrete MMD^2)          eq. (4)
    L_smooth = r^T (D - K) r = 1/2 sum_ij K_ij (r_i - r_j)^2   graph smoothness          eq. (5)
    L_SMMD   = L_MMD + alpha L_smooth,  alpha = 1 / (2 mean_i deg_i)  ("auto", Sec. 3.4) eq. (6)

The module returns the mean of ``relu(raw)`` over numeric-target positions (0 when there is none); it
is an auxiliary term, trained as ``CE + lam * L_SMMD`` (``NumericTargetObjective``).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from icml26_shared import check_choice, check_int, check_number, check_positive, fail
from torch import nn

from .kernels import SIGMA, SQUASH_FACTOR, random_psd_kernel, shuffled_value_kernel, value_distance_kernel
from .tokens import NumericVocab

LOSS_MODES = ("mmd", "smooth", "smmd")
KERNEL_MODES = ("value_distance", "shuffled_mapping", "random_kernel")
ABLATION_SEED = 42  # official code's seed of the shuffled / random kernels


def smmd_terms(p: torch.Tensor, target: torch.Tensor, K: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(L_MMD, L_smooth)`` per row for predictions ``p`` (P, N), target indices (P,), kernel (N, N).

    Expanded with q one-hot so r is never formed: r^T K r = p^T K p + K_tt - 2 (K p)_t, and
    r^T D r = sum_i deg_i p_i^2 + deg_t (1 - 2 p_t), so L_smooth = r^T D r - r^T K r.
    """
    deg = K.sum(dim=1)
    mmd = ((p @ K) * p).sum(dim=1) + K.diagonal()[target] - 2.0 * (K[target] * p).sum(dim=1)  # eq. (4)
    p_t = p.gather(1, target[:, None]).squeeze(1)
    r_D_r = (p * p * deg).sum(dim=1) + deg[target] * (1.0 - 2.0 * p_t)
    return mmd, r_D_r - mmd  # eq. (5): r^T (D - K) r


def _check_logits_targets(logits: torch.Tensor, targets: torch.Tensor, vocab_size: int) -> None:
    if not isinstance(logits, torch.Tensor) or logits.ndim != 3:
        raise fail("logits", getattr(logits, "shape", logits), "a tensor (B, T, V)")
    if not isinstance(targets, torch.Tensor) or targets.ndim != 2 or targets.dtype.is_floating_point:
        raise fail("targets", getattr(targets, "shape", targets), "an integer tensor (B, T)")
    if targets.shape != logits.shape[:2]:
        raise fail("targets", tuple(targets.shape), f"shape (B, T) = {tuple(logits.shape[:2])} matching logits")
    if logits.shape[2] != vocab_size:
        raise fail("logits", tuple(logits.shape), f"a last dimension equal to the vocabulary size {vocab_size}")


class NumericTokenLoss(nn.Module):
    """Base of the auxiliary numeric losses: V_num lookup and the numeric-position gather.

    Subclasses implement ``per_position(p, target_index)`` on p (P, N) renormalised over V_num.
    """

    def __init__(self, vocab: NumericVocab) -> None:
        super().__init__()
        if not isinstance(vocab, NumericVocab):
            raise fail("vocab", type(vocab).__name__, "a NumericVocab")
        self.vocab = vocab
        is_numeric, index = vocab.lookup()
        self.register_buffer("values", vocab.values.clone())  # float64; used in the logits' dtype
        self.register_buffer("is_numeric", is_numeric)
        self.register_buffer("index", index)

    def numeric_positions(self, logits: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(p (P, N), target index (P,))`` at the P positions whose target is in V_num.

        p is over values (tokens sharing a value pooled), in the logits' dtype (at least float32).
        """
        _check_logits_targets(logits, targets, self.vocab.vocab_size)
        y = targets.reshape(-1)
        valid = (y >= 0) & (y < self.vocab.vocab_size)  # e.g. ignore_index = -100 is never numeric
        mask = valid & self.is_numeric[torch.where(valid, y, torch.zeros_like(y))]
        p = self.vocab.value_probabilities(logits.reshape(-1, logits.shape[-1])[mask])
        return p, self.index[y[mask]]

    def per_position(self, p: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Mean loss over numeric-target positions of ``logits`` (B, T, V), ``targets`` (B, T); 0 if none."""
        p, target = self.numeric_positions(logits, targets)
        if target.numel() == 0:
            return p.new_zeros(())
        return self.per_position(p, target).mean()


class SMMDLoss(NumericTokenLoss):
    """The SMMD auxiliary loss as a drop-in ``nn.Module``: ``loss(logits (B,T,V), targets (B,T)) -> ()``.

    ``mode``: "smmd" (eq. 6), "mmd" (eq. 4 alone) or "smooth" (alpha * eq. 5 alone).
    ``kernel_mode``: "value_distance" (the paper), "shuffled_mapping" (values permuted across tokens)
    or "random_kernel" (value-agnostic PSD kernel), the paper's kernel ablations.
    ``alpha``: "auto" = 1 / (2 mean deg) (Sec. 3.4) or a number >= 0.
    """

    def __init__(
        self,
        vocab: NumericVocab,
        mode: str = "smmd",
        kernel_mode: str = "value_distance",
        sigmas: Sequence[float] = (SIGMA,),
        kernel_type: str = "gaussian",
        squash_factor: float = SQUASH_FACTOR,
        alpha: float | str = "auto",
        ablation_seed: int = ABLATION_SEED,
    ) -> None:
        super().__init__(vocab)
        self.mode = check_choice("mode", mode, LOSS_MODES)
        self.kernel_mode = check_choice("kernel_mode", kernel_mode, KERNEL_MODES)
        check_number("squash_factor", squash_factor)
        ablation_seed = check_int("ablation_seed", ablation_seed, 0)
        if kernel_mode == "value_distance":
            K = value_distance_kernel(vocab.values, sigmas, kernel_type, squash_factor)
        elif kernel_mode == "shuffled_mapping":
            K = shuffled_value_kernel(vocab.values, ablation_seed, sigmas, kernel_type, squash_factor)
        else:
            K = random_psd_kernel(len(vocab), ablation_seed)
        deg = K.sum(dim=1)
        if alpha == "auto":
            alpha_value = 0.5 / float(deg.mean())  # Sec. 3.4: alpha = 1 / (2 mean_i deg_i)
        elif isinstance(alpha, str):
            raise fail("alpha", alpha, "'auto' or a number >= 0")
        else:
            alpha_value = check_number("alpha", alpha)
            if alpha_value < 0:
                raise fail("alpha", alpha, "'auto' or a number >= 0")
        self.register_buffer("K", K.double())  # cast to the logits' dtype in per_position
        self.alpha = alpha_value

    def per_position(self, p: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        mmd, smooth = smmd_terms(p, target, self.K.to(p.dtype))
        if self.mode == "mmd":
            raw = mmd
        elif self.mode == "smooth":
            raw = self.alpha * smooth
        else:
            raw = mmd + self.alpha * smooth  # eq. (6)
        return F.relu(raw)  # both terms are >= 0 in exact arithmetic; relu removes rounding below 0


class NumericTargetObjective(nn.Module):
    """The training objective ``CE + lam * aux`` (aux: SMMD or a baseline; ``None`` = CE alone).

    CE is the usual next-token cross-entropy over the full vocabulary, averaged over the positions
    whose target is not ``ignore_index``.
    """

    def __init__(self, aux: nn.Module | None = None, lam: float = 1.0, ignore_index: int = -100) -> None:
        super().__init__()
        if aux is not None and not isinstance(aux, nn.Module):
            raise fail("aux", type(aux).__name__, "None or an nn.Module loss(logits, targets)")
        self.aux = aux
        self.lam = check_positive("lam", lam) if aux is not None else 0.0
        self.ignore_index = check_int("ignore_index", ignore_index)

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """The scalar objective for ``logits`` (B, T, V) and ``targets`` (B, T)."""
        _check_logits_targets(logits, targets, logits.shape[-1] if logits.ndim == 3 else -1)
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=self.ignore_index)
        return ce if self.aux is None else ce + self.lam * self.aux(logits, targets)
