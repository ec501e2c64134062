"""AI engrams (Kwon et al., ICML 2026): closed-form memory traces of linear layers, erased or composed by arithmetic.

For a linear layer ``y = W x + b`` absorb the bias, ``x~ = [x; 1]`` and ``W~ = [W | b]``. With the uncentered
second moments ``Sigma_S = sum_{x in S} x~ x~^T`` of a target set ``T`` inside a reference (total) set ``U``,

    E(T) = W~ Sigma_T pinv(Sigma_U)                                   (the closed-form engram estimator)

is the minimum-norm solution of ``min_E sum_{x in U} || E x~ - 1[x in T] W~ x~ ||^2``: reactivation and
sufficiency (``E x~ = W~ x~`` on T), specificity (``E x~ = 0`` off T) and necessity (``(W~ - E) x~ = 0`` on T)
as one least-squares inverse problem (our derivation, [INF]; the estimator itself is the paper's and the
official code's). It is also one natural-gradient step of ``1/2 sum_{x in T} ||W~ x~||^2`` under the Fisher
``Sigma_U (x) I`` of the linear-Gaussian layer (``natural_gradient_step`` computes that by brute force).

Statistics are stored as *mean* second moments ``C = Sigma / n`` with their counts (the official layout), so
``E(T) = (n / N) W~ C_T pinv(C_U)``. Every layer uses its own input statistics from the *unedited* network's
forward pass, so the layers are solved independently. Because ``Sigma`` is additive over disjoint sets, the
engram of a union is the sum of the engrams (composition); erasing is ``W~ <- W~ - alpha E``.
"""

from __future__ import annotations

import copy
import math
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import torch
from icml26_shared import check_int, check_number, check_open_interval, fail
from torch import nn

EPS_FP32 = 1.1920928955078125e-07  # the official pinv cut rtol = D * eps(float32), fixed whatever the dtype
SUPPORTED_LAYERS = (nn.Linear,)


def default_rtol(dim: int) -> float:
    """The official relative eigenvalue cut of ``pinv``: ``D * eps_float32`` (a regularisation, not a dtype eps)."""
    return check_int("dim", dim, 1) * EPS_FP32


@dataclass
class Statistics:
    """Per layer: the mean uncentered second moment ``C = (1/n) sum x~ x~^T`` (float64) and the count ``n``.

    ``x~`` is the layer input with a trailing 1 when the layer has a bias (bias absorption).
    """

    cov: dict[str, torch.Tensor] = field(default_factory=dict)
    count: dict[str, int] = field(default_factory=dict)

    def update(self, name: str, x: torch.Tensor) -> None:
        """Streaming mean update with the rows of ``x`` (k, D): ``C <- C + (x^T x - k C) / (n + k)``.

        Out of place, so a matrix that several layers share (``collect_statistics``) is never changed through one.
        """
        x = x.to(torch.float64)
        k = x.shape[0]
        if k == 0:
            return
        if name not in self.cov:
            self.cov[name] = torch.zeros(x.shape[1], x.shape[1], dtype=torch.float64)
            self.count[name] = 0
        self.cov[name] = self.cov[name] + (x.T @ x - k * self.cov[name]) / (self.count[name] + k)
        self.count[name] += k

    def merge(self, other: Statistics) -> Statistics:
        """Statistics of the union of two disjoint sample sets: the count-weighted mean of the moments.

        Layers that share one matrix in both sets share the merged one too.
        """
        if set(self.cov) != set(other.cov):
            raise fail("other", sorted(other.cov), f"statistics of the same layers {sorted(self.cov)}")
        out = Statistics()
        merged: dict[tuple[int, int, int, int], tuple[torch.Tensor, int]] = {}
        for name in self.cov:
            n, m = self.count[name], other.count[name]
            key = (id(self.cov[name]), id(other.cov[name]), n, m)
            if key not in merged:
                merged[key] = ((n * self.cov[name] + m * other.cov[name]) / max(n + m, 1), n + m)
            out.cov[name], out.count[name] = merged[key]
        return out

    def __add__(self, other: Statistics) -> Statistics:
        return self.merge(other)


