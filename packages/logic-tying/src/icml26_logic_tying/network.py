"""A differentiable logic gate network (DLGN) in pure torch, following difflogic (Petersen et al., 2022).

Layer ``l`` has ``G_l`` gates; gate ``g`` reads outputs ``a = x[i_g]``, ``b = x[j_g]`` of the previous layer
(fixed random wiring) and holds logits ``w_g`` (16,) over the 16 gates of :mod:`.gates`. Relaxed (training)
forward: ``y_g = sum_k softmax(w_g)_k f_k(a, b)``; hard (inference) forward: ``y_g = f_{argmax w_g}(a, b)`` on
binary inputs. The readout is GroupSum: ``z_c = (sum of the outputs of the c-th block of the last layer) / tau``.
"""

from __future__ import annotations

import numpy as np
import torch
from icml26_shared import check_array, check_int, check_positive, fail
from torch import nn

from .gates import COEFFICIENTS, N_GATES


def random_wiring(in_dim: int, out_dim: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """difflogic's ``connections='random'``: ``2 out_dim`` input slots spread evenly over the ``in_dim`` inputs,
    shuffled; every input is read at least once when ``2 out_dim >= in_dim``."""
    slots = rng.permutation(2 * out_dim) % in_dim
    slots = rng.permutation(in_dim)[slots]
    return slots[:out_dim].astype(np.int64), slots[out_dim:].astype(np.int64)


def check_binary(name: str, x) -> np.ndarray:
    """A 2-D array of 0/1 values (bool, int or float), returned as bool."""
    arr = check_array(name, x, ndim=2)
    if not np.isin(arr, (0, 1)).all():
        raise fail(name, arr, "binary values in {0, 1}")
    return arr.astype(bool)


class LogicNetwork(nn.Module):
    """DLGN: ``in_dim`` input bits -> layers of ``widths`` gates -> GroupSum over ``n_classes`` blocks / ``tau``.

    The weights start as ``randn(G, 16)`` as in difflogic; ``seed`` fixes wiring and initial weights.
    """

    def __init__(self, in_dim: int, widths: tuple[int, ...], n_classes: int, tau: float, seed: int = 0):
        super().__init__()
        check_int("in_dim", in_dim, 1)
        if not widths:
            raise fail("widths", widths, "at least one layer width")
        for w in widths:
            check_int("widths", w, 1)
        check_int("n_classes", n_classes, 2)
        if widths[-1] % n_classes:
            raise fail("widths", widths, f"a last layer width divisible by n_classes={n_classes} (GroupSum)")
        self.in_dim, self.widths, self.n_classes = in_dim, tuple(int(w) for w in widths), n_classes
        self.tau = check_positive("tau", tau)
        rng = np.random.default_rng(seed)
        generator = torch.Generator().manual_seed(seed)
        self.weights = nn.ParameterList()
        previous = in_dim
        for layer, width in enumerate(self.widths):
            a, b = random_wiring(previous, width, rng)
            self.register_buffer(f"index_a_{layer}", torch.from_numpy(a))
            self.register_buffer(f"index_b_{layer}", torch.from_numpy(b))
            self.weights.append(nn.Parameter(torch.randn(width, N_GATES, generator=generator)))
            previous = width
        self.register_buffer("coefficients", torch.tensor(COEFFICIENTS, dtype=torch.float32))

    @property
    def n_gates(self) -> int:
        return sum(self.widths)

    def wiring(self, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        return getattr(self, f"index_a_{layer}"), getattr(self, f"index_b_{layer}")

    def gate_ids(self) -> list[np.ndarray]:
        """The chosen gate per layer: ``argmax_k w_g`` (the discretisation)."""
        return [w.detach().argmax(1).cpu().numpy() for w in self.weights]

    def layer_outputs(
        self,
        x: torch.Tensor,
        hard: bool = False,
        ties: tuple[torch.Tensor, torch.Tensor] | None = None,
        perturb: list[torch.Tensor] | None = None,
    ) -> list[torch.Tensor]:
        """Outputs (N, G_l) of every layer.

        ``hard``: one-hot gate choice (inputs must then be binary); ``ties``: flat ``(mask, value)`` over all
        gates, tied gates output their constant; ``perturb``: per-layer (N, G_l) tensors added to the outputs
        (zero-valued, for ``d z / d y`` by autograd).
        """
        outputs, offset = [], 0
        for layer, w in enumerate(self.weights):
            p = nn.functional.one_hot(w.argmax(1), N_GATES).to(w.dtype) if hard else torch.softmax(w, dim=1)
            c = p @ self.coefficients  # (G, 4): multilinear coefficients of the expected gate
            ia, ib = self.wiring(layer)
            a, b = x[:, ia], x[:, ib]
            y = c[:, 0] + c[:, 1] * a + c[:, 2] * b + c[:, 3] * a * b  # relaxed gate, eq. of difflogic
            if ties is not None:
                mask, value = ties[0][offset : offset + w.shape[0]], ties[1][offset : offset + w.shape[0]]
                y = torch.where(mask, value.to(y.dtype), y)
            if perturb is not None:
                y = y + perturb[layer]
            outputs.append(y)
            x, offset = y, offset + w.shape[0]
        return outputs

    def group_sum(self, y: torch.Tensor) -> torch.Tensor:
        """GroupSum readout (N, G_L) -> logits (N, C): per-class block sums / tau."""
        return y.reshape(y.shape[0], self.n_classes, -1).sum(-1) / self.tau

    def forward(self, x: torch.Tensor, hard: bool = False) -> torch.Tensor:
        if x.ndim != 2 or x.shape[1] != self.in_dim:
            raise fail("x", tuple(x.shape), f"a (N, {self.in_dim}) tensor")
        if hard and not ((x == 0) | (x == 1)).all():
            raise fail("x", tuple(x.shape), "binary values in {0, 1} for the hard (discrete) forward")
        return self.group_sum(self.layer_outputs(x, hard)[-1])


def train_network(
    net: LogicNetwork, X: np.ndarray, y: np.ndarray, epochs: int, seed: int, lr: float = 0.01, batch_size: int = 128
) -> list[float]:
    """Adam on the cross-entropy of the relaxed network's logits (difflogic's recipe, lr 0.01); per-epoch losses."""
    X_t = torch.from_numpy(check_binary("X", X).astype(np.float32))
    y_t = torch.from_numpy(check_array("y", y, ndim=1).astype(np.int64))
    if len(X_t) != len(y_t):
        raise fail("y", y_t.shape, f"one label per row of X ({len(X_t)})")
    check_int("epochs", epochs, 1)
    check_int("batch_size", batch_size, 1)
    optimiser = torch.optim.Adam(net.parameters(), lr=check_positive("lr", lr))
    generator = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(epochs):
        order, total = torch.randperm(len(X_t), generator=generator), 0.0
        for start in range(0, len(X_t), batch_size):
            batch = order[start : start + batch_size]
            loss = nn.functional.cross_entropy(net(X_t[batch]), y_t[batch])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += loss.item() * len(batch)
        losses.append(total / len(X_t))
    return losses


@torch.no_grad()
def hard_accuracy(net: LogicNetwork, X: np.ndarray, y: np.ndarray) -> float:
    """Test accuracy of the discretised network (hard forward)."""
    logits = net(torch.from_numpy(check_binary("X", X).astype(np.float32)), hard=True)
    return float((logits.argmax(1).numpy() == np.asarray(y)).mean())
