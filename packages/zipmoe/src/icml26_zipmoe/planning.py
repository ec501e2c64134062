"""Compression-aware cache planning from expert-popularity traces (ZipMoE's conditional Poisson model).

Per MoE layer the device memory is split between *full* slots (a decompressed bf16 expert, 2 bytes per
element) and *SM* slots (only the sign-mantissa plane, 1 byte per element: a hit skips the SM read but
still decompresses the exponent chunks). Planning picks the share ``ratio_full`` of memory for full slots
that minimises the expected expert-load delay of a layer:

1. The trace gives each popularity rank a frequency; ``scale_to_k`` turns it into inclusion probabilities
   ``pi`` with ``sum(pi) = k`` and every ``pi_i <= 1``.
2. Selecting exactly k of N experts is modelled as conditional Poisson sampling (CPS, the maximum-entropy
   design of Chen, Dempster & Liu 1994): independent Bernoulli(p_i) draws conditioned on k successes.
   ``cps_weights`` fits the odds ``w_i = p_i / (1 - p_i)`` so that the CPS inclusion probabilities equal
   ``pi`` (fixed point ``w <- w * pi / pi(w)``, their eq. 7).
3. For a split (n_full, n_sm) the hits of each slot type are Poisson-binomial counts; conditioning on the
   total being k gives P(full hits, SM hits | k), and the expected delay is
   ``sum P(.) * max(compute bottleneck, I/O bottleneck)`` (``layer_delay``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icml26_shared import check_array, check_closed_interval, check_int, check_positive, fail

RATIO_FULL_MIN = 0.3  # the official planner only accepts ratio_full >= 0.3
SMOOTHING_WINDOW = 5  # rolling mean of the delay curve over ratio_full (centred, official)


def rank_popularity(trace: np.ndarray, num_experts: int) -> np.ndarray:
    """Frequency of each popularity rank (N,), descending, summing to 1.

    ``trace`` (tokens, layers, k) holds routed expert ids. Per layer the expert counts are sorted in
    descending order, then summed over layers: rank r's frequency is how often a layer's r-th most
    popular expert was chosen (the official trace reduction, batch size 1).
    """
    check_int("num_experts", num_experts, 1)
    trace = check_array("trace", trace, ndim=3)
    if not np.issubdtype(trace.dtype, np.integer) or trace.min() < 0 or trace.max() >= num_experts:
        raise fail("trace", trace, f"integer expert ids in [0, {num_experts})")
    counts = np.zeros(num_experts)
    for layer in range(trace.shape[1]):
        counts += np.sort(np.bincount(trace[:, layer].ravel(), minlength=num_experts))[::-1]
    return counts / counts.sum()


def scale_to_k(freq: np.ndarray, k: int, tol: float = 1e-9) -> np.ndarray:
    """Inclusion probabilities ``pi`` proportional to ``freq``, summing to k, each capped at 1.

    Entries that would exceed 1 are fixed at (just below) 1 and the rest rescaled to the remaining mass.
    """
    freq = check_array("freq", freq, ndim=1, dtype=float)
    check_int("k", k, 1, freq.size)
    if (freq < 0).any() or freq.sum() <= 0:
        raise fail("freq", freq, "non-negative frequencies with a positive sum")
    pi = freq * (k / freq.sum())
    free = np.ones(freq.size, dtype=bool)
    remaining = float(k)
    while free.any():
        scaled = pi[free] * (remaining / pi[free].sum()) if pi[free].sum() > 0 else pi[free]
        over = scaled >= 1.0 - tol
        if not over.any():
            pi[free] = scaled
            break
        idx = np.flatnonzero(free)[over]
        pi[idx] = 1.0 - tol
        remaining -= idx.size
        free[idx] = False
        if remaining <= 0:
            pi[free] = 0.0
            break
    return pi


def elementary_symmetric(w: np.ndarray, k: int) -> np.ndarray:
    """``e_0..e_k`` of the weights ``w``: e_m = sum over m-subsets of the product of their weights."""
    e = np.zeros(k + 1)
    e[0] = 1.0
    for wi in w:
        e[1:] = e[1:] + wi * e[:-1]  # E(j, m) = E(j-1, m) + w_j E(j-1, m-1)
    return e


def cps_inclusion(w: np.ndarray, k: int) -> np.ndarray:
    """Inclusion probabilities of CPS with odds ``w``: ``pi_i = w_i e_{k-1}(w_{-i}) / e_k(w)``.

    ``e_m(w_{-i})`` for every i at once from ``e_m(w_{-i}) = e_m(w) - w_i e_{m-1}(w_{-i})``. Infinite odds
    mean certain inclusion; the others then share the remaining ``k - #certain`` places.
    """
    w = check_array("w", w, ndim=1, dtype=float, finite=False)
    check_int("k", k, 1, w.size)
    if np.isnan(w).any() or (w < 0).any():
        raise fail("w", w, "non-negative odds (inf for certain inclusion)")
    certain = np.isinf(w)
    if certain.any():
        out = certain.astype(float)
        k_rest = k - int(certain.sum())
        if k_rest > 0:
            out[~certain] = cps_inclusion(w[~certain], k_rest)
        return out
    e = elementary_symmetric(w, k)
    without = np.ones(w.size)  # e_0(w_{-i})
    for m in range(1, k):
        without = e[m] - w * without  # e_m(w_{-i})
    return w * without / e[k]


def cps_weights(pi: np.ndarray, k: int, max_iter: int = 5000, tol: float = 1e-9) -> np.ndarray:
    """Odds ``w`` whose CPS inclusion probabilities are ``pi`` (fixed point ``w <- w * pi / pi(w)``).

    Entries with ``pi_i = 1`` (up to 1e-6) are certain: their odds are infinite, and the fixed point runs
    on the others with k reduced accordingly.
    """
    pi = check_array("pi", pi, ndim=1, dtype=float)
    check_int("k", k, 1, pi.size)
    if ((pi < 0) | (pi > 1)).any():
        raise fail("pi", pi, "probabilities in [0, 1]")
    if not np.isclose(pi.sum(), k):
        raise fail("pi", pi, f"probabilities summing to k={k} (sum is {pi.sum():.6g})")
    certain = pi >= 1 - 1e-6
    w = np.full(pi.size, np.inf)
    rest, k_rest = pi[~certain], k - int(certain.sum())
    if k_rest == 0 or rest.size == 0:
        w[~certain] = 0.0
        return w
    v = rest / (1.0 - rest + 1e-12)  # Poisson-sampling start
    for _ in range(max_iter):
        current = cps_inclusion(v, k_rest)
        if np.abs(current - rest).max() < tol:
            break
        v = v * rest / (current + 1e-300)
        v /= v.mean()  # the scale of w does not change CPS; keep it O(1)
    w[~certain] = v
    return w


def weight_to_prob(w: np.ndarray) -> np.ndarray:
    """Bernoulli probabilities of the Poisson design behind CPS: ``p_i = w_i / (1 + w_i)`` (1 for w = inf)."""
    w = np.asarray(w, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.where(np.isinf(w), 1.0, w / (1.0 + w))


def poisson_binomial(p: np.ndarray) -> np.ndarray:
    """P(number of successes = j), j = 0..len(p), of independent Bernoulli(p_i) draws."""
    dist = np.zeros(len(p) + 1)
    dist[0] = 1.0
    for pi in p:
        dist[1:] = dist[1:] * (1 - pi) + dist[:-1] * pi
        dist[0] *= 1 - pi
    return dist


@dataclass(frozen=True)
class CostModel:
    """Per-layer load costs, in seconds: the official planner's ``DelaySimu`` inputs.

    ``sm_io``: reading one tensor's SM plane; ``decompress``: decompressing one E-chunk;
    ``compression_ratio``: compressed over raw size of the exponent plane; ``num_chunks`` (K),
    ``tensors_per_expert`` (T) and ``workers`` (the decompression pool).
    """

    sm_io: float
    decompress: float
    compression_ratio: float
    num_chunks: int
    tensors_per_expert: int
    workers: int

    def __post_init__(self) -> None:
        check_positive("sm_io", self.sm_io)
        check_positive("decompress", self.decompress)
        check_closed_interval("compression_ratio", self.compression_ratio, 0.0, 2.0)
        for name in ("num_chunks", "tensors_per_expert", "workers"):
            check_int(name, getattr(self, name), 1)


def layer_delay(k: int, full_hits: int, sm_hits: int, cost: CostModel) -> float:
    """Load delay of one layer with ``full_hits`` full-slot and ``sm_hits`` SM-slot hits among k experts.

    max(compute, I/O): the pool decompresses K chunks per tensor of every non-full expert, each op also
    reading its share of the compressed exponents; the I/O thread reads the SM plane of each miss and the
    compressed exponents of each SM hit (the official ``DelaySimu``).
    """
    K, T = cost.num_chunks, cost.tensors_per_expert
    ops = K * (k - full_hits) * T
    compute = ops / cost.workers * (cost.decompress + cost.sm_io * cost.compression_ratio / K)
    io = T * cost.sm_io * (k - full_hits - sm_hits) + sm_hits * T * cost.sm_io * cost.compression_ratio
    return max(compute, io)


def expected_delay(p: np.ndarray, n_full: int, n_sm: int, k: int, cost: CostModel) -> float:
    """E[layer_delay] when ranks [0, n_full) are full slots and the next ``n_sm`` SM slots.

    Hits per slot type are Poisson-binomial in the CPS Bernoulli probabilities ``p`` (rank order),
    conditioned on exactly k experts chosen in total.
    """
    full = poisson_binomial(p[:n_full])
    sm = poisson_binomial(p[n_full : n_full + n_sm])
    rest = poisson_binomial(p[n_full + n_sm :])
    total = np.convolve(np.convolve(full, sm), rest)
    if k >= total.size or total[k] <= 0:
        return float("inf")
    delay = 0.0
    for f in range(min(k, n_full) + 1):
        for s in range(min(k - f, n_sm) + 1):
            r = k - f - s
            if r < rest.size:
                delay += full[f] * sm[s] * rest[r] / total[k] * layer_delay(k, f, s, cost)
    return delay


@dataclass(frozen=True)
class CachePlan:
    """Slots per layer: ``n_full`` decompressed experts and ``n_sm`` SM planes; the chosen share of memory."""

    n_full: int
    n_sm: int
    ratio_full: float
    expected_delay: float


def slots(budget: float, expert_elements: int, ratio_full: float, num_experts: int) -> tuple[int, int]:
    """(full, SM) slots that fit ``budget`` bytes when ``ratio_full`` of it goes to full slots."""
    n_full = min(int(ratio_full * budget // (2 * expert_elements)), num_experts)
    n_sm = min(int((1 - ratio_full) * budget // expert_elements), num_experts - n_full)
    return n_full, n_sm


def plan_cache(
    freq: np.ndarray,
    k: int,
    budget: float,
    expert_elements: int,
    cost: CostModel,
    step: float = 0.05,
) -> CachePlan:
    """The split of a layer's ``budget`` bytes between full and SM slots with the least expected delay.

    ``freq`` are rank frequencies (``rank_popularity``); ratio_full runs over step, 2 step, ... < 1, the
    delay curve is smoothed (rolling mean, window 5) and the minimum over ratio_full >= 0.3 is taken.
    """
    check_int("expert_elements", expert_elements, 1)
    if check_positive("budget", budget) < expert_elements:
        raise fail("budget", budget, f"at least one expert's SM plane ({expert_elements} bytes)")
    check_closed_interval("step", step, 1e-3, 0.5)
    pi = scale_to_k(freq, k)
    p = weight_to_prob(cps_weights(pi, k))
    ratios = np.arange(1, round(1 / step)) * step
    delays = np.array([expected_delay(p, *slots(budget, expert_elements, r, freq.size), k, cost) for r in ratios])
    finite = np.where(np.isfinite(delays), delays, np.nanmax(np.where(np.isfinite(delays), delays, np.nan)))
    pad = SMOOTHING_WINDOW // 2
    smooth = np.array([finite[max(0, i - pad) : i + pad + 1].mean() for i in range(finite.size)])
    allowed = ratios >= RATIO_FULL_MIN - 1e-12
    best = int(np.flatnonzero(allowed)[np.argmin(smooth[allowed])])
    n_full, n_sm = slots(budget, expert_elements, ratios[best], freq.size)
    return CachePlan(n_full=n_full, n_sm=n_sm, ratio_full=float(ratios[best]), expected_delay=float(delays[best]))
