"""Saliency criteria transferred from pruning to unit tying (the paper's baselines).

Each returns the candidates in tying order (least salient first) and a constant per gate; tying then takes the
shortest prefix that meets the area target (:func:`.method.ties_for_area`), exactly as for the GN ranking.

* magnitude of gate preference: ``max_k softmax(w_g)_k`` (how decided the learned gate distribution is; the
  analogue of weight magnitude), tie the least decided first, constant = the gate's majority output [INF];
* first-order Taylor (Molchanov et al., 2017): ``|mean_x dL/dy_g(x) (c - y_g(x))|`` with L the cross-entropy of
  the labels, ``c`` the constant with the smaller score;
* random: a random order, constant = majority output.
"""

from __future__ import annotations

import numpy as np
import torch
from icml26_shared import check_array, check_int, fail

from .method import multilinear_outputs
from .netlist import Netlist, majority_values
from .network import LogicNetwork, check_binary


def gate_preference(net: LogicNetwork) -> np.ndarray:
    """Flat (n_gates,) ``max_k softmax(w_g)_k`` of every gate."""
    return torch.cat([torch.softmax(w.detach(), 1).max(1).values for w in net.weights]).numpy()


def magnitude_order(netlist: Netlist, preference: np.ndarray, X: np.ndarray, candidates: np.ndarray):
    """Least decided gates first; constants = majority outputs on ``X``."""
    preference = check_array("preference", preference, ndim=1)
    if preference.shape != (netlist.n_gates,):
        raise fail("preference", preference, f"one value per gate ({netlist.n_gates})")
    return candidates[np.argsort(preference[candidates], kind="stable")], majority_values(netlist, X)


def taylor_order(netlist: Netlist, X: np.ndarray, y: np.ndarray, candidates: np.ndarray):
    """First-order Taylor saliency of the label loss, lowest first; constants = argmin of the score."""
    y = check_array("y", y, ndim=1)
    if len(y) != len(check_binary("X", X)):
        raise fail("y", y, f"one label per row of X ({len(X)})")
    outputs, deltas, logits = multilinear_outputs(netlist, X, perturb=True)
    loss = torch.nn.functional.cross_entropy(logits, torch.from_numpy(y.astype(np.int64)), reduction="sum")
    grads = torch.cat(torch.autograd.grad(loss, deltas), dim=1).numpy()  # (N, n_gates) dL/dy_g(x)
    out = torch.cat([o.detach() for o in outputs], dim=1).numpy()
    s = np.stack([np.abs((grads * (c - out)).mean(0)) for c in (0.0, 1.0)], axis=1)
    scores, constants = s.min(1), s.argmin(1).astype(bool)
    return candidates[np.argsort(scores[candidates], kind="stable")], constants


def random_order(netlist: Netlist, X: np.ndarray, candidates: np.ndarray, seed: int):
    """A random order; constants = majority outputs on ``X``."""
    check_int("seed", seed, 0)
    return np.random.default_rng(seed).permutation(candidates), majority_values(netlist, X)
