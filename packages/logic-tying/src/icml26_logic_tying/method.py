"""Unit tying (the paper's contribution): force selected gates to constants 0/1 to cut logic area, chosen by a
two-stage algorithm.

Objective, teacher-referenced logit distortion over a calibration set X (N samples) [INF form]::

    D(S) = mean_x || z_T(x) - z_S(x) ||^2                                           (1)

with ``z_T`` the trained discrete network's GroupSum logits (the teacher) and ``z_S`` those with the gates of S
tied to their constants ``c_g``.

Stage (i), Gauss-Newton screening: linearise the logits in each gate's output through the multilinear gate
relaxation evaluated at the discrete point, ``z_S(x) ~ z_T(x) + J_g(x) (c - y_g(x))`` with
``J_g(x) = dz/dy_g (x)``; the Gauss-Newton (J^T J) model of (1) for a single tie is::

    s_g(c) = mean_x ||J_g(x)||^2 (c - y_g(x))^2 ,   c_g = argmin_c s_g(c)              (2)

Gates are ranked by ``s_g(c_g)``; the screen keeps an *overshoot set*: the top ``ceil((1 + rho) K_GN)`` gates,
where ``K_GN`` is the number of GN-ranked ties that meets the area target (high recall).

Stage (ii), finite-difference refinement: the exact ``D`` by discrete (bit-parallel) forward passes. First the
single-tie distortion ``D({g})`` of every overshoot candidate replaces its GN score (approximation error), then a
lazy greedy selection accepts candidates by their exact marginal ``D(S + g) - D(S)`` re-evaluated against the
current tie set (interaction error), until the area target is met or the budget of finite-difference
evaluations (``fd_budget * |overshoot|``) is spent.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np
import torch
from icml26_shared import (
    check_array,
    check_choice,
    check_closed_interval,
    check_int,
    check_number,
    check_positive,
    fail,
)

from .gates import COEFFICIENTS
from .netlist import Netlist, check_ties, evaluate, group_counts, layer_states, lut_count, no_ties, pack, simplify
from .network import check_binary


def multilinear_outputs(
    netlist: Netlist, X: np.ndarray, perturb: bool = False
) -> tuple[list[torch.Tensor], list[torch.Tensor], torch.Tensor]:
    """Discrete forward through the multilinear gates (exact at binary inputs, differentiable):
    ``(outputs per layer (N, G_l), zero perturbations added to them (requires_grad), logits (N, C))``."""
    x = torch.from_numpy(check_binary("X", X).astype(np.float64))
    coefficients = torch.from_numpy(COEFFICIENTS)
    outputs, perturbations = [], []
    for op, ia, ib in zip(netlist.ops, netlist.index_a, netlist.index_b, strict=True):
        c = coefficients[torch.from_numpy(op)]
        a, b = x[:, torch.from_numpy(ia)], x[:, torch.from_numpy(ib)]
        y = c[:, 0] + c[:, 1] * a + c[:, 2] * b + c[:, 3] * a * b
        if perturb:
            delta = torch.zeros_like(y, requires_grad=True)
            perturbations.append(delta)
            y = y + delta
        outputs.append(y)
        x = y
    logits = x.reshape(len(x), netlist.n_classes, -1).sum(-1) / netlist.tau
    return outputs, perturbations, logits


def gauss_newton_scores(netlist: Netlist, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eq. (2): per gate (flat), the GN score ``s_g(c_g)`` and the constant ``c_g`` (bool)."""
    outputs, deltas, logits = multilinear_outputs(netlist, X, perturb=True)
    jj = [torch.zeros_like(d) for d in deltas]  # ||J_g(x)||^2, per sample and gate
    for c in range(netlist.n_classes):
        grads = torch.autograd.grad(logits[:, c].sum(), deltas, retain_graph=c + 1 < netlist.n_classes)
        for acc, g in zip(jj, grads, strict=True):
            acc += g**2
    jj_all = torch.cat(jj, dim=1).numpy()
    y = torch.cat([o.detach() for o in outputs], dim=1).numpy()
    s = np.stack([(jj_all * (c - y) ** 2).mean(0) for c in (0.0, 1.0)], axis=1)  # (n_gates, 2)
    return s.min(1), s.argmin(1).astype(bool)


def candidate_gates(netlist: Netlist) -> np.ndarray:
    """Flat indices of the gates worth tying: in the fan-in cone of the outputs and not already constant."""
    simple = simplify(netlist)
    reach = [np.zeros(w, dtype=bool) for w in netlist.widths]
    reach[-1][:] = True
    for layer in range(len(netlist.widths) - 1, 0, -1):
        reach[layer - 1][netlist.index_a[layer][reach[layer]]] = True
        reach[layer - 1][netlist.index_b[layer][reach[layer]]] = True
    not_constant = simple.kind[netlist.n_inputs :] != 0
    return np.flatnonzero(np.concatenate(reach) & not_constant)


