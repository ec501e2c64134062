"""SPD-valued sheaves on graphs: restriction maps, coboundary, sheaf Laplacian, SPD sheaf convolution and stream.

Notation (per directed edge k = (u -> v) of an undirected graph stored in both directions):
``F_{v<e}`` is the restriction map from the stalk of v to the stalk of the edge e = {u, v}.

SPD stalks use the Log-Euclidean group (``spd.py``). A restriction map must be a group homomorphism
of (SPD(n), (.)); every ``F(X) = expm(W logm(X) W^T)`` is one, since ``logm`` turns (.) into + and
``L -> W L W^T`` is linear [INF, ours: the paper's map family is not public]. So every sheaf operator
is carried out in log coordinates ``L = logm X`` and stays well-posed on SPD:

* coboundary  ``(dX)_e = F_{v<e} X_v (.) (F_{u<e} X_u)^{-1}``  ->  ``W_v L_v W_v^T - W_u L_u W_u^T``   (eq. C)
* Laplacian   ``(Delta L)_v = sum_{e ni v} F*_{v<e} (dL)_e`` with ``F*(M) = W^T M W``              (eq. Lap)
* global sections ``dX = I``  <=>  ``L`` in ker Delta.

The convolution diffuses with the degree-normalised ``D^{-1/2} Delta D^{-1/2}`` by default (NSD's
choice; the paper's is not public [INF]). Its kernel is ``D^{1/2} ker Delta``: the fixed points of the
diffusion are degree-rescaled global sections, so a global section itself moves wherever degrees
differ (by up to 0.21 of a unit log-eigenvalue at alpha = 0.5 on a 3-atom path, identity maps, equal stalks).
``normalise=False`` diffuses with ``Delta`` itself, whose fixed points are exactly the global sections.

The same two functions serve vector stalks (Neural Sheaf Diffusion, ``baselines.py``) through the
``act``/``adjoint`` arguments, so the Euclidean baseline differs from the method only in its stalks.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from icml26_shared import check_choice, check_int, check_positive, fail
from torch import nn

from .spd import direction_log_features, log_reeig, sym

MAP_KINDS = ("orthogonal", "general", "identity")


# --- graphs ----------------------------------------------------------------------------------------------


def check_graph(edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """Validate an undirected graph stored in both directions; return the index of each reverse edge.

    ``edge_index`` (2, E) of node ids in [0, num_nodes); every edge (u, v) must have its reverse (v, u),
    and self-loops are refused (a sheaf restriction map needs two distinct ends).
    """
    num_nodes = check_int("num_nodes", num_nodes, 1)
    if not isinstance(edge_index, torch.Tensor) or edge_index.ndim != 2 or edge_index.shape[0] != 2:
        raise fail("edge_index", getattr(edge_index, "shape", edge_index), "a (2, E) integer tensor")
    if edge_index.dtype not in (torch.int32, torch.int64):
        raise fail("edge_index", edge_index.dtype, "an integer tensor")
    if edge_index.numel() and (edge_index.min() < 0 or edge_index.max() >= num_nodes):
        bad = (int(edge_index.min()), int(edge_index.max()))
        raise fail("edge_index", bad, f"node ids in [0, {num_nodes}) (num_nodes={num_nodes})")
    src, dst = edge_index.long()
    if bool((src == dst).any()):
        raise fail("edge_index", "self-loop", "no self-loops")
    key, reverse_key = src * num_nodes + dst, dst * num_nodes + src
    order = torch.argsort(key)
    pos = torch.searchsorted(key[order], reverse_key).clamp_max(max(len(key) - 1, 0))
    if len(key) and not bool((key[order][pos] == reverse_key).all()):
        raise fail("edge_index", "a directed edge", "every edge (u, v) together with its reverse (v, u)")
    return order[pos]


def check_batch(data) -> torch.Tensor:
    """Validate a (batched) torch_geometric graph with ``x``, ``edge_index`` and ``direction``; return reverse edges."""
    if data.num_nodes is None or data.num_nodes < 1:
        raise fail("num_nodes", data.num_nodes, "a graph with at least one node")
    for name in ("x", "direction"):
        value = getattr(data, name, None)
        if value is not None and not bool(torch.isfinite(value).all()):
            raise fail(name, tuple(value.shape), "finite values (found NaN or inf)")
    reverse = check_graph(data.edge_index, data.num_nodes)
    direction = getattr(data, "direction", None)
    if direction is not None and direction.shape != (data.edge_index.shape[1], 3):
        raise fail(
            "direction", tuple(direction.shape), f"one 3-D unit vector per edge: ({data.edge_index.shape[1]}, 3)"
        )
    return reverse


def degrees(edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """Number of incoming edges per node (= degree of the undirected graph), as float."""
    return torch.zeros(num_nodes).index_add_(0, edge_index[1], torch.ones(edge_index.shape[1]))


def _sum_at_nodes(values: torch.Tensor, index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """Scatter-sum per-edge ``values`` (E, ...) onto their target nodes -> (num_nodes, ...)."""
    return values.new_zeros((num_nodes, *values.shape[1:])).index_add_(0, index, values)


# --- the two stalk types ---------------------------------------------------------------------------------

Action = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def spd_act(w: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """Restriction map on log coordinates ``L -> W L W^T``; w (E, n, n), s (E, C, n, n)."""
    w = w.unsqueeze(1)
    return w @ s @ w.transpose(-1, -2)


def spd_adjoint(w: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """Adjoint for the Frobenius inner product: ``M -> W^T M W``."""
    w = w.unsqueeze(1)
    return w.transpose(-1, -2) @ s @ w


def vector_act(w: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Restriction map on vector stalks ``x -> W x``; w (E, n, n), x (E, n, C)."""
    return w @ x


