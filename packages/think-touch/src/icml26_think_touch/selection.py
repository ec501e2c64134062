"""Think: which k of the G parameter groups to touch in a round.

Every selection strategy answers ``choose(rng, sq_norms)`` with k distinct group indices and may learn
from ``observe(selected, rewards)``, the squared gradient norms of the groups it touched. The paper's
practical strategy is a combinatorial semi-bandit that approximates the post-hoc greedy rule online:
we use Exp3.M (Uchiya, Nakamura and Kudo, 2010; exponential weights over k-sets with weight capping and
dependent rounding), whose regret against the best fixed k-set is O(sqrt(k T G ln(G/k))) and whose
exploration floor ``p_g >= gamma k / G`` guarantees the coverage condition of the convergence theorem.
The greedy oracle (Gauss-Southwell block rule) is the rate-optimal ideal: it needs every group's gradient.
"""

from __future__ import annotations

import math

import numpy as np
from icml26_shared import check_int, check_number, fail


def check_budget(k: int, G: int) -> tuple[int, int]:
    """``G >= 1`` groups and a budget ``1 <= k <= G``."""
    G = check_int("G", G, 1)
    return check_int("k", k, 1, G), G


def check_unit(name: str, value: float) -> float:
    """A number in the half-open interval (0, 1]."""
    v = check_number(name, value)
    if not 0.0 < v <= 1.0:
        raise fail(name, value, "a number in (0, 1]")
    return v


def check_rewards(selected: np.ndarray, rewards: np.ndarray) -> np.ndarray:
    """Rewards of the touched groups: one finite value >= 0 per selected index."""
    rewards = np.asarray(rewards, dtype=float)
    if rewards.shape != np.shape(selected):
        raise fail("rewards", rewards, f"one reward per selected group, shape {np.shape(selected)}")
    if not np.isfinite(rewards).all() or (rewards < 0).any():
        raise fail("rewards", rewards, "finite rewards >= 0 (squared gradient norms)")
    return rewards