def supported_layers(model: nn.Module) -> dict[str, nn.Linear]:
    """The layers an engram is defined on: every ``nn.Linear`` of ``model`` by its qualified name."""
    return {name: m for name, m in model.named_modules() if isinstance(m, SUPPORTED_LAYERS)}


def _select_layers(model: nn.Module, layers: Iterable[str] | None) -> dict[str, nn.Linear]:
    found = supported_layers(model)
    if layers is None:
        if not found:
            raise TypeError(f"model: no supported layer found; supported types are {SUPPORTED_LAYERS}")
        return found
    modules = dict(model.named_modules())
    selected = {}
    for name in layers:
        if name not in modules:
            raise fail("layers", name, f"names of the model's modules, e.g. {sorted(found)[:4]}")
        if not isinstance(modules[name], SUPPORTED_LAYERS):
            raise TypeError(
                f"layers={name!r}: {type(modules[name]).__name__} is not supported; supported types are "
                f"{[t.__name__ for t in SUPPORTED_LAYERS]}"
            )
        selected[name] = modules[name]
    return selected


def collect_statistics(
    model: nn.Module,
    inputs: torch.Tensor,
    mask: torch.Tensor | None = None,
    layers: Iterable[str] | None = None,
    batch_size: int = 1024,
) -> Statistics:
    """Input second moments of every supported layer of ``model`` over ``inputs`` (forward passes only).

    ``inputs`` is a batch of model inputs (n, ...). ``mask`` (bool) selects the rows that count: its shape
    is a prefix of ``inputs.shape`` that indexes the layer-input rows, e.g. (n, T) for token ids of a
    language model (the official answer-token masking) or (n,) for a classifier. Layers that read the same
    tensor (q/k/v, gate/up) have identical statistics: the first of them to read it accumulates one matrix and
    the others share it (a fifth less memory on SmolLM2; ``Statistics.merge`` and ``total_pinv`` keep it shared).
    """
    if not isinstance(inputs, torch.Tensor) or inputs.ndim < 1 or inputs.shape[0] == 0:
        raise fail("inputs", getattr(inputs, "shape", inputs), "a non-empty tensor of model inputs (n, ...)")
    check_int("batch_size", batch_size, 1)
    if mask is not None:
        if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
            raise fail("mask", getattr(mask, "dtype", mask), "a bool tensor")
        if tuple(mask.shape) != tuple(inputs.shape[: mask.ndim]) or mask.ndim == 0:
            raise fail("mask", tuple(mask.shape), f"a prefix of the inputs' shape {tuple(inputs.shape)}")
    selected = _select_layers(model, layers)
    stats = Statistics()
    owner: dict[str, str] = {}  # layer -> the first layer that read the same input tensor in a batch (or itself)
    order: dict[str, None] = {}  # layers in the order of their first counted rows: the order of the statistics
    state: dict = {"mask": None, "read": {}}  # read: (id(input), bias?) -> (weakref to it, layer), this batch

    def hook(name: str, module: nn.Linear):
        def pre_hook(_module, args):
            key = (id(args[0]), module.bias is not None)  # x~ differs with and without a bias: no sharing then
            seen = state["read"].get(key)
            first = seen[1] if seen is not None and seen[0]() is args[0] else name
            state["read"][key] = (weakref.ref(args[0]), first)
            if owner.setdefault(name, first) != first:
                raise RuntimeError(
                    f"layer {name}: its input was {owner[name]}'s in an earlier batch and is {first}'s now; statistics "
                    "are shared only between layers that always read the same tensor"
                )
            if first == name:
                x = args[0].reshape(-1, module.in_features)
                if state["mask"] is not None:
                    rows = state["mask"].reshape(-1)
                    if rows.numel() != x.shape[0]:
                        raise fail("mask", tuple(state["mask"].shape), f"one entry per input row of layer {name}")
                    x = x[rows]
                if module.bias is not None:  # bias absorption: x~ = [x; 1]
                    x = torch.cat([x, x.new_ones(x.shape[0], 1)], dim=1)
                stats.update(name, x)
            if first in stats.cov:
                order.setdefault(name)

        return pre_hook

    handles = [m.register_forward_pre_hook(hook(n, m)) for n, m in selected.items()]
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            for start in range(0, inputs.shape[0], batch_size):
                state["mask"] = None if mask is None else mask[start : start + batch_size]
                state["read"] = {}
                model(inputs[start : start + batch_size])
    finally:
        for h in handles:
            h.remove()
        model.train(was_training)
    cov, count = {}, {}
    for name in [*order, *(n for n in selected if n not in order)]:  # layers without counted rows last
        first = owner.get(name, name)
        if first not in stats.cov:  # a fully masked-out set still has (empty) statistics for every layer
            m = selected[first]
            d = m.in_features + (m.bias is not None)
            stats.cov[first] = torch.zeros(d, d, dtype=torch.float64)
            stats.count[first] = 0
        cov[name], count[name] = stats.cov[first], stats.count[first]
    return Statistics(cov, count)