def vector_adjoint(w: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Adjoint ``y -> W^T y``."""
    return w.transpose(-1, -2) @ y


# --- sheaf operators -------------------------------------------------------------------------------------


def coboundary(
    x: torch.Tensor, edge_index: torch.Tensor, reverse: torch.Tensor, maps: torch.Tensor, act: Action = spd_act
) -> torch.Tensor:
    """eq. (C): ``(dx)_k = F_{v<e} x_v - F_{u<e} x_u`` for every directed edge k = (u -> v); (E, ...).

    ``maps[k]`` is ``F_{v<e}`` for the head v of edge k; ``maps[reverse[k]]`` is ``F_{u<e}``.
    On SPD stalks (log coordinates) this is ``logm(F X_v (.) (F X_u)^{-1})``.
    """
    src, dst = edge_index
    return act(maps, x[dst]) - act(maps[reverse], x[src])


def sheaf_laplacian(
    x: torch.Tensor,
    edge_index: torch.Tensor,
    reverse: torch.Tensor,
    maps: torch.Tensor,
    act: Action = spd_act,
    adjoint: Action = spd_adjoint,
    normalise: bool = True,
    orthogonal: bool = False,
) -> torch.Tensor:
    """eq. (Lap): ``(Delta x)_v = sum_{k=(u->v)} F*_{v<e} (F_{v<e} x_v - F_{u<e} x_u)``.

    With ``normalise`` the degree-normalised ``D^{-1/2} Delta D^{-1/2}`` (D = node degrees; for
    orthogonal maps this is NSD's normalisation, spectrum in [0, 2]). ``orthogonal=True`` promises
    ``W^T W = I`` and uses the equal, cheaper transport form ``x_v - (W_v^T W_u) . x_u`` (one map
    application per edge instead of three).
    """
    num_nodes = x.shape[0]
    if normalise:
        inv_sqrt = degrees(edge_index, num_nodes).clamp_min(1.0).rsqrt().to(x.dtype)
        x = x * inv_sqrt.view(-1, *([1] * (x.ndim - 1)))
    if orthogonal:
        src, dst = edge_index
        terms = x[dst] - act(maps.transpose(-1, -2) @ maps[reverse], x[src])
    else:
        terms = adjoint(maps, coboundary(x, edge_index, reverse, maps, act))
    out = _sum_at_nodes(terms, edge_index[1], num_nodes)
    if normalise:
        out = out * inv_sqrt.view(-1, *([1] * (x.ndim - 1)))
    return out


def dirichlet_energy(
    x: torch.Tensor, edge_index: torch.Tensor, reverse: torch.Tensor, maps: torch.Tensor, act: Action = spd_act
) -> torch.Tensor:
    """Sheaf Dirichlet energy ``sum_e ||(dx)_e||^2`` (each undirected edge once; Log-Euclidean on SPD)."""
    return 0.5 * coboundary(x, edge_index, reverse, maps, act).pow(2).sum()


def lift_edge_features(
    edge_values: torch.Tensor, edge_index: torch.Tensor, maps: torch.Tensor, num_nodes: int, adjoint: Action
) -> torch.Tensor:
    """Edge stalks -> vertex stalks by the adjoint restriction maps, averaged: ``mean_{e ni v} F*_{v<e} y_e``.

    This is the degree-normalised co-chain map ``d^T`` applied to an edge co-chain; on SPD stalks it is
    the Log-Euclidean mean of the transported edge matrices.
    """
    summed = _sum_at_nodes(adjoint(maps, edge_values), edge_index[1], num_nodes)
    deg = degrees(edge_index, num_nodes).clamp_min(1.0).to(summed.dtype)
    return summed / deg.view(-1, *([1] * (summed.ndim - 1)))


# --- learned restriction maps ----------------------------------------------------------------------------


class RestrictionMaps(nn.Module):
    """``F_{v<e} = Phi([h_v ; h_u])`` as in NSD: one n x n matrix per directed edge, from both endpoints.

    ``orthogonal``: ``W = expm(A - A^T)`` (a rotation); ``general``: ``W = I + tanh(V [h_v; h_u])``;
    ``identity``: ``W = I`` (the "no sheaf maps" ablation: plain graph diffusion of the stalks).
    """

    def __init__(self, features: int, n: int = 3, kind: str = "orthogonal"):
        super().__init__()
        self.kind, self.n = check_choice("maps", kind, MAP_KINDS), check_int("n", n, 1)
        out = 3 if (kind, n) == ("orthogonal", 3) else n * n  # so(3) has 3 coordinates
        self.linear = None if kind == "identity" else nn.Linear(2 * check_int("features", features, 1), out)

    def forward(self, h: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        eye = torch.eye(self.n, dtype=h.dtype)
        if self.linear is None:
            return eye.expand(edge_index.shape[1], self.n, self.n)
        src, dst = edge_index
        a = self.linear(torch.cat([h[dst], h[src]], dim=-1))
        if self.kind == "orthogonal" and self.n == 3:
            return rodrigues(a)
        a = a.view(-1, self.n, self.n)
        if self.kind == "orthogonal":
            return torch.linalg.matrix_exp(a - a.transpose(-1, -2))
        return eye + torch.tanh(a)


def rodrigues(a: torch.Tensor) -> torch.Tensor:
    """``expm([a]_x)`` for axis-angle vectors a (E, 3): ``I + sinc(t) K + (1 - cos t)/t^2 K^2``, t = |a|.

    The closed form of the rotation generated by the skew matrix K = [a]_x (cheaper than a batched
    ``matrix_exp`` for 3 x 3 maps, and smooth at t = 0).
    """
    zero = torch.zeros_like(a[:, 0])
    k = torch.stack(
        [
            torch.stack([zero, -a[:, 2], a[:, 1]], -1),
            torch.stack([a[:, 2], zero, -a[:, 0]], -1),
            torch.stack([-a[:, 1], a[:, 0], zero], -1),
        ],
        -2,
    )
    t = a.pow(2).sum(-1).add(1e-24).sqrt()
    first = torch.sinc(t / torch.pi).view(-1, 1, 1)
    second = (0.5 * torch.sinc(t / (2 * torch.pi)).pow(2)).view(-1, 1, 1)
    return torch.eye(3, dtype=a.dtype) + first * k + second * (k @ k)


# --- the SPD sheaf convolution ---------------------------------------------------------------------------


class SPDSheafConv(nn.Module):
    """One sheaf convolution on SPD stalks, in log coordinates ``L = logm X`` (C channels of n x n).

    eq. (D)  diffusion:   ``L~ = L - alpha Delta_F L``     (a Log-Euclidean step ``X (.) (Delta X)^{-alpha}``)
    eq. (M)  mixing:      ``L^_c' = sum_c Theta_{c'c} L~_c + B_c'``  (weighted LE mean, translated by expm B)
    eq. (R)  ReEig:       ``X' = U max(Lambda, eps) U^T``  (SPD-preserving nonlinearity)
    [INF, ours] the order of the three steps and the parametrisation (NSD-style diffusion + SPDNet ReEig).
    ``normalise`` (default, NSD's choice) diffuses with ``D^{-1/2} Delta D^{-1/2}``, whose fixed points are
    the degree-rescaled global sections ``D^{1/2} L``; ``normalise=False`` uses ``Delta``, whose fixed
    points are exactly the global sections.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        features: int,
        n: int = 3,
        maps: str = "orthogonal",
        reeig_eps: float = 1e-4,
        normalise: bool = True,
    ):
        super().__init__()
        check_int("in_channels", in_channels, 1), check_int("out_channels", out_channels, 1)
        if not isinstance(normalise, bool):
            raise fail("normalise", normalise, "a bool (True: degree-normalised Laplacian, False: Delta itself)")
        self.normalise = normalise
        self.reeig_eps = check_positive("reeig_eps", reeig_eps)
        self.maps = RestrictionMaps(features, n, maps)
        self.alpha_logit = nn.Parameter(torch.zeros(()))  # alpha = sigmoid(0) = 0.5 at init
        self.theta = nn.Parameter(torch.eye(out_channels, in_channels) + 0.1 * torch.randn(out_channels, in_channels))
        self.bias = nn.Parameter(torch.zeros(out_channels, n, n))

    def linear_part(
        self, s: torch.Tensor, h: torch.Tensor, edge_index: torch.Tensor, reverse: torch.Tensor
    ) -> torch.Tensor:
        """eqs. (D) and (M): the affine sheaf operator in log coordinates, before the nonlinearity."""
        maps = self.maps(h, edge_index)
        orthogonal = self.maps.kind != "general"  # rotations and identities: the transport form applies
        laplacian = sheaf_laplacian(s, edge_index, reverse, maps, normalise=self.normalise, orthogonal=orthogonal)
        diffused = s - torch.sigmoid(self.alpha_logit) * laplacian
        return torch.einsum("oc,ncij->noij", self.theta, diffused) + sym(self.bias)

    def forward(self, s: torch.Tensor, h: torch.Tensor, edge_index: torch.Tensor, reverse: torch.Tensor):
        """(N, C_in, n, n) log-features, (N, F) Euclidean features -> (N, C_out, n, n) log-features."""
        return log_reeig(self.linear_part(s, h, edge_index, reverse), self.reeig_eps)


class SPDStream(nn.Module):
    """The SPD stream: lift rank-1 bond matrices to the atoms (adjoint maps), then ``depth`` sheaf convolutions.

    ``h_layers[l]`` are the Euclidean features that parametrise the restriction maps of layer l (the
    coupling between the two streams, [INF, ours]).
    """

    def __init__(
        self,
        features: int,
        channels: int,
        depth: int,
        n: int = 3,
        maps: str = "orthogonal",
        eps=1e-4,
        normalise: bool = True,
    ):
        super().__init__()
        self.eps = check_positive("eps", eps)
        self.lift_maps = RestrictionMaps(features, n, maps)
        self.convs = nn.ModuleList(
            SPDSheafConv(1 if i == 0 else channels, channels, features, n, maps, normalise=normalise)
            for i in range(depth)
        )

    def lift(self, directions: torch.Tensor, h: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        """Rank-1 inputs ``logm(d d^T + eps I)`` on the edges -> one log-channel per node (N, 1, n, n).

        The inputs are first translated to unit determinant, ``X / det(X)^{1/n}`` (a Log-Euclidean
        product with a scalar matrix: the trace of ``logm X`` is removed), so that the log-eigenvalues
        are centred and ReEig's floor does not clip the signal at initialisation [INF, ours]. The
        condition number, hence the rank-lifting measurement, is unchanged.
        """
        edge_logs = direction_log_features(directions, self.eps)
        n = edge_logs.shape[-1]
        trace = torch.diagonal(edge_logs, dim1=-2, dim2=-1).sum(-1)
        edge_logs = (edge_logs - (trace / n)[:, None, None] * torch.eye(n, dtype=edge_logs.dtype)).unsqueeze(1)
        maps = self.lift_maps(h, edge_index)
        return lift_edge_features(edge_logs, edge_index, maps, h.shape[0], spd_adjoint)

    def forward(self, directions, h_layers, edge_index, reverse) -> torch.Tensor:
        s = self.lift(directions, h_layers[0], edge_index)
        for conv, h in zip(self.convs, h_layers[1:], strict=True):
            s = conv(s, h, edge_index, reverse)
        return s


def spd_readout(s: torch.Tensor, batch: torch.Tensor, num_graphs: int) -> torch.Tensor:
    """Rotation-invariant graph readout of log-features s (N, C, n, n) -> (G, 2 C n) [INF, ours].

    Per channel: the log-eigenvalues of the graph's Log-Euclidean mean ``expm(mean_v logm X_v)`` and the
    mean over nodes of each node's sorted log-eigenvalues. Both are unchanged when every stalk is
    rotated, ``X -> R X R^T``, as molecular properties are.
    """
    counts = torch.zeros(num_graphs, dtype=s.dtype).index_add_(0, batch, torch.ones_like(batch, dtype=s.dtype))
    counts = counts.clamp_min(1.0).view(-1, 1, 1, 1)
    log_mean = _sum_at_nodes(s, batch, num_graphs) / counts
    node_eig = _sum_at_nodes(torch.linalg.eigvalsh(sym(s)), batch, num_graphs) / counts[..., 0]
    return torch.cat([torch.linalg.eigvalsh(sym(log_mean)).flatten(1), node_eig.flatten(1)], dim=-1)


def log10_condition(s: torch.Tensor) -> torch.Tensor:
    """log10 of the condition number ``lambda_max / lambda_min`` of ``expm(s)`` for log-features s (..., n, n)."""
    eig = torch.linalg.eigvalsh(sym(s))
    return (eig[..., -1] - eig[..., 0]) / np.log(10.0)


def rank_lift_stats(before: torch.Tensor, after: torch.Tensor, ratio: float = 1e-3) -> dict[str, float]:
    """Numerical rank of SPD features (log coordinates, (..., n, n)) before and after a convolution.

    A matrix counts as full rank when ``lambda_min / lambda_max > ratio``. Returns the fraction of
    ``after`` matrices that are full rank and the mean log10 condition numbers of both sets.
    """
    check_positive("ratio", ratio)
    cond_before, cond_after = log10_condition(before), log10_condition(after)
    return {
        "full_fraction": float((cond_after < -np.log10(ratio)).float().mean()),
        "log10_cond_before": float(cond_before.mean()),
        "log10_cond_after": float(cond_after.mean()),
    }
