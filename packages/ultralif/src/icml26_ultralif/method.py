"""UltraLIF neurons: spiking neurons whose spike and membrane update come from ultradiscretization.

The max-plus semiring (max, +) is the eps -> 0 limit of (eps*log-sum-exp, +). Replacing the hard ``max``
of a tropical neuron by the soft max-plus ``LSE_eps`` gives a neuron that is smooth for every eps > 0, so
it trains by plain backpropagation: the forward and backward pass use the same function (no surrogate).

Axis letters in shapes: B batch, N neurons of a layer, K terms of a soft max-plus.

* ``soft_maxplus``: eq. (LSE_eps) ``eps * log sum_k exp(a_k / eps)``; ``max <= LSE_eps <= max + eps log K``.
* ``UltraLIF`` / ``UltraPLIF``: temporal neurons from the LIF ODE, ``V <- LSE_eps(V + log tau, x)``.
* ``UltraDLIF`` / ``UltraDPLIF``: spatial neurons from the diffusion (gap-junction) equation,
  ``V_i <- LSE_eps(V_{i-1}, V_i, V_{i+1}) + x_i`` (the P variant scales the middle term by a learnable tau).

All four fire ``s = sigmoid((V - theta) / eps)`` and soft-reset ``V <- V * (1 - s)``. eps is learnable per
layer (stored as ``log eps``, used as ``exp(log eps).clamp(EPS_MIN, EPS_MAX)``), as in the official code.

Two official variants (``variant``): "ablation" (default) is the official ablation script and README
formula, as above. "library" is the official library neurons (``ultralif/neurons``), which the official
training script (``experiments/train.py``), hence the paper's main table, imports: they fire at
``sigmoid(V / eps)`` (threshold 0), UltraPLIF does not clamp log tau, and UltraDLIF / UltraDPLIF update
``V <- tau V + x`` and spike on ``LSE_eps(V_{i-1}, V_i, V_{i+1}) / eps``; UltraDPLIF learns the raw
``_tau`` of ``tau = sigmoid(_tau)`` (init 0.9, tau 0.711), unclamped.
"""

from __future__ import annotations

import math

import torch
from icml26_shared import check_choice, check_int, check_open_interval, check_positive, fail
from torch import nn

EPS_MIN, EPS_MAX = 0.1, 20.0  # clamp of the learned temperature (official code)
LOG_TAU_MIN, LOG_TAU_MAX = -2.3, -0.01  # clamp of UltraPLIF's learnable log tau (official code)
TAU_MIN, TAU_MAX = 0.1, 0.99  # clamp of UltraDPLIF's learnable tau (official ablation code)
LIBRARY_TAU_LOGIT = 0.9  # official library UltraDPLIF: raw parameter _tau = 0.9, tau = sigmoid(0.9) = 0.711
THETA = 1.0  # firing threshold (official ablation code; the library neurons fire at 0)
TAU = 0.9  # leak: default decay factor
VARIANTS = ("ablation", "library")  # official ablation script / official library neurons (main table)


def soft_maxplus(a: torch.Tensor, eps: torch.Tensor | float, dim: int = -1) -> torch.Tensor:
    """Soft max-plus ``LSE_eps(a) = eps * log sum_k exp(a_k / eps)`` over ``dim`` (eq. LSE_eps).

    Computed as ``m + eps * logsumexp((a - m) / eps)`` with ``m = max_k a_k`` (stable for tiny eps).
    Tends to ``max_k a_k`` as eps -> 0, with ``max <= LSE_eps <= max + eps * log K``.
    """
    if isinstance(eps, torch.Tensor):
        if not bool(torch.isfinite(eps).all() and (eps > 0).all()):
            raise fail("eps", eps.detach().tolist(), "a finite temperature > 0")
    else:
        check_positive("eps", eps)
    m = a.amax(dim=dim, keepdim=True).detach()
    return (m + eps * torch.logsumexp((a - m) / eps, dim=dim, keepdim=True)).squeeze(dim)


