"""Per-block sparsity allocation: uniform, OWL (the public baseline) and SDSA (AutoPrune's, reconstructed).

All three return one sparsity per block whose mean is the target ``S`` (blocks of a Llama model have equal
parameter counts; SDSA re-centres on the parameter-weighted mean for unequal blocks).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from icml26_shared import check_number, check_positive, fail

from .pruning import LayerStats, check_sparsity

ALLOCATIONS = ("uniform", "owl", "sdsa")
OWL_M = 5.0  # Hyper_m of OWL's scripts (outlier = score > M * mean score)
OWL_LAMBDA = 0.08  # Lamda of OWL's scripts: block sparsities span S - lambda .. S + lambda
SDSA_LAMBDA = 0.08  # [INF] as OWL
SDSA_T = 1.0  # [INF] softmax temperature
# Skews closer than SKEW_TIE_EPS * eps(dtype) * max(1, max |gamma|) are one skew: rescaling a float32 layer moves
# its skewness by up to ~0.9 eps * max(1, |gamma|) (measured over normal, Student-t and log-normal weights).
SKEW_TIE_EPS = 16.0


def _check_lambda(lam: float, sparsity: float) -> float:
    lam = check_number("lam", lam)
    if lam < 0 or sparsity - lam < 0 or sparsity + lam >= 1:
        raise fail("lam", lam, f"a number >= 0 with [S - lam, S + lam] inside [0, 1) for S={sparsity}")
    return lam


def uniform(n_blocks: int, sparsity: float) -> list[float]:
    """The same sparsity for every block (Wanda's default)."""
    return [check_sparsity("sparsity", sparsity)] * n_blocks


def wanda_scores(block: dict[str, LayerStats]) -> torch.Tensor:
    """All Wanda scores |W_ij| * ||X_j|| of one block's Linears, flattened together."""
    return torch.cat([(s.weight.abs() * s.X.reshape(1, -1)).flatten() for s in block.values()])


def outlier_ratio(scores: torch.Tensor, M: float = OWL_M) -> float:
    """OWL's layerwise outlier distribution entry: D = 100 * mean(S > M * mean(S)) (``check_outlier_mean``)."""
    return float((scores > M * scores.mean()).double().mean()) * 100.0


def owl(stats: Sequence[dict[str, LayerStats]], sparsity: float, M: float = OWL_M, lam: float = OWL_LAMBDA):
    """OWL (Yin et al. 2024) exactly as its code: D_l from the dense pass's Wanda scores of block l,
    d = (D - min D) / (max D - min D) * 2 lambda, d = d - mean(d) + (1 - S), block sparsity 1 - d_l.
    More outliers give a lower sparsity. Equal D everywhere gives the uniform allocation."""
    check_sparsity("sparsity", sparsity)
    check_positive("M", M)
    lam = _check_lambda(lam, sparsity)
    D = np.array([outlier_ratio(wanda_scores(block), M) for block in stats])
    spread = D.max() - D.min()
    d = (D - D.min()) * (2 * lam / spread) if spread > 0 else np.zeros_like(D)
    d = d - d.mean() + (1 - sparsity)
    out = [float(1 - v) for v in d]
    if min(out) < 0 or max(out) >= 1:
        raise fail(
            "lam", lam, f"a value that keeps every OWL block sparsity in [0, 1), got {min(out):.3f}..{max(out):.3f}"
        )
    return out


def skewness(values: torch.Tensor) -> float:
    """Fisher's moment skewness E[(a - mu)^3] / sigma^3 (scipy.stats.skew with bias=True)."""
    a = values.double().flatten()
    centred = a - a.mean()
    sigma = centred.pow(2).mean().sqrt()
    return float(centred.pow(3).mean() / sigma**3) if sigma > 0 else 0.0


def tied_skews(gamma: np.ndarray, tol: float) -> np.ndarray:
    """``gamma`` with every run of sorted values less than ``tol`` apart replaced by its mean: skews that differ
    only by rounding count as equal, so equal-skew layers get exactly equal sparsities."""
    order = np.argsort(gamma, kind="stable")
    groups = np.split(order, np.flatnonzero(np.diff(gamma[order]) >= tol) + 1)
    out = gamma.copy()
    for group in groups:
        out[group] = gamma[group].mean()
    return out


def sdsa(
    stats: Sequence[dict[str, LayerStats]],
    sparsity: float,
    lam: float = SDSA_LAMBDA,
    T: float = SDSA_T,
    skew_of: str = "weight",
) -> list[float]:
    """Skew-aware dynamic sparsity allocation, our reconstruction [INF] of the paper's SDSA:

    1. gamma_l = skewness of |W_l| (``skew_of="weight"``) or of block l's Wanda scores (``"wanda"``); skews
       within ``SKEW_TIE_EPS`` x eps(dtype) x max(1, max |gamma|) of each other are tied (``tied_skews``), so
       rescaling a layer (skewness is scale-free; only its float rounding moves) leaves the allocation as it is;
    2. w = softmax(gamma / T); r = (w - mean w) / max |w - mean w|, in [-1, 1];
    3. s_l = S - lam * r_l (more skew, lower sparsity), clipped to [S - lam, S + lam];
    4. an offset c found by bisection so the parameter-weighted mean of clip(s_l + c) is S.

    All skews tied gives exactly the uniform allocation.
    """
    check_sparsity("sparsity", sparsity)
    lam = _check_lambda(lam, sparsity)
    check_positive("T", T)
    if skew_of not in ("weight", "wanda"):
        raise fail("skew_of", skew_of, "'weight' or 'wanda'")
    values = [
        torch.cat([s.weight.abs().flatten() for s in b.values()]) if skew_of == "weight" else wanda_scores(b)
        for b in stats
    ]
    resolution = max(torch.finfo(v.dtype).eps for v in values)
    gamma = np.array([skewness(v) for v in values])
    gamma = tied_skews(gamma, SKEW_TIE_EPS * resolution * max(1.0, float(np.abs(gamma).max())))
    w = np.exp((gamma - gamma.max()) / T)
    w /= w.sum()
    centred = w - w.mean()
    peak = np.abs(centred).max()
    if gamma.min() == gamma.max() or peak == 0:  # all tied, or a T so large that the softmax is flat
        return uniform(len(stats), sparsity)
    r = centred / peak
    sizes = np.array([v.numel() for v in values], dtype=float)
    s = sparsity - lam * r
    lo, hi = sparsity - lam, sparsity + lam

    def mean_at(c: float) -> float:
        return float(np.average(np.clip(s + c, lo, hi), weights=sizes))

    a, b = -2 * lam, 2 * lam
    for _ in range(100):  # mean_at is non-decreasing in c
        mid = (a + b) / 2
        a, b = (mid, b) if mean_at(mid) < sparsity else (a, mid)
    return [float(v) for v in np.clip(s + (a + b) / 2, lo, hi)]


def allocate(
    name: str, stats: Sequence[dict[str, LayerStats]], sparsity: float, lam: float = OWL_LAMBDA
) -> list[float]:
    """The block sparsities of allocation ``name`` (``uniform | owl | sdsa``) at mean sparsity ``sparsity``."""
    if name == "uniform":
        return uniform(len(stats), sparsity)
    if name == "owl":
        return owl(stats, sparsity, lam=lam)
    if name == "sdsa":
        return sdsa(stats, sparsity, lam=lam)
    raise fail("allocation", name, f"one of {list(ALLOCATIONS)}")
