"""ProMoS: prototype-guided distillation from a frozen GNN teacher into a mixture of students.

Pipeline (paper section 3, defaults from the official code as recorded in the spec):

1. ``align_features``: feature alignment shared by all graphs (from ARC): random projection to 256 when
   the raw dimension is below d, PCA to d, columns ordered by ascending smoothness s_k on the edges.
2. Student input z_v = x_v + r_v with the residual r_v = x_v - mean_{u in N(v)} x_u (MLP-only students).
3. ``MixtureOfStudents``: a shared generalist branch g_v = MLP_g(z_v) + z_v and a personalised branch
   s_v = sum_{e in top-2} p_e MLP_e(z_v) + z_v routed by a linear router.
4. Prototype-guided soft labels q(h)_k = softmax_k(-||h - p_k||^2 / tau) for the adapted teacher
   t^_v = A t_v and each student branch, each branch with its own prototype group initialised by k-means.
5. Loss: KL(q(t^) || q(g)) + KL(q(t^) || q(s)) + lam (VQ_g + VQ_s), VQ with discrepancy-aware weights.
6. Zero-shot score: distillation bias (the two KLs per node) + lam * prototype geometric deviation.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch
import torch.nn.functional as F
from icml26_shared import check_closed_interval, check_int, check_number, check_positive, fail
from torch import nn
from torch_geometric.utils import scatter

from .data import Graph
from .teacher import Teacher, graph_tensors, train_teacher

PROJECTION_DIM = 256  # ARC/ProMoS: Gaussian random projection to 256 columns when raw dim < d
EPS = 1e-8  # the official code's log(p + 1e-8)


def align_features(x: np.ndarray, edge_index: np.ndarray, d: int = 64) -> np.ndarray:
    """Feature alignment (ARC, Liu et al. 2024): raw features (n, f) -> aligned features (n, d).

    PCA to d components (after a random projection to 256 when f < d); min-max scale each column, compute
    s_k = sum_{(i,j) in E} (x~_ik - x~_jk)^2 / |E| and return the unscaled PCA columns by ascending s_k.
    """
    from sklearn.decomposition import PCA
    from sklearn.exceptions import DataDimensionalityWarning
    from sklearn.random_projection import GaussianRandomProjection

    d = check_int("d", d, 1)
    if edge_index.shape[1] == 0:
        raise fail("edge_index", edge_index, "at least one edge (the smoothness s_k divides by |E|)")
    x = np.asarray(x, dtype=np.float64)
    if x.shape[1] < d:  # projecting up to 256 columns is intended (ARC): silence sklearn's warning about it
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DataDimensionalityWarning)
            x = GaussianRandomProjection(n_components=PROJECTION_DIM, random_state=0).fit_transform(x)
    if d > min(x.shape):
        raise fail("d", d, f"at most min(n, features) = {min(x.shape)} for PCA (graph of {len(x)} nodes)")
    z = PCA(n_components=d, random_state=0).fit_transform(x)
    span = z.max(0) - z.min(0)
    z_scaled = (z - z.min(0)) / np.where(span > 0, span, 1.0)  # a constant column has smoothness 0
    src, dst = edge_index
    s = ((z_scaled[src] - z_scaled[dst]) ** 2).sum(0) / edge_index.shape[1]  # smoothness s_k
    return z[:, np.argsort(s, kind="stable")].astype(np.float32)


def align_graph(graph: Graph, d: int = 64) -> Graph:
    """The same graph with ``align_features`` applied to its features."""
    return Graph(align_features(graph.x, graph.edge_index, d), graph.edge_index, graph.y, graph.name)


def residual_features(x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
    """r_v = x_v - mean_{u in N(v)} x_u; an isolated node has neighbour mean 0, so r_v = x_v."""
    neighbour_mean = scatter(x[edge_index[1]], edge_index[0], dim=0, dim_size=x.shape[0], reduce="mean")
    return x - neighbour_mean


class MLP(nn.Module):
    """One student expert: Linear(d, hidden) -> ReLU -> Linear(hidden, d)."""

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class MixtureOfStudents(nn.Module):
    """Generalist branch g (shared MLP) and personalised branch s (top-k routed experts), both residual.

    Input z (n, d) -> (g (n, d), s (n, d) or None when ``num_experts == 0``).
    """

    def __init__(self, dim: int, num_experts: int, top_k: int = 2, hidden: int = 128, dropout: float = 0.1):
        super().__init__()
        if num_experts and not 1 <= top_k <= num_experts:
            raise fail("top_k", top_k, f"an integer in [1, num_experts={num_experts}]")
        self.top_k, self.num_experts = top_k, num_experts
        self.generalist = MLP(dim, hidden)
        self.experts = nn.ModuleList(MLP(dim, hidden) for _ in range(num_experts))
        self.router = nn.Linear(dim, num_experts) if num_experts else None
        self.dropout = nn.Dropout(dropout)

    def forward(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        g = self.generalist(self.dropout(z)) + z  # shared branch, residual
        if self.router is None:
            return g, None
        logits, chosen = torch.topk(self.router(z), self.top_k, dim=1)  # top-k of the router logits
        p = F.softmax(logits, dim=1)  # softmax over the selected logits only
        s = torch.zeros_like(z)
        for e, expert in enumerate(self.experts):
            rows, slot = (chosen == e).nonzero(as_tuple=True)
            if len(rows):
                s.index_add_(0, rows, expert(self.dropout(z[rows])) * p[rows, slot, None])
        return g, s + z


def squared_distances(h: torch.Tensor, P: torch.Tensor) -> torch.Tensor:
    """||h_v - p_k||^2 for all pairs: (n, d), (K, d) -> (n, K)."""
    return (h**2).sum(1, keepdim=True) + (P**2).sum(1) - 2 * h @ P.T


def soft_labels(h: torch.Tensor, P: torch.Tensor, tau: torch.Tensor | float) -> torch.Tensor:
    """q(h)_k = softmax_k(-||h - p_k||^2 / tau): (n, d), (K, d) -> (n, K)."""
    return F.softmax(-squared_distances(h, P) / tau, dim=1)


def kl_per_node(q_teacher: torch.Tensor, q_student: torch.Tensor, log_eps: float = EPS) -> torch.Tensor:
    """KL(q_teacher || q_student) per node (n,), with the official log(q_student + 1e-8)."""
    return F.kl_div(torch.log(q_student + log_eps), q_teacher, reduction="none").sum(1)


def commitment_weights(
    q_teacher: torch.Tensor, P: torch.Tensor, tau, beta: float, mu: float, log_eps: float = EPS
) -> torch.Tensor:
    """Discrepancy-aware weights w_v = sigma(-beta (KL(rho_{p*(v)} || q(t^_v)) - mu)), normalised to sum 1.

    rho_k = softmax(-||p_k - p_.||^2 / tau) is prototype k's structure row; p*(v) = argmax_k q(t^_v)_k.
    A teacher embedding whose soft label disagrees with its prototype's structure commits less.
    The KL takes log(q + log_eps): the default 1e-8 is ours ([INF], as in the distillation KL); the
    official code takes ``sim.log()``, i.e. ``log_eps=0``: where q has an exact zero under rho > 0 the
    discrepancy is inf and w_v = 0 (all nodes so: the weights sum to 0 and the commitment loss vanishes).
    """
    log_eps = check_closed_interval("log_eps", log_eps, 0.0, 1.0)
    rho = soft_labels(P, P, tau)
    nearest = q_teacher.argmax(1)
    discrepancy = kl_per_node(rho[nearest], q_teacher, log_eps).detach()
    w = torch.sigmoid(-beta * (discrepancy - mu))
    return w / (w.sum() + EPS)


class ProMoS:
    """Unsupervised generalist graph anomaly detector: ``fit(sources)`` once, then score unseen graphs.

    Graphs must carry aligned features (``align_graph``). ``personalised=False`` drops the routed experts;
    ``prototypes=False`` replaces prototype soft-label distillation by plain feature MSE to the teacher
    (the two ablations). Higher ``decision_function`` = more anomalous.
    """

    def __init__(
        self,
        dim: int = 64,
        num_experts: int = 20,
        top_k: int = 2,
        num_prototypes: int = 20,
        hidden: int = 128,
        dropout: float = 0.1,
        tau: float = 2.0,
        beta: float = 1.0,
        mu: float = 0.6,
        lam: float = 0.5,
        lr: float = 5e-3,
        proto_lr: float = 5e-3,
        weight_decay: float = 5e-5,
        epochs: int = 10,
        personalised: bool = True,
        prototypes: bool = True,
        teacher_epochs: int = 100,
        seed: int = 0,
        commitment_log_eps: float = EPS,
    ):
        self.dim = check_int("dim", dim, 1)
        self.num_experts = check_int("num_experts", num_experts, 1)
        self.top_k = check_int("top_k", top_k, 1, self.num_experts)
        self.num_prototypes = check_int("num_prototypes", num_prototypes, 1)
        self.hidden, self.dropout = check_int("hidden", hidden, 1), check_number("dropout", dropout)
        self.tau0, self.beta, self.mu = check_positive("tau", tau), check_number("beta", beta), check_number("mu", mu)
        self.lam = check_number("lam", lam)
        self.lr, self.proto_lr = check_positive("lr", lr), check_positive("proto_lr", proto_lr)
        self.weight_decay, self.epochs = check_number("weight_decay", weight_decay), check_int("epochs", epochs, 1)
        self.personalised, self.prototypes = bool(personalised), bool(prototypes)
        self.teacher_epochs, self.seed = check_int("teacher_epochs", teacher_epochs, 1), check_int("seed", seed, 0)
        self.commitment_log_eps = check_closed_interval(
            "commitment_log_eps", commitment_log_eps, 0.0, 1.0
        )  # 0: official
        self.teacher: Teacher | None = None

    # ------------------------------------------------------------------ parameters
    def _build(self, t_sources: torch.Tensor) -> None:
        """Students, adapter A (Linear d -> d), learnable tau, and k-means-initialised prototype groups."""
        self.students = MixtureOfStudents(
            self.dim, self.num_experts if self.personalised else 0, self.top_k, self.hidden, self.dropout
        )
        self.adapter = nn.Linear(self.dim, self.dim)
        self.tau = nn.Parameter(torch.tensor(self.tau0))
        self.groups = nn.ParameterList(self._init_prototypes(t_sources) for _ in range(1 + self.personalised))

    def _init_prototypes(self, t: torch.Tensor) -> nn.Parameter:
        """0.5 normalize(k-means centroids of the source teacher embeddings) + 0.5 normalize(randn)."""
        from sklearn.cluster import KMeans

        if self.num_prototypes > len(t):
            raise fail("num_prototypes", self.num_prototypes, f"at most the {len(t)} source nodes for k-means")
        seed = int(torch.randint(0, 2**31 - 1, ()).item())
        km = KMeans(self.num_prototypes, n_init=1, max_iter=20, random_state=seed).fit(t.numpy())
        centroids = torch.as_tensor(km.cluster_centers_, dtype=torch.float32)
        noise = torch.randn(self.num_prototypes, self.dim)
        return nn.Parameter(0.5 * F.normalize(centroids, dim=1) + 0.5 * F.normalize(noise, dim=1))

    # ------------------------------------------------------------------ forward pieces
    def _branches(self, graph: Graph) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """(t (n, d) raw teacher embeddings, [g, s] student branch outputs) for one graph."""
        if graph.x.shape[1] != self.dim:
            raise fail("graph.x", graph.x, f"{self.dim} feature columns: call align_graph(graph, d={self.dim})")
        x, edge_index = graph_tensors(graph)
        g, s = self.students(x + residual_features(x, edge_index))  # z_v = x_v + r_v
        return self.teacher.embed(graph), [g] if s is None else [g, s]

    def loss(self, graph: Graph) -> torch.Tensor:
        """Training loss on one source graph (eq. of section 3.3; its ablation without prototypes)."""
        t, branches = self._branches(graph)
        if not self.prototypes:  # ablation: feature-level distillation, sum_b ||h_b - t||^2 / d
            return sum(F.mse_loss(h, t) for h in branches)
        t_hat = self.adapter(t)
        total = torch.zeros(())
        for h, P in zip(branches, self.groups, strict=True):
            q_t = soft_labels(t_hat, P, self.tau)
            total = total + kl_per_node(q_t, soft_labels(h, P, self.tau)).mean()  # KL, batchmean
            w = commitment_weights(q_t, P, self.tau, self.beta, self.mu, self.commitment_log_eps)
            p_star = P[q_t.argmax(1)]
            vq = (w * ((p_star - t_hat.detach()) ** 2).sum(1)).sum() + (
                w * ((p_star.detach() - t_hat) ** 2).sum(1)
            ).sum()
            total = total + self.lam * vq  # lam (VQ_g + VQ_s)
        return total

    # ------------------------------------------------------------------ public API
    def fit(self, sources: list[Graph], teacher: Teacher | None = None) -> ProMoS:
        """Train on unlabeled source graphs (labels are never read). A GRACE teacher is trained unless given."""
        if not sources:
            raise fail("sources", sources, "at least one source graph")
        self.teacher = teacher or train_teacher(sources, out_dim=self.dim, epochs=self.teacher_epochs, seed=self.seed)
        torch.manual_seed(self.seed)
        self._build(torch.cat([self.teacher.embed(g) for g in sources]))
        main = [*self.students.parameters(), *self.adapter.parameters(), self.tau]
        optimizer = torch.optim.Adam(
            [{"params": main, "lr": self.lr}, {"params": list(self.groups.parameters()), "lr": self.proto_lr}],
            weight_decay=self.weight_decay,
        )
        self.students.train()
        for _ in range(self.epochs):
            for graph in sources:  # one full-graph step per source graph per epoch
                optimizer.zero_grad()
                self.loss(graph).backward()
                optimizer.step()
        self.students.eval()
        return self

    @torch.no_grad()
    def score_components(self, graph: Graph) -> dict[str, np.ndarray]:
        """The two terms of the zero-shot score, each (n,), summed over the student branches.

        ``distillation_bias``: KL(q(t^_v) || q(h_v)); ``geometric_deviation``: the mean over teacher and
        student of the squared distance to the nearest prototype. The ablation without prototypes has
        only ``distillation_bias`` = the feature MSE to the teacher (and a zero deviation).
        """
        if self.teacher is None:
            raise RuntimeError("ProMoS is not fitted: call fit(sources) before scoring")
        t, branches = self._branches(graph)
        bias, deviation = torch.zeros(len(t)), torch.zeros(len(t))
        if not self.prototypes:
            bias += sum(((h - t) ** 2).mean(1) for h in branches)
        else:
            t_hat = self.adapter(t)
            for h, P in zip(branches, self.groups, strict=True):
                q_t, q_h = soft_labels(t_hat, P, self.tau), soft_labels(h, P, self.tau)
                bias += kl_per_node(q_t, q_h)  # distillation bias
                deviation_t = ((P[q_t.argmax(1)] - t_hat) ** 2).mean(1)  # teacher to its nearest prototype
                deviation_h = ((P[q_h.argmax(1)] - h) ** 2).mean(1)  # student to its own nearest prototype
                deviation += 0.5 * (deviation_t + deviation_h)  # prototype geometric deviation
        return {
            "distillation_bias": bias.numpy().astype(np.float64),
            "geometric_deviation": deviation.numpy().astype(np.float64),
        }

    def decision_function(self, graph: Graph) -> np.ndarray:
        """Zero-shot anomaly scores (n,): distillation bias + lam * prototype geometric deviation."""
        parts = self.score_components(graph)
        return parts["distillation_bias"] + self.lam * parts["geometric_deviation"]
