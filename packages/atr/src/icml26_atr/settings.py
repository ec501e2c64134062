"""ATR's constants as one frozen record (torch-free, so that configs import without torch)."""

from __future__ import annotations

from dataclasses import dataclass

from icml26_shared import check_choice, check_closed_interval, check_number, check_positive, fail

METHODS = ("ce", "focal", "logit_adjustment", "atr_bal", "atr_vtm", "atr")  # baselines, ATR's two parts, ATR


@dataclass(frozen=True)
class ATRSettings:
    """ATR's constants (all [INF], the spec's reconstruction; fixed before any run, none tuned on the claims)."""

    quantile: float = 0.3  # filter: drop tokens below the running 30th percentile of token losses (eq. 2-3)
    momentum: float = 0.9  # beta of the running threshold (eq. 2)
    gamma: float = 1.0  # reweighting exponent (eq. 4)
    w_max: float = 5.0  # weight bound (eq. 4)
    bound: str = "none"  # eq. (5): "none" (weights bounded only), "truncate" min(l, -log eps), "gce" (post-hoc: README)
    eps: float = 1e-3
    q: float = 0.7  # GCE exponent when bound == "gce"
    r_max: float = 0.5  # visual token mask ratio r ~ U(0, r_max)
    lambda_full: float = 1.0  # eq. (7)
    lambda_mask: float = 0.5
    kl: float = 0.0  # optional consistency between the two views (off)

    def __post_init__(self) -> None:
        if not 0 <= check_number("quantile", self.quantile) < 1:
            raise fail("quantile", self.quantile, "a number in [0, 1)")
        if not 0 <= check_number("momentum", self.momentum) < 1:
            raise fail("momentum", self.momentum, "a number in [0, 1)")
        if check_number("gamma", self.gamma) < 0:
            raise fail("gamma", self.gamma, "a number >= 0")
        if check_number("w_max", self.w_max) < 1:
            raise fail("w_max", self.w_max, "a bound >= 1 (the mean weight is 1)")
        check_choice("bound", self.bound, ("none", "truncate", "gce"))
        if not 0 < check_number("eps", self.eps) < 1:
            raise fail("eps", self.eps, "a probability in (0, 1)")
        if not 0 < check_number("q", self.q) <= 1:
            raise fail("q", self.q, "a number in (0, 1]")
        check_closed_interval("r_max", self.r_max, 0.0, 1.0)
        check_positive("lambda_full", self.lambda_full)
        for name in ("lambda_mask", "kl"):
            if check_number(name, getattr(self, name)) < 0:
                raise fail(name, getattr(self, name), "a weight >= 0")

    def loss(self):
        """The ``BoundedAdaptiveLoss`` with these constants."""
        from .method import BoundedAdaptiveLoss

        return BoundedAdaptiveLoss(self.quantile, self.momentum, self.gamma, self.w_max, self.bound, self.eps, self.q)