class Calibration:
    """The teacher on a calibration set: bit-packed states and logits, and exact distortion (1) of tie sets."""

    def __init__(self, netlist: Netlist, X: np.ndarray):
        self.netlist, self.n = netlist, len(check_binary("X", X))
        if X.shape[1] != netlist.n_inputs:
            raise fail("X", X.shape, f"{netlist.n_inputs} input bits per row")
        self.words = pack(X)
        self.teacher_states = layer_states(netlist, self.words)
        self.teacher_counts = group_counts(netlist, self.teacher_states[-1], self.n)
        self.evaluations = 0  # finite-difference evaluations (discrete forward passes) so far

    def distortion_of_states(self, states: list[np.ndarray]) -> float:
        diff = group_counts(self.netlist, states[-1], self.n) - self.teacher_counts
        return float((diff**2).sum(1).mean()) / self.netlist.tau**2  # eq. (1)

    def distortion(self, ties, start: int = 0, states: list[np.ndarray] | None = None) -> tuple[float, list]:
        """Eq. (1) of ``ties``, recomputing layers from ``start`` on (``states`` must agree before it)."""
        self.evaluations += 1
        new = layer_states(self.netlist, self.words, ties, start, states if start else None)
        return self.distortion_of_states(new), new


AREA_MEASURES = ("gates", "luts")


def area_of(netlist: Netlist, ties=None, measure: str = "gates", k: int = 6) -> int:
    """Area after simplification: live 2-input gates (``"gates"``) or the k-LUT estimate (``"luts"``)."""
    check_choice("measure", measure, AREA_MEASURES)
    simple = simplify(netlist, ties)
    return simple.area if measure == "gates" else lut_count(simple, k)


