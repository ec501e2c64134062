"""Fully connected SNNs with rate or direct encoding, and the sparsity-penalised loss.

Axis letters: B batch, T time steps, D input features, H hidden neurons, C classes.

``SNN``: ``x -> [encode] -> (fc -> neuron) x layers -> fc``, logits = mean over T of the readout
(official ``SNN``/``DeepSNN``/``TripleSNN``, without BatchNorm or residuals). ``spike_rate`` after a
forward pass is the mean spike over hidden layers, neurons and steps, kept in the graph so that the
sparsity penalty ``Loss = CE + lambda * mean spike rate`` can be minimised.
"""

from __future__ import annotations

from itertools import pairwise

import torch
import torch.nn.functional as F
from icml26_shared import check_choice, check_int, check_number, check_positive, fail
from torch import nn

from .baselines import LIF, PLIF, DSpike, SigmaLIF
from .method import UltraDLIF, UltraDPLIF, UltraLIF, UltraNeuron, UltraPLIF

NEURONS = {
    "UltraLIF": UltraLIF,
    "UltraPLIF": UltraPLIF,
    "UltraDLIF": UltraDLIF,
    "UltraDPLIF": UltraDPLIF,
    "LIF": LIF,
    "PLIF": PLIF,
    "DSpike": DSpike,
    "SigmaLIF": SigmaLIF,
}
ULTRA = ("UltraLIF", "UltraPLIF", "UltraDLIF", "UltraDPLIF")
ENCODINGS = ("rate", "direct", "frames")
RATE_GAIN = 0.5  # spike probability = gain * intensity (official rate encoding)


def _check_tensor(name: str, x: torch.Tensor, ndim: int) -> torch.Tensor:
    if not isinstance(x, torch.Tensor) or x.ndim != ndim or x.numel() == 0:
        shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise fail(name, shape, f"a non-empty torch tensor with {ndim} dims")
    if not bool(torch.isfinite(x).all()):
        raise fail(name, tuple(x.shape), "finite values (found NaN or inf)")
    return x


def rate_encode(x: torch.Tensor, T: int, gain: float = RATE_GAIN, generator: torch.Generator | None = None):
    """Poisson rate code (B, D) in [0, 1] -> (B, T, D) spikes: ``s = 1[u < gain * x]``, u ~ U(0, 1)."""
    _check_tensor("x", x, 2)
    check_int("T", T, 1)
    check_positive("gain", gain)
    if bool((x < 0).any() or (x > 1).any()):
        raise fail("x", f"values in [{x.min().item():.3g}, {x.max().item():.3g}]", "intensities in [0, 1]")
    u = torch.rand(x.shape[0], T, x.shape[1], generator=generator, dtype=x.dtype)
    return (u < gain * x[:, None, :]).to(x.dtype)


def direct_encode(x: torch.Tensor, T: int) -> torch.Tensor:
    """Direct code (B, D) -> (B, T, D): the analog input is the current at every step."""
    _check_tensor("x", x, 2)
    check_int("T", T, 1)
    return x[:, None, :].expand(-1, T, -1)


class SNN(nn.Module):
    """A fully connected SNN of ``layers`` hidden layers of ``neuron`` (a name in ``NEURONS``).

    ``encoding``: "rate" (static x (B, D) in [0, 1], Poisson over T steps), "direct" (x (B, D) repeated T
    times) or "frames" (x (B, T, D) already a sequence, e.g. audio frames). ``neuron_kwargs`` go to every
    neuron (e.g. ``eps``, ``tau``). ``forward`` returns logits (B, C) and sets ``spike_rate``.
    """

    def __init__(
        self,
        neuron: str,
        in_dim: int,
        out_dim: int = 10,
        hidden: int = 64,
        layers: int = 1,
        T: int = 1,
        encoding: str = "rate",
        gain: float = RATE_GAIN,
        **neuron_kwargs,
    ):
        super().__init__()
        check_choice("neuron", neuron, NEURONS)
        widths = [check_int("in_dim", in_dim, 1)] + [check_int("hidden", hidden, 1)] * check_int("layers", layers, 1)
        self.T = check_int("T", T, 1)
        self.encoding = check_choice("encoding", encoding, ENCODINGS)
        self.gain = check_positive("gain", gain)
        self.fcs = nn.ModuleList(nn.Linear(a, b) for a, b in pairwise(widths))
        self.readout = nn.Linear(hidden, check_int("out_dim", out_dim, 2))
        self.neurons = nn.ModuleList(NEURONS[neuron](hidden, **neuron_kwargs) for _ in range(layers))
        self.spike_rate = torch.tensor(0.0)

    def encode(self, x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """The input sequence (B, T, D) of ``x``."""
        if self.encoding == "rate":
            return rate_encode(x, self.T, self.gain, generator)
        if self.encoding == "direct":
            return direct_encode(x, self.T)
        _check_tensor("x", x, 3)
        if x.shape[1] != self.T:
            raise fail("x", tuple(x.shape), f"frames of shape (batch, T={self.T}, features)")
        return x

    def forward(self, x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        seq = self.encode(x, generator)
        if seq.shape[-1] != self.fcs[0].in_features:
            raise fail("x", tuple(x.shape), f"{self.fcs[0].in_features} features in the last dim")
        for neuron in self.neurons:
            neuron.reset(seq.shape[0], seq.device, seq.dtype)
        logits, rate = 0.0, 0.0
        for t in range(self.T):
            h = seq[:, t]
            for fc, neuron in zip(self.fcs, self.neurons, strict=True):
                h = neuron(fc(h))
                rate = rate + h.mean()
            logits = logits + self.readout(h)
        self.spike_rate = rate / (self.T * len(self.neurons))
        return logits / self.T

    def temperatures(self) -> list[float]:
        """The learned eps of every layer (empty for neurons without one)."""
        return [float(n.eps.detach()) for n in self.neurons if isinstance(n, UltraNeuron)]

    def raw_temperatures(self) -> list[float]:
        """``exp(log eps)`` before the clamp: where the optimiser has taken eps."""
        return [float(n.log_eps.detach().exp()) for n in self.neurons if isinstance(n, UltraNeuron)]


def sparse_loss(logits: torch.Tensor, y: torch.Tensor, spike_rate: torch.Tensor, lam: float = 0.0) -> torch.Tensor:
    """``CE(logits, y) + lambda * mean spike rate`` (the paper's optional sparsity penalty, lambda = 0.1)."""
    lam = check_number("lam", lam)
    if lam < 0:
        raise fail("lam", lam, "a penalty weight >= 0")
    return F.cross_entropy(logits, y) + lam * spike_rate
