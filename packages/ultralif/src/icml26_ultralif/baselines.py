"""The baselines the paper compares against: surrogate-gradient LIF, PLIF, DSpike, and SigmaLIF.

All four share the linear LIF membrane ``V <- tau V + x`` (whose ultradiscretization is UltraLIF's
``max(V + log tau, x)``) and the reset ``V <- V (1 - s)`` of ``SpikingNeuron``. They differ in the spike:

* ``LIF``: Heaviside forward, sigmoid-derivative surrogate backward (slope ``alpha``).
* ``PLIF``: LIF with a learnable leak tau = sigmoid(w) (Fang et al., 2021).
* ``DSpike``: Heaviside forward, DSpike surrogate backward (Li et al., 2021).
* ``SigmaLIF``: a smooth spike ``sigmoid((V - theta) / eps)`` with learnable eps on the linear membrane: the
  ablation that isolates the max-plus membrane of UltraLIF.
"""

from __future__ import annotations

import math

import torch
from icml26_shared import check_open_interval, check_positive
from torch import nn

from .method import TAU, THETA, SpikingNeuron, UltraNeuron

SIGMOID_ALPHA = 4.0  # surrogate slope (spikingjelly's Sigmoid surrogate default)
DSPIKE_ALPHA = 3.0  # DSpike temperature b


class HeavisideSurrogate(torch.autograd.Function):
    """``H(u)`` forward (a binary spike); subclasses give the surrogate derivative used backward."""

    @staticmethod
    def forward(ctx, u, alpha):
        ctx.save_for_backward(u)
        ctx.alpha = alpha
        return (u >= 0).to(u.dtype)


class SigmoidSurrogate(HeavisideSurrogate):
    """``H(u)`` forward; ``alpha * sigma(alpha u) (1 - sigma(alpha u))`` backward."""

    @staticmethod
    def backward(ctx, grad):
        (u,) = ctx.saved_tensors
        sig = torch.sigmoid(ctx.alpha * u)
        return grad * ctx.alpha * sig * (1 - sig), None


class DSpikeSurrogate(HeavisideSurrogate):
    """``H(u)`` forward; ``alpha / (2 tanh(alpha/2)) * sech^2(alpha u)`` on ``|u| <= 0.5`` backward (DSpike)."""

    @staticmethod
    def backward(ctx, grad):
        (u,) = ctx.saved_tensors
        a = ctx.alpha
        surrogate = a / (2 * math.tanh(a / 2)) / torch.cosh(a * u).pow(2)
        return grad * surrogate * (u.abs() <= 0.5).to(u.dtype), None


class LIF(SpikingNeuron):
    """Leaky integrate-and-fire ``V <- tau V + x``, ``s = H(V - theta)``, trained with a sigmoid surrogate."""

    def __init__(self, dim: int, tau: float = TAU, theta: float = THETA, alpha: float = SIGMOID_ALPHA):
        super().__init__(dim, theta)
        self.tau = check_open_interval("tau", tau, 0.0, 1.0)
        self.alpha = check_positive("alpha", alpha)

    def decay(self) -> torch.Tensor | float:
        """The leak factor tau of ``V <- tau V + x``."""
        return self.tau

    def spike(self, u: torch.Tensor) -> torch.Tensor:
        """Spike of the distance to threshold ``u = V - theta``."""
        return SigmoidSurrogate.apply(u, self.alpha)

    def step(self, v, x):
        v = self.decay() * v + x  # discrete LIF
        return v, self.spike(v - self.theta)


class PLIF(LIF):
    """Parametric LIF: the leak ``tau = sigmoid(w)`` is learned (init ``tau``)."""

    def __init__(self, dim: int, tau: float = TAU, theta: float = THETA, alpha: float = SIGMOID_ALPHA):
        super().__init__(dim, tau, theta, alpha)
        self.w = nn.Parameter(torch.tensor(math.log(tau / (1 - tau))))

    def decay(self):
        return torch.sigmoid(self.w)


class DSpike(LIF):
    """LIF trained with the DSpike surrogate gradient (temperature ``alpha``)."""

    def __init__(self, dim: int, tau: float = TAU, theta: float = THETA, alpha: float = DSPIKE_ALPHA):
        super().__init__(dim, tau, theta, alpha)

    def spike(self, u):
        return DSpikeSurrogate.apply(u, self.alpha)


class SigmaLIF(UltraNeuron):
    """Linear LIF membrane with UltraLIF's smooth spike ``sigma((V - theta) / eps)`` and learnable eps."""

    def __init__(self, dim: int, tau: float = TAU, eps: float = 1.0, learn_eps: bool = True, theta: float = THETA):
        super().__init__(dim, eps, learn_eps, theta)
        self.tau = check_open_interval("tau", tau, 0.0, 1.0)

    def membrane(self, v, x, eps):
        return self.tau * v + x