def spectral_pinv(
    cov: torch.Tensor,
    rtol: float | None = None,
    condition_cap: float | None = None,
    rank_fraction: float | None = None,
) -> torch.Tensor:
    """``pinv`` of a symmetric PSD matrix by a float64 ``eigh``: eigenvalues ``<= rtol * lambda_max`` are cut.

    ``rtol`` defaults to ``D * eps_float32`` (official); ``condition_cap`` sets ``rtol = 1 / cap`` instead;
    ``rank_fraction`` keeps at most the top ``ceil(f D)`` eigenpairs.
    """
    if not isinstance(cov, torch.Tensor) or cov.ndim != 2 or cov.shape[0] != cov.shape[1]:
        raise fail("cov", getattr(cov, "shape", cov), "a square matrix (D, D)")
    c = cov.to(torch.float64)
    if not torch.isfinite(c).all():
        raise fail("cov", "non-finite entries", "a finite matrix")
    if not torch.allclose(c, c.T, rtol=1e-6, atol=1e-9 * float(c.abs().max().clamp_min(1e-300))):
        raise fail("cov", "an asymmetric matrix", "a symmetric second-moment matrix")
    d = c.shape[0]
    if condition_cap is not None:
        if rtol is not None:
            raise fail("condition_cap", condition_cap, "None when rtol is given (pass one of them)")
        if check_number("condition_cap", condition_cap) <= 1:
            raise fail("condition_cap", condition_cap, "a condition number cap > 1")
        rtol = 1.0 / condition_cap
    rtol = default_rtol(d) if rtol is None else check_open_interval("rtol", rtol, 0.0, 1.0)
    lam, u = torch.linalg.eigh((c + c.T) / 2)
    lam, u = lam.flip(0), u.flip(1)  # descending
    keep = lam > rtol * lam[0].clamp_min(0)
    if rank_fraction is not None:
        check_open_interval("rank_fraction", rank_fraction, 0.0, 1.0 + 1e-12)
        keep[max(1, math.ceil(rank_fraction * d)) :] = False
    u, lam = u[:, keep], lam[keep]
    return (u / lam) @ u.T


@dataclass
class Engram:
    """Per-layer engram weights ``E`` (out, in) and bias parts (out,) or None: a vector space under + and *."""

    weight: dict[str, torch.Tensor]
    bias: dict[str, torch.Tensor | None]

    def _combine(self, other: Engram, op) -> Engram:
        if not isinstance(other, Engram) or set(other.weight) != set(self.weight):
            raise fail("other", type(other).__name__, f"an Engram over the layers {sorted(self.weight)}")
        bias = {k: None if b is None else op(b, other.bias[k]) for k, b in self.bias.items()}
        return Engram({k: op(w, other.weight[k]) for k, w in self.weight.items()}, bias)

    def __add__(self, other: Engram) -> Engram:
        return self._combine(other, torch.add)

    def __sub__(self, other: Engram) -> Engram:
        return self._combine(other, torch.sub)

    def __mul__(self, alpha: float) -> Engram:
        alpha = check_number("alpha", alpha)
        return Engram(
            {k: alpha * w for k, w in self.weight.items()},
            {k: None if b is None else alpha * b for k, b in self.bias.items()},
        )

    __rmul__ = __mul__

    def augmented(self, name: str) -> torch.Tensor:
        """``[E_W | E_b]`` of layer ``name`` (out, in + 1), or ``E_W`` without a bias."""
        b = self.bias[name]
        return self.weight[name] if b is None else torch.cat([self.weight[name], b[:, None]], dim=1)

    def norms(self) -> dict[str, float]:
        """Frobenius norm of each layer's ``[E_W | E_b]``."""
        return {k: float(torch.linalg.norm(self.augmented(k))) for k in self.weight}


