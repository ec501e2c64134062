"""Online matching via coarsening (Zilberstein, Anagnostides et al., ICML 2026): the paper's contribution.

Offline nodes U (waitlisted patients) are aggregated into capacitated clusters C_1..C_m with capacities
b_j = |C_j| and representative weights w̄(j, t) for every arrival type t; the fluid LP on the coarse graph plans
how many type-t arrivals each cluster receives; online, an arrival of type t is routed to cluster j with probability
x_jt / λ_t, admitted under a capacity-aware threshold (the γ-conservative "magician" of Alaei, Hajiaghayi and
Liaghat, γ_b = 1 - 1/sqrt(b + 3)), and given to the best available patient inside the cluster.

The published text gives the construction and the guarantee's shape (it degrades with the intra-cluster error
δ(b) and improves with b); the concrete choices below are ours where marked [INF] (see the README).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icml26_shared import check_array, check_int, fail
from scipy.optimize import linprog
from scipy.sparse import coo_matrix, vstack
from sklearn.cluster import KMeans


def check_weights(name: str, w: np.ndarray, ndim: int = 2) -> np.ndarray:
    """Weights must be finite and non-negative (``w = 0`` encodes a missing edge)."""
    w = check_array(name, w, ndim=ndim).astype(float)
    if (w < 0).any():
        raise fail(name, w, "non-negative weights (0 = no edge)")
    return w


def check_probabilities(name: str, p: np.ndarray, size: int) -> np.ndarray:
    """A probability vector of length ``size``."""
    p = check_array(name, p, ndim=1).astype(float)
    if p.shape != (size,) or (p < 0).any() or not np.isclose(p.sum(), 1.0):
        raise fail(name, p, f"{size} non-negative probabilities summing to 1")
    return p


@dataclass(frozen=True)
class Coarsening:
    """Capacitated clusters of the offline nodes.

    labels (n,): cluster of each node; b (m,): capacities b_j = |C_j|; w_bar (m, K): representative weights;
    delta: max intra-cluster error max_{j,t,u in C_j} |w(u,t) - w̄(j,t)|; delta_mean: its p-weighted mean over (u, t).
    """

    labels: np.ndarray
    b: np.ndarray
    w_bar: np.ndarray
    delta: float
    delta_mean: float

    @property
    def m(self) -> int:
        return len(self.b)


def representative(w: np.ndarray, labels: np.ndarray, p: np.ndarray) -> Coarsening:
    """Capacities, representative weights w̄(j,t) = mean_{u in C_j} w(u,t) and intra-cluster errors of a partition."""
    labels = np.unique(labels, return_inverse=True)[1]  # consecutive cluster ids 0..m-1
    m = labels.max() + 1
    b = np.bincount(labels, minlength=m)
    w_bar = np.zeros((m, w.shape[1]))
    np.add.at(w_bar, labels, w)
    w_bar /= b[:, None]
    err = np.abs(w - w_bar[labels])  # |w(u,t) - w̄(j(u),t)|
    return Coarsening(labels=labels, b=b, w_bar=w_bar, delta=float(err.max()), delta_mean=float((err @ p).mean()))


def coarsen(w: np.ndarray, m: int, p: np.ndarray, seed: int = 0) -> Coarsening:
    """Partition the n offline nodes into ``m`` capacitated clusters.

    w (n, K): weight profile w(u, t) of every offline node against every arrival type; p (K,): type frequencies.
    [INF] Clusters are k-means on the profiles scaled by sqrt(p_t), so k-means minimises the p-weighted squared
    intra-cluster error; ``m = n`` is the uncoarsened instance (singletons, b_j = 1).
    """
    w = check_weights("w", w)
    n, K = w.shape
    m = check_int("m", m, 1, n)
    p = check_probabilities("p", p, K)
    if m == n:
        labels = np.arange(n)
    else:
        labels = KMeans(n_clusters=m, n_init=1, random_state=seed).fit(w * np.sqrt(p)).labels_
    return representative(w, labels, p)


def solve_fluid_lp(w_bar: np.ndarray, b: np.ndarray, lam: np.ndarray, upper: np.ndarray | None = None) -> np.ndarray:
    """The fluid LP on the coarse graph, solved with HiGHS; returns x (m, K).

    max  sum_{j,t} w̄(j,t) x_jt
    s.t. sum_t x_jt <= b_j        (cluster capacity)
         sum_j x_jt <= λ_t        (expected type-t arrivals, λ_t = T p_t)
         0 <= x_jt <= upper_jt    (dynamic extension: arrivals seen while the cluster's patients are present)
    Its value bounds the expected omniscient optimum of the coarse instance from above.
    """
    w_bar = check_weights("w_bar", w_bar)
    m, K = w_bar.shape
    b = check_weights("b", b, ndim=1)
    lam = check_weights("lam", lam, ndim=1)
    if b.shape != (m,):
        raise fail("b", b, f"{m} capacities, one per cluster")
    if lam.shape != (K,):
        raise fail("lam", lam, f"{K} arrival rates, one per type")
    if upper is not None:
        upper = check_weights("upper", upper)
        if upper.shape != (m, K):
            raise fail("upper", upper, f"an array of shape {(m, K)}")
    rows = np.repeat(np.arange(m), K)
    cols = np.arange(m * K)
    cap = coo_matrix((np.ones(m * K), (rows, cols)), shape=(m, m * K))
    arr = coo_matrix((np.ones(m * K), (np.tile(np.arange(K), m), cols)), shape=(K, m * K))
    bounds = (0, None) if upper is None else list(zip(np.zeros(m * K), upper.ravel(), strict=True))
    res = linprog(
        -w_bar.ravel(), A_ub=vstack([cap, arr]).tocsr(), b_ub=np.concatenate([b, lam]), bounds=bounds, method="highs"
    )
    if res.status != 0:
        raise RuntimeError(f"fluid LP: HiGHS returned status {res.status} ({res.message})")
    return np.maximum(res.x.reshape(m, K), 0.0)


def magician_gamma(b: np.ndarray) -> np.ndarray:
    """γ_b = 1 - 1/sqrt(b + 3): the fraction of each proposal a capacity-b magician can honour ex ante."""
    return 1.0 - 1.0 / np.sqrt(np.asarray(b, dtype=float) + 3.0)


def magician_thresholds(q: np.ndarray, b: np.ndarray, T: int, gamma: np.ndarray | None = None):
    """Capacity-aware admission thresholds for every cluster and step (γ-conservative magician, Alaei et al.).

    q (m,): probability that a step's arrival is routed to cluster j (sum_t x_jt / T); b (m,): capacities.
    The magician tracks the distribution of W_j (units used before step i) under its own rule and admits a proposal
    iff W_j < θ_ji, or W_j = θ_ji with probability r_ji, so that every proposal is admitted with probability exactly
    γ_j (while feasible). Returns θ (T, m) int and r (T, m) float.
    """
    q = check_array("q", q, ndim=1).astype(float)
    if ((q < 0) | (q > 1)).any():
        raise fail("q", q, "routing probabilities in [0, 1]")
    b = check_array("b", b, ndim=1).astype(int)
    if (b < 1).any():
        raise fail("b", b, "capacities >= 1")
    T = check_int("T", T, 1)
    gamma = magician_gamma(b) if gamma is None else np.asarray(gamma, dtype=float)
    m, cols = len(b), np.arange(b.max() + 1)
    P = np.zeros((m, b.max() + 1))
    P[:, 0] = 1.0  # W_j = 0 before the first arrival
    theta, r = np.zeros((T, m), dtype=int), np.zeros((T, m))
    for i in range(T):
        cdf = np.cumsum(P, 1)
        th = np.minimum((cdf < gamma[:, None] - 1e-12).sum(1), b - 1)  # smallest θ with P(W <= θ) >= γ
        at = P[np.arange(m), th]
        below = cdf[np.arange(m), th] - at
        rr = np.where(at > 0, np.clip((gamma - below) / np.where(at > 0, at, 1.0), 0.0, 1.0), 1.0)
        theta[i], r[i] = th, rr
        admit = (cols[None, :] < th[:, None]) + (cols[None, :] == th[:, None]) * rr[:, None]
        move = q[:, None] * admit * P  # W_j -> W_j + 1 when a proposal arrives and is admitted
        P = P - move
        P[:, 1:] += move[:, :-1]
    return theta, r


class CoarsenedPolicy:
    """The LP-guided online policy on a coarsening (the paper's method; ``m = n`` gives the uncoarsened policy).

    On arrival i of type t with revealed weights w_row (n,):
      1. route to cluster j with probability x_jt / λ_t (LP-guided randomised routing);
      2. admit under the capacity-aware threshold (magician, if ``thresholds``), never beyond b_j;
      3. within the cluster, give the heart to the available patient with the largest actual w(u, v);
      [INF] 4. if the cluster declines or has no compatible patient left (or routing chose no cluster), try the
         other clusters in decreasing w̄(j, t), each under its own threshold; else the donor goes unmatched.
    """

    def __init__(
        self,
        coarsening: Coarsening,
        p: np.ndarray,
        T: int,
        thresholds: bool = True,
        upper: np.ndarray | None = None,
    ):
        self.c = coarsening
        self.T = check_int("T", T, 1)
        self.p = check_probabilities("p", p, coarsening.w_bar.shape[1])
        self.lam = self.T * self.p  # λ_t: expected arrivals of type t over the horizon
        self.x = solve_fluid_lp(coarsening.w_bar, coarsening.b, self.lam, upper)
        self.route = self.x / np.where(self.lam > 0, self.lam, 1.0)[None, :]  # (m, K) routing probabilities
        self.thresholds = thresholds
        if thresholds:
            q = np.clip(self.x.sum(1) / self.T, 0.0, 1.0)
            self.theta, self.r = magician_thresholds(q, coarsening.b, self.T)
        self.order = np.argsort(-coarsening.w_bar, axis=0)  # (m, K) fallback order of clusters for each type
        self.members = [np.flatnonzero(coarsening.labels == j) for j in range(coarsening.m)]

    def reset(self) -> None:
        """Start a new horizon: every cluster's used capacity back to 0."""
        self.used = np.zeros(self.c.m, dtype=int)

    def admits(self, j: int, i: int, rng: np.random.Generator) -> bool:
        """Capacity-aware admission of a proposal to cluster j at step i."""
        if self.used[j] >= self.c.b[j]:
            return False
        if not self.thresholds:
            return True
        th = self.theta[min(i, self.T - 1), j]
        return bool(self.used[j] < th or (self.used[j] == th and rng.random() < self.r[min(i, self.T - 1), j]))

    def best_in(self, j: int, w_row: np.ndarray, available: np.ndarray) -> int:
        """Within-cluster choice: the available member with the largest positive weight, or -1."""
        members = self.members[j]
        gains = np.where(available[members], w_row[members], 0.0)
        k = int(gains.argmax())
        return int(members[k]) if gains[k] > 0 else -1

    def decide(self, i: int, t: int, w_row: np.ndarray, available: np.ndarray, rng: np.random.Generator) -> int:
        """The patient who receives arrival i (type t, weights w_row), or -1."""
        probs = self.route[:, t]
        stay = 1.0 - probs.sum()
        j = rng.choice(self.c.m + 1, p=np.append(probs, max(stay, 0.0)) / (probs.sum() + max(stay, 0.0)))
        if j < self.c.m and self.admits(j, i, rng):
            u = self.best_in(j, w_row, available)
            if u >= 0:
                self.used[j] += 1
                return u
        for k in self.order[:, t]:
            if k == j or self.c.w_bar[k, t] <= 0 or not self.admits(k, i, rng):
                continue
            u = self.best_in(k, w_row, available)
            if u >= 0:
                self.used[k] += 1
                return u
        return -1


def lower_bound(b: float, delta_mean: float, w_scale: float) -> float:
    """[INF] The guarantee's shape, used to pick the cluster size from offline data before any evaluation.

    ALG >= γ_b LP - δ (number of matches) gives ALG / LP >= γ_b - δ / w_scale with w_scale the mean weight of a
    planned match: 1 - 1/sqrt(b + 3) (capacity-b online b-matching) minus the relative intra-cluster error."""
    return float(magician_gamma(b) - delta_mean / w_scale)