def tropical_membrane(v: torch.Tensor, x: torch.Tensor, kind: str, tau: float = TAU) -> torch.Tensor:
    """Membrane update of the tropical (eps -> 0) neuron that ``kind`` relaxes; for tests and figures.

    "temporal": ``max(V + log tau, x)`` (UltraLIF's limit); "spatial": ``max(V_{i-1}, tau V_i, V_{i+1}) + x``
    (UltraDLIF's limit for tau = 1). The limit spike is ``H(V - theta)`` and the reset ``V (1 - s)``.
    """
    check_choice("kind", kind, ("temporal", "spatial"))
    check_open_interval("tau", tau, 0.0, 1.0 + 1e-12)
    if kind == "temporal":
        return torch.maximum(v + math.log(tau), x)
    return torch.stack([v.roll(1, -1), tau * v, v.roll(-1, -1)], -1).amax(-1) + x


class SpikingNeuron(nn.Module):
    """A layer of ``dim`` spiking neurons with membrane state V; base of the Ultra neurons and the baselines.

    Call ``reset(B)`` before a sequence; ``forward(x)`` takes the input current of one time step (B, N),
    runs ``step`` (membrane update and spike, per subclass), applies the reset ``V <- V (1 - s)`` (soft for
    a soft spike, back to 0 for a binary one) and returns the spikes s (B, N).
    """

    def __init__(self, dim: int, theta: float = THETA):
        super().__init__()
        self.dim = check_int("dim", dim, 1)
        self.theta = check_positive("theta", theta)
        self.v: torch.Tensor | None = None

    def reset(self, batch_size: int, device: torch.device | str | None = None, dtype: torch.dtype | None = None):
        """Start a new sequence: V = 0 for ``batch_size`` samples."""
        check_int("batch_size", batch_size, 1)
        self.v = torch.zeros(batch_size, self.dim, device=device, dtype=dtype)

    def step(self, v: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Membrane update and spike of one time step: ``(V_t before reset, s_t)`` (subclasses)."""
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.v is None:
            raise RuntimeError(f"{type(self).__name__}: call reset(batch_size) before the first step")
        if x.shape != self.v.shape:
            raise fail("x", tuple(x.shape), f"an input current of shape {tuple(self.v.shape)} (batch, dim={self.dim})")
        v, s = self.step(self.v, x)
        self.v = v * (1 - s)  # multiplicative reset
        return s


class UltraNeuron(SpikingNeuron):
    """Shared part of the four Ultra neurons: the learnable temperature eps and the soft spike.

    ``eps``: initial temperature (paper default 1.0); ``learn_eps``: eps is a parameter (paper) or a fixed
    buffer (the paper's ablation); ``theta``: firing threshold of the "ablation" variant; ``variant``:
    "ablation" or "library" (module docstring; the library spike ignores ``theta``).
    """

    def __init__(
        self, dim: int, eps: float = 1.0, learn_eps: bool = True, theta: float = THETA, variant: str = "ablation"
    ):
        super().__init__(dim, theta)
        self.variant = check_choice("variant", variant, VARIANTS)
        log_eps = torch.tensor(math.log(check_positive("eps", eps)))
        if learn_eps:
            self.log_eps = nn.Parameter(log_eps)
        else:
            self.register_buffer("log_eps", log_eps)

    @property
    def eps(self) -> torch.Tensor:
        """The temperature in the dynamics: learned ``exp(log eps)`` clamped to [EPS_MIN, EPS_MAX], or the fixed eps."""
        eps = self.log_eps.exp()
        return eps.clamp(EPS_MIN, EPS_MAX) if isinstance(self.log_eps, nn.Parameter) else eps

    def membrane(self, v: torch.Tensor, x: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
        """The soft max-plus membrane update V_t from V_{t-1} and the input current x_t (subclasses)."""
        raise NotImplementedError

    def spike_potential(self, v: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
        """What the "library" spike thresholds at 0: V itself (temporal neurons; spatial ones override)."""
        return v

    def step(self, v, x):
        eps = self.eps
        v = self.membrane(v, x, eps)
        if self.variant == "library":
            return v, torch.sigmoid(self.spike_potential(v, eps) / eps)  # official library: threshold 0
        return v, torch.sigmoid((v - self.theta) / eps)  # eq. spike: s = sigma((V - theta)/eps), ds/dV = s(1-s)/eps


class LeakyUltraNeuron(UltraNeuron):
    """An Ultra neuron with a leak tau in (0, 1), stored as ``log tau``: fixed, or a parameter (``learn_tau``)."""

    learn_tau = False

    def __init__(
        self,
        dim: int,
        tau: float = TAU,
        eps: float = 1.0,
        learn_eps: bool = True,
        theta: float = THETA,
        variant: str = "ablation",
    ):
        super().__init__(dim, eps, learn_eps, theta, variant)
        log_tau = math.log(check_open_interval("tau", tau, 0.0, 1.0))
        self.log_tau = nn.Parameter(torch.tensor(log_tau)) if self.learn_tau else log_tau


class UltraLIF(LeakyUltraNeuron):
    """Temporal UltraLIF: ``V <- LSE_eps(V + log tau, x)``, the ultradiscretized LIF ODE ``V <- tau V + x``."""

    def membrane(self, v, x, eps):
        return soft_maxplus(torch.stack([v + self.log_tau, x], -1), eps)  # eq. UltraLIF


class UltraPLIF(LeakyUltraNeuron):
    """UltraLIF with a learnable leak: parameter ``log tau`` (init log 0.9), clamped to [-2.3, -0.01]
    (the "library" variant does not clamp)."""

    learn_tau = True

    def membrane(self, v, x, eps):
        log_tau = self.log_tau if self.variant == "library" else self.log_tau.clamp(LOG_TAU_MIN, LOG_TAU_MAX)
        return soft_maxplus(torch.stack([v + log_tau, x], -1), eps)  # eq. UltraPLIF


def ring_maxplus(v: torch.Tensor, eps: torch.Tensor, tau: torch.Tensor | float = 1.0) -> torch.Tensor:
    """``LSE_eps(V_{i-1}, tau V_i, V_{i+1})`` on the ring of gap-junction neighbours: (B, N) -> (B, N)."""
    return soft_maxplus(torch.stack([v.roll(1, -1), tau * v, v.roll(-1, -1)], -1), eps)


class UltraDLIF(UltraNeuron):
    """Spatial UltraDLIF: ``V_i <- LSE_eps(V_{i-1}, V_i, V_{i+1}) + x_i`` (ring of gap-junction neighbours).

    "library" variant: ``V <- TAU V + x`` and the spike on ``LSE_eps(V_{i-1}, V_i, V_{i+1}) / eps``.
    """

    def membrane(self, v, x, eps):
        if self.variant == "library":
            return TAU * v + x  # [INF] the library's leak of UltraDLIF: the default 0.9
        return ring_maxplus(v, eps) + x  # eq. UltraDLIF: ultradiscretized diffusion

    def spike_potential(self, v, eps):
        return ring_maxplus(v, eps)


class UltraDPLIF(UltraNeuron):
    """UltraDLIF with a learnable self-coupling tau; ``tau`` is its value at init (default: the variant's).

    "ablation": middle term ``tau * V_i``; the parameter is ``log tau`` (init log 0.9), tau clamped to
    [0.1, 0.99]. "library" (the official library neuron): ``V <- tau V + x``, ``tau = sigmoid(tau_logit)``; the
    parameter is the raw ``tau_logit`` (the official ``_tau``), initialised to 0.9 (tau 0.711), never clamped.
    """

    def __init__(
        self,
        dim: int,
        tau: float | None = None,
        eps: float = 1.0,
        learn_eps: bool = True,
        theta: float = THETA,
        variant: str = "ablation",
    ):
        super().__init__(dim, eps, learn_eps, theta, variant)
        if tau is not None:
            check_open_interval("tau", tau, 0.0, 1.0)
        if self.variant == "library":
            logit = LIBRARY_TAU_LOGIT if tau is None else math.log(tau / (1.0 - tau))
            self.tau_logit = nn.Parameter(torch.tensor(logit))
        else:
            self.log_tau = nn.Parameter(torch.tensor(math.log(TAU if tau is None else tau)))

    @property
    def tau(self) -> torch.Tensor:
        """The self-coupling in the dynamics: ``sigmoid(tau_logit)`` (library) or ``exp(log tau)`` clamped."""
        if self.variant == "library":
            return torch.sigmoid(self.tau_logit)
        return self.log_tau.exp().clamp(TAU_MIN, TAU_MAX)

    def membrane(self, v, x, eps):
        if self.variant == "library":
            return self.tau * v + x  # library: the learnable tau is the leak, the spike reads the ring LSE
        return ring_maxplus(v, eps, self.tau) + x  # eq. UltraDPLIF

    spike_potential = UltraDLIF.spike_potential  # library: the spike reads LSE(V_{i-1}, V_i, V_{i+1})