def augmented_weight(layer: nn.Linear) -> torch.Tensor:
    """``W~ = [W | b]`` (out, in + 1) in float64, or ``W`` when the layer has no bias."""
    w = layer.weight.detach().to(torch.float64)
    return w if layer.bias is None else torch.cat([w, layer.bias.detach().to(torch.float64)[:, None]], dim=1)


def total_pinv(
    total: Statistics, rtol: float | None = None, condition_cap: float | None = None, rank_fraction: float | None = None
) -> dict[str, torch.Tensor]:
    """``pinv(C_U)`` of every layer of the total set: the part of ``compute_engrams`` every target set shares.

    Computed once, it serves target sets that arrive one at a time (``compute_engrams(..., pinv=...)``), which
    saves one eigendecomposition per layer and target on a wide model. Layers that share a covariance (see
    ``collect_statistics``) share its pseudo-inverse.
    """
    out, done = {}, {}  # done: id of a covariance -> its pinv, one per matrix that layers share
    for name, c_total in total.cov.items():
        if total.count[name] == 0:
            raise fail("total", f"{name}: 0 samples", "a non-empty total set")
        if id(c_total) not in done:
            done[id(c_total)] = spectral_pinv(c_total, rtol, condition_cap, rank_fraction)
        out[name] = done[id(c_total)]
    return out


def compute_engrams(
    model: nn.Module,
    targets: Mapping[object, Statistics],
    total: Statistics,
    rtol: float | None = None,
    condition_cap: float | None = None,
    rank_fraction: float | None = None,
    pinv: Mapping[str, torch.Tensor] | None = None,
) -> dict[object, Engram]:
    """The engram of every target set against one total set, sharing one ``pinv(C_U)`` per layer.

    Per layer ``E = (n / N) W~ C_T pinv(C_U)`` = ``W~ Sigma_T pinv(Sigma_U)`` (the closed form), split back
    into its weight and bias parts. ``targets`` maps a key (e.g. a class) to that set's statistics. ``pinv``
    (from ``total_pinv``) reuses pseudo-inverses computed before; the cut arguments then belong to that call.
    """
    if not targets:
        raise fail("targets", targets, "at least one target set of statistics")
    layers = supported_layers(model)
    unknown = [k for k in total.cov if k not in layers]
    if unknown:
        raise fail("total", unknown, f"statistics of the model's linear layers {sorted(layers)}")
    for name, c_total in total.cov.items():
        d = augmented_weight(layers[name]).shape[1]
        if tuple(c_total.shape) != (d, d):
            raise fail("total", f"{name}: {tuple(c_total.shape)}", f"a ({d}, {d}) covariance")
    if pinv is None:
        pinv = total_pinv(total, rtol, condition_cap, rank_fraction)
    elif rtol is not None or condition_cap is not None or rank_fraction is not None:
        raise fail("pinv", "given with a cut", "either pinv or rtol/condition_cap/rank_fraction, not both")
    elif set(pinv) != set(total.cov):
        raise fail("pinv", sorted(pinv)[:4], f"one pseudo-inverse per layer of the total set {sorted(total.cov)[:4]}")
    out = {}
    for key, target in targets.items():
        if set(target.cov) != set(total.cov):
            raise fail("targets", f"{key}: {sorted(target.cov)}", f"statistics of the layers {sorted(total.cov)}")
        weight, bias = {}, {}
        for name in total.cov:
            n, n_total = target.count[name], total.count[name]
            if n == 0:
                raise fail("targets", f"{key}: 0 samples in {name}", "a target set with samples")
            if n > n_total:
                raise fail("targets", f"{key}: {n} > {n_total} samples", "a subset of the total set")
            if target.cov[name].shape != total.cov[name].shape:
                raise fail("targets", f"{key}: {tuple(target.cov[name].shape)}", "the total set's covariance shape")
            if not torch.isfinite(target.cov[name]).all():
                raise fail("targets", f"{key}: non-finite statistics in {name}", "finite second moments")
            w = augmented_weight(layers[name])
            e = (n / n_total) * w @ target.cov[name] @ pinv[name]  # E = W~ Sigma_T Sigma_U^+
            has_bias = layers[name].bias is not None
            weight[name] = e[:, :-1] if has_bias else e
            bias[name] = e[:, -1] if has_bias else None
        out[key] = Engram(weight, bias)
    return out


