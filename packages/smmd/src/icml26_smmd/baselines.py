"""Baselines: the Number Token Loss of Zausinger et al. (ICML 2025, arXiv 2411.02083).

Both variants work on p = softmax(l_t[V_num]) at numeric-target positions, like SMMD, and are added to
cross-entropy with a weight (``NumericTargetObjective``):

    NTL-WAS = sum_i p_i |v_i - y|     1-d Wasserstein distance to the one-hot target at value y
    NTL-MSE = (sum_i p_i v_i - y)^2   squared error of the expected value

Cross-entropy alone is ``NumericTargetObjective(None)``; "MMD without smoothing", the shuffled and the
random kernels are modes of ``SMMDLoss``.
"""

from __future__ import annotations

import torch
from icml26_shared import check_choice

from .method import NumericTokenLoss
from .tokens import NumericVocab

NTL_VARIANTS = ("was", "mse")
NTL_LAMBDA = 0.3  # the NTL paper's default weight on the auxiliary term


class NumberTokenLoss(NumericTokenLoss):
    """NTL as a drop-in ``nn.Module``: ``loss(logits (B,T,V), targets (B,T)) -> ()``; variant "was" or "mse"."""

    def __init__(self, vocab: NumericVocab, variant: str = "was") -> None:
        super().__init__(vocab)
        self.variant = check_choice("variant", variant, NTL_VARIANTS)

    def per_position(self, p: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        values = self.values.to(p.dtype)
        y = values[target]
        if self.variant == "was":
            return (p * (values[None, :] - y[:, None]).abs()).sum(dim=1)
        return ((p * values[None, :]).sum(dim=1) - y) ** 2