def dep_round(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """DepRound (Gandhi et al., 2006): a set of exactly ``sum(p)`` indices where index i is in the set
    with probability ``p[i]``. ``p`` in [0, 1] must sum to an integer k."""
    p = np.array(p, dtype=float)
    k = round(float(p.sum()))
    if (p < -1e-12).any() or (p > 1 + 1e-12).any() or abs(p.sum() - k) > 1e-8:
        raise fail("p", p, "probabilities in [0, 1] summing to an integer")
    p = np.clip(p, 0.0, 1.0)  # only float round-off beyond [0, 1] reaches this line
    tol = 1e-12
    while True:
        fractional = np.flatnonzero((p > tol) & (p < 1 - tol))
        if fractional.size < 2:
            break
        i, j = fractional[0], fractional[1]
        alpha, beta = min(1 - p[i], p[j]), min(p[i], 1 - p[j])
        if rng.random() < beta / (alpha + beta):
            p[i], p[j] = p[i] + alpha, p[j] - alpha
        else:
            p[i], p[j] = p[i] - beta, p[j] + beta
    chosen = np.flatnonzero(p > 0.5)
    if chosen.size != k:  # pragma: no cover - a rounding defect, not a user error
        raise RuntimeError(f"DepRound returned {chosen.size} indices for k={k}")
    return chosen


class Strategy:
    """A selection rule over G groups with budget k. ``needs_full_gradient``: ``choose`` reads every
    group's squared gradient norm (only the greedy oracle does; the others run on the touched groups)."""

    needs_full_gradient = False

    def __init__(self, G: int, k: int) -> None:
        self.k, self.G = check_budget(k, G)

    def choose(self, rng: np.random.Generator, sq_norms: np.ndarray | None = None) -> np.ndarray:
        raise NotImplementedError

    def observe(self, selected: np.ndarray, rewards: np.ndarray) -> None:
        """Learn from the rewards of the touched groups (no-op for fixed rules)."""
        check_rewards(selected, rewards)


class Exp3M(Strategy):
    """Think-Touch's bandit ("think"): Exp3.M exponential weights over k-sets (Uchiya et al., 2010).

    Each round: cap the largest weights so no probability exceeds 1, ``p_g = k((1-gamma) w'_g / sum w'
    + gamma / G)`` (Alg. 1, step 2), draw k distinct groups by DepRound, observe the rewards of the touched
    ones, importance-weight them ``x_g / p_g`` and grow ``w_g <- w_g exp(k gamma xhat_g / G)`` for uncapped
    groups (step 6). Rewards must lie in [0, 1]; ``potentials()`` are the current probabilities.
    """

    def __init__(self, G: int, k: int, gamma: float = 0.1) -> None:
        super().__init__(G, k)
        self.gamma = check_unit("gamma", gamma)
        self.log_w = np.zeros(self.G)  # log-weights, shifted to max 0 after every update (scale-free rule)
        self._capped = np.zeros(self.G, dtype=bool)

    def _capped_weights(self) -> tuple[np.ndarray, np.ndarray]:
        """Weights w' with the largest capped at alpha (Alg. 1, step 1) and the capped mask S0."""
        w = np.exp(self.log_w - self.log_w.max())
        if self.k == self.G:  # every group is selected: all weights capped, p = 1
            return np.ones(self.G), np.ones(self.G, dtype=bool)
        if self.gamma >= 1.0:
            return w, np.zeros(self.G, dtype=bool)
        c = (1 / self.k - self.gamma / self.G) / (1 - self.gamma)
        if w.max() < c * w.sum():
            return w, np.zeros(self.G, dtype=bool)
        order = np.argsort(-w)
        tail = np.concatenate([np.cumsum(w[order][::-1])[::-1], [0.0]])  # tail[m] = sum of w[order][m:]
        for m in range(1, self.k):  # cap the m largest: alpha / (m alpha + tail[m]) = c
            alpha = c * tail[m] / (1 - m * c)
            if w[order[m - 1]] >= alpha and (m == self.G or w[order[m]] < alpha):
                capped = np.zeros(self.G, dtype=bool)
                capped[order[:m]] = True
                return np.where(capped, alpha, w), capped
        raise RuntimeError("Exp3.M found no capping level")  # pragma: no cover - impossible for c < 1/m

    def potentials(self) -> np.ndarray:
        """Selection probabilities p_g (sum k, each in [gamma k / G, 1]): the predicted potential of each group."""
        w, self._capped = self._capped_weights()
        return self.k * ((1 - self.gamma) * w / w.sum() + self.gamma / self.G)

    def choose(self, rng: np.random.Generator, sq_norms: np.ndarray | None = None) -> np.ndarray:
        self._p = self.potentials()
        return dep_round(self._p, rng)

    def observe(self, selected: np.ndarray, rewards: np.ndarray) -> None:
        rewards = check_rewards(selected, rewards)
        if not hasattr(self, "_p"):
            raise RuntimeError("Exp3M.observe before choose: the probabilities of the round are unknown")
        if (rewards > 1 + 1e-9).any():
            raise fail("rewards", rewards, "rewards in [0, 1] (normalise the squared gradient norms)")
        xhat = rewards / self._p[selected]  # importance-weighted estimate, unbiased for E[x_g]
        grow = ~self._capped[selected]
        self.log_w[selected[grow]] += self.k * self.gamma * xhat[grow] / self.G
        self.log_w -= self.log_w.max()


class GreedyOracle(Strategy):
    """The post-hoc greedy rule: touch the k groups with the largest ``||grad_g f||^2`` (Gauss-Southwell
    block rule), which maximises the descent-lemma decrease of the step; needs every group's gradient."""

    needs_full_gradient = True

    def choose(self, rng: np.random.Generator, sq_norms: np.ndarray | None = None) -> np.ndarray:
        if sq_norms is None or np.shape(sq_norms) != (self.G,):
            raise fail("sq_norms", sq_norms, f"the squared gradient norm of each of the G={self.G} groups")
        return np.sort(np.argsort(-np.asarray(sq_norms), kind="stable")[: self.k])


class RunningMax:
    """Reward normaliser ``x = ||grad_g||^2 / M_t`` with ``M_t = max(rho M_{t-1}, max observed)``, so
    rewards lie in [0, 1] and follow the shrinking gradients of training (``rho``: forgetting factor)."""

    def __init__(self, rho: float = 0.95) -> None:
        self.rho = check_unit("rho", rho)
        self.M = 0.0

    def __call__(self, sq_norms: np.ndarray) -> np.ndarray:
        sq_norms = np.asarray(sq_norms, dtype=float)
        self.M = max(self.rho * self.M, float(sq_norms.max(initial=0.0)))
        return sq_norms / self.M if self.M > 0 else np.zeros_like(sq_norms)


def regret_bound(T: int, G: int, k: int) -> float:
    """Exp3.M's bound on the expected regret after T rounds with rewards in [0, 1] and tuned gamma:
    ``2 sqrt(e - 1) sqrt(k T G ln(G / k))`` (Uchiya et al., 2010, Cor. 1, with g = k T); 0 when k = G."""
    T = check_int("T", T, 1)
    k, G = check_budget(k, G)
    return 2 * math.sqrt(math.e - 1) * math.sqrt(k * T * G * math.log(G / k))


def exp3m_gamma(T: int, G: int, k: int) -> float:
    """The gamma of that bound: ``min(1, sqrt(G ln(G/k) / ((e - 1) k T)))``, in (0, 1]."""
    T = check_int("T", T, 1)
    k, G = check_budget(k, G)
    if k == G:
        return 1.0
    return min(1.0, math.sqrt(G * math.log(G / k) / ((math.e - 1) * k * T)))