def compute_engram(model: nn.Module, target: Statistics, total: Statistics, **cut) -> Engram:
    """The engram ``W~ Sigma_T pinv(Sigma_U)`` of one target set (see ``compute_engrams``)."""
    return compute_engrams(model, {"target": target}, total, **cut)["target"]


def erase(model: nn.Module, engram: Engram, alpha: float = 1.0) -> nn.Module:
    """A copy of ``model`` with ``W~ <- W~ - alpha E`` in every engram layer (alpha = 1: the paper's pure form).

    A negative alpha strengthens the memory; ``erase(model, E_a + E_b)`` erases two sets at once.
    """
    alpha = check_number("alpha", alpha)
    layers = supported_layers(model)
    missing = [k for k in engram.weight if k not in layers]
    if missing:
        raise fail("engram", missing, f"layers of the model {sorted(layers)}")
    edited = copy.deepcopy(model)
    edited_layers = supported_layers(edited)
    with torch.no_grad():
        for name, e in engram.weight.items():
            layer = edited_layers[name]
            if tuple(e.shape) != tuple(layer.weight.shape) or (engram.bias[name] is None) != (layer.bias is None):
                raise fail(
                    "engram", f"{name}: {tuple(e.shape)}", f"the layer's weight shape {tuple(layer.weight.shape)}"
                )
            layer.weight -= alpha * e.to(layer.weight.dtype)
            if layer.bias is not None:
                layer.bias -= alpha * engram.bias[name].to(layer.bias.dtype)
    return edited


def natural_gradient_step(
    weight: torch.Tensor, target_inputs: torch.Tensor, total_inputs: torch.Tensor, rtol: float | None = None
) -> torch.Tensor:
    """One natural-gradient step (lr 1) on ``L(W) = 1/2 sum_{x in T} ||W x||^2``, by brute force.

    The Euclidean gradient comes from autograd; the Fisher of the linear-Gaussian layer over the total set,
    ``F = sum_{x in U} J_x^T J_x`` with ``J_x = d(W x)/d vec(W)``, from explicit per-sample Jacobians. The
    step ``pinv(F) vec(grad)`` equals the engram ``W Sigma_T pinv(Sigma_U)`` (the paper's interpretation); it
    costs O((out * in)^3), so it is a reference for small layers. Inputs are already bias-augmented.
    """
    if weight.ndim != 2 or target_inputs.ndim != 2 or total_inputs.ndim != 2:
        raise fail("weight", tuple(weight.shape), "a matrix (out, in) with inputs (n, in)")
    for name, x in (("target_inputs", target_inputs), ("total_inputs", total_inputs)):
        if x.shape[1] != weight.shape[1] or x.shape[0] == 0:
            raise fail(name, tuple(x.shape), f"a non-empty (n, {weight.shape[1]}) batch")
    w = weight.detach().to(torch.float64).requires_grad_(True)
    loss = 0.5 * (target_inputs.to(torch.float64) @ w.T).pow(2).sum()
    (grad,) = torch.autograd.grad(loss, w)
    x_total = total_inputs.to(torch.float64)
    jac = torch.func.vmap(torch.func.jacrev(lambda v, x: v.reshape(weight.shape) @ x), in_dims=(None, 0))(
        w.detach().reshape(-1), x_total
    )  # (N, out, out * in)
    fisher = torch.einsum("noi,noj->ij", jac, jac)
    rtol = default_rtol(weight.shape[1]) if rtol is None else rtol  # same relative cut as the engram's pinv
    return (spectral_pinv(fisher, rtol=rtol) @ grad.reshape(-1)).reshape(weight.shape)