def _prefix_ties(n_gates: int, order: np.ndarray, constants: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    mask, value = np.zeros(n_gates, dtype=bool), np.zeros(n_gates, dtype=bool)
    mask[order[:k]] = True
    value[order[:k]] = constants[order[:k]]
    return mask, value


def ties_for_area(
    netlist: Netlist, order: np.ndarray, constants: np.ndarray, target_area: int, measure: str = "gates", k: int = 6
):
    """A prefix of ``order`` whose ties bring the simplified area to ``<= target_area``, found by bisection:
    the shortest one where the area is non-increasing in the prefix length, which holds except for rare
    reconvergent cases (a tie can turn ``XOR(x, NOT x) = 1`` into ``NOT x`` and revive x's cone).
    ``(ties, k)``; all of ``order`` if even that misses the target."""
    check_int("target_area", target_area, 0)
    lo, hi = 0, len(order)
    while lo < hi:
        mid = (lo + hi) // 2
        if area_of(netlist, _prefix_ties(netlist.n_gates, order, constants, mid), measure, k) <= target_area:
            hi = mid
        else:
            lo = mid + 1
    return _prefix_ties(netlist.n_gates, order, constants, lo), lo


@dataclass
class TyingResult:
    """Ties chosen by a method, with the bookkeeping the experiment reports."""

    ties: tuple[np.ndarray, np.ndarray]
    n_ties: int
    overshoot: int = 0
    evaluations: int = 0
    order: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def gauss_newton_order(netlist: Netlist, X: np.ndarray, candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Candidates sorted by eq. (2), and the per-gate constants ``c_g`` (flat)."""
    scores, constants = gauss_newton_scores(netlist, X)
    return candidates[np.argsort(scores[candidates], kind="stable")], constants


def unit_tying(
    netlist: Netlist,
    X_calibration: np.ndarray,
    target_area: int,
    rho: float = 0.5,
    fd_budget: float = 2.0,
    refine: bool = True,
    candidates: np.ndarray | None = None,
    singles: dict[int, float] | None = None,
    screening: tuple[np.ndarray, np.ndarray] | None = None,
    measure: str = "gates",
    k: int = 6,
) -> TyingResult:
    """Two-stage unit tying to an area budget: GN screening (2) -> overshoot set -> FD refinement on (1).

    ``rho`` (>= 0) sizes the overshoot set; ``fd_budget`` caps the finite-difference evaluations at
    ``fd_budget * |overshoot|``; ``refine=False`` is the GN-only ablation. ``candidates`` (default
    :func:`candidate_gates`) are the gates that may be tied; ``screening`` = ``gauss_newton_order(...)`` reuses a
    screen across targets, and ``singles`` caches ``D({g})`` across calls on the same calibration set (neither
    depends on the target). ``measure``/``k``: the area the target counts (:func:`area_of`).
    """
    X_calibration = check_binary("X_calibration", X_calibration)
    check_int("target_area", target_area, 0)
    if check_number("rho", rho) < 0:
        raise fail("rho", rho, "an overshoot factor >= 0")
    check_positive("fd_budget", fd_budget)
    if screening is None:
        candidates = candidate_gates(netlist) if candidates is None else np.asarray(candidates)
        screening = gauss_newton_order(netlist, X_calibration, candidates)
    order, constants = screening
    ties, k_gn = ties_for_area(netlist, order, constants, target_area, measure, k)
    if not refine:
        return TyingResult(ties, k_gn, order=order[:k_gn])
    overshoot = order[: min(len(order), math.ceil((1 + rho) * k_gn))]
    calibration = Calibration(netlist, X_calibration)
    accepted = refine_overshoot(calibration, overshoot, constants, target_area, fd_budget, singles, measure, k)
    rest = order[~np.isin(order, accepted)]  # if the overshoot set cannot reach the target: GN order after it
    full = np.concatenate([accepted, rest])
    ties, n_ties = ties_for_area(netlist, full, constants, target_area, measure, k)
    return TyingResult(ties, n_ties, len(overshoot), calibration.evaluations, full[:n_ties])


def refine_overshoot(
    calibration: Calibration,
    overshoot: np.ndarray,
    constants: np.ndarray,
    target_area: int,
    fd_budget: float = 2.0,
    singles: dict[int, float] | None = None,
    measure: str = "gates",
    k: int = 6,
    check_every: int = 8,
) -> np.ndarray:
    """Stage (ii): the overshoot candidates in the order a lazy greedy on the exact distortion (1) accepts them.

    Estimates start at the exact single-tie ``D({g})`` (cached in ``singles``); the lowest estimate is
    re-evaluated as a marginal against the current tie set unless it is already current, then accepted.
    Stops when the area target is met (checked every ``check_every`` acceptances) or, once the evaluation budget
    is spent, accepts the rest by their latest estimates.
    """
    netlist = calibration.netlist
    layers = netlist.layer_of(overshoot)
    budget = math.ceil(fd_budget * len(overshoot))
    singles = {} if singles is None else singles
    start_evals = calibration.evaluations
    teacher = calibration.teacher_states
    heap = []
    for gate, layer in zip(overshoot.tolist(), layers.tolist(), strict=True):
        if gate not in singles:
            mask, value = no_ties(netlist)
            mask[gate], value[gate] = True, constants[gate]
            singles[gate] = calibration.distortion((mask, value), layer, teacher)[0]
        heap.append((singles[gate], gate, layer, 0))
    heapq.heapify(heap)
    mask, value = no_ties(netlist)
    states, d_current, accepted = teacher, 0.0, []
    while heap:
        _estimate, gate, layer, stamp = heapq.heappop(heap)
        within_budget = calibration.evaluations - start_evals < budget
        if stamp != len(accepted) and within_budget:  # stale: re-evaluate the marginal against the current set
            mask[gate], value[gate] = True, constants[gate]
            d_new, _ = calibration.distortion((mask, value), layer, states)
            mask[gate] = False
            heapq.heappush(heap, (d_new - d_current, gate, layer, len(accepted)))
            continue
        mask[gate], value[gate] = True, constants[gate]
        accepted.append(gate)
        d_current, states = calibration.distortion((mask, value), layer, states)
        calibration.evaluations -= 1  # the accepted set's own state update is bookkeeping, not a probe
        if len(accepted) % check_every == 0 and area_of(netlist, (mask, value), measure, k) <= target_area:
            break
    return np.asarray(accepted, dtype=np.int64)


def tie_accuracy(netlist: Netlist, X: np.ndarray, y: np.ndarray, ties=None) -> float:
    """Accuracy of the tied netlist (argmax of the GroupSum counts; ties broken by the lowest class)."""
    y = check_array("y", y, ndim=1)
    return float((evaluate(netlist, X, check_ties(netlist, ties)).argmax(1) == y).mean())


def area_target(netlist: Netlist, reduction: float, measure: str = "gates", k: int = 6) -> int:
    """The area (:func:`area_of`) left after cutting the untied netlist's area by ``reduction`` in [0, 1]."""
    check_closed_interval("reduction", reduction, 0.0, 1.0)
    return math.floor((1 - reduction) * area_of(netlist, None, measure, k))


__all__ = [
    "Calibration",
    "TyingResult",
    "area_of",
    "area_target",
    "candidate_gates",
    "gauss_newton_order",
    "gauss_newton_scores",
    "multilinear_outputs",
    "refine_overshoot",
    "tie_accuracy",
    "ties_for_area",
    "unit_tying",
]
