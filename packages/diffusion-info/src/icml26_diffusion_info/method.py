"""Neural entropy and image-label mutual information along the reverse diffusion process.

The forward process is the VP SDE of the NeuralEntropy code (Premkumar 2025), the setting of the
paper: ``dx = -1/2 beta(t) x dt + kappa sqrt(beta(t)) dW`` on ``t in [0, 1]`` with
``beta(t) = beta_min + (beta_max - beta_min) t``. Its equilibrium is ``p_eq = N(0, kappa^2 I)``.

* Entropy production rate (information the network delivers at time t):
  ``r(t) = 1/2 sigma(t)^2 E_{x_t} || grad log p_t(x_t) - grad log p_eq(x_t) ||^2``, with
  ``sigma(t) = kappa sqrt(beta(t))``; the entropy-matching network outputs exactly
  ``e_theta = grad log p_t - grad log p_eq``.
* Neural entropy ``S_NN = int_eps^1 r(t) dt``; for the exact score it equals
  ``KL(p_eps || p_eq) - KL(p_1 || p_eq)`` (de Bruijn identity for the OU process).
* Image-label mutual information through the guidance vector ``g = grad log p_t(x|c) - grad log p_t(x)``:
  ``i(t) = 1/2 sigma(t)^2 E_{c, x_t} ||g||^2`` and ``I = int_eps^1 i(t) dt = I(X_eps; C) - I(X_1; C)``.

Time runs forward (t = 0 is data); "late in generation" is small t.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from icml26_shared import (
    check_array,
    check_choice,
    check_int,
    check_number,
    check_open_interval,
    check_positive,
    fail,
)

# Defaults of the NeuralEntropy VP model (scripts/mnist.py): beta_min = 0.1, beta_max = 16, kappa = 1.
BETA_MIN = 0.1
BETA_MAX = 16.0
KAPPA = 1.0
EPS = 1e-5  # smallest time of the official entropy-rate grid (the rate is evaluated on [eps, 1])


@dataclass(frozen=True)
class VPSchedule:
    """The VP SDE ``dx = -1/2 beta(t) x dt + kappa sqrt(beta(t)) dW`` with linear ``beta(t)``."""

    beta_min: float = BETA_MIN
    beta_max: float = BETA_MAX
    kappa: float = KAPPA

    def __post_init__(self) -> None:
        beta_min = check_number("beta_min", self.beta_min)
        if beta_min < 0:
            raise fail("beta_min", self.beta_min, "a finite number >= 0")
        if check_number("beta_max", self.beta_max) <= beta_min:
            raise fail("beta_max", self.beta_max, f"a number > beta_min={beta_min}")
        check_positive("kappa", self.kappa)

    def beta(self, t):
        """beta(t) = beta_min + (beta_max - beta_min) t."""
        return self.beta_min + (self.beta_max - self.beta_min) * np.asarray(t, dtype=float)

    def sigma(self, t):
        """Diffusion coefficient sigma(t) = kappa sqrt(beta(t))."""
        return self.kappa * np.sqrt(self.beta(t))

    def mu(self, t):
        """Signal scale mu(t) = exp(-1/2 int_0^t beta) = exp(-1/2 beta_min t - 1/4 (beta_max - beta_min) t^2)."""
        t = np.asarray(t, dtype=float)
        return np.exp(-0.5 * self.beta_min * t - 0.25 * (self.beta_max - self.beta_min) * t**2)

    def std(self, t):
        """Noise scale std(t) = kappa sqrt(1 - mu(t)^2): x_t = mu(t) x_0 + std(t) z."""
        t = np.asarray(t, dtype=float)
        log_mu2 = -self.beta_min * t - 0.5 * (self.beta_max - self.beta_min) * t**2
        return self.kappa * np.sqrt(-np.expm1(log_mu2))

    def grad_log_p_eq(self, x):
        """Score of the equilibrium N(0, kappa^2 I): -x / kappa^2."""
        return -np.asarray(x) / self.kappa**2


def time_grid(eps: float = EPS, n: int = 100, spacing: str = "log") -> np.ndarray:
    """The evaluation times ``eps = t_0 < ... < t_{n-1} = 1``.

    ``spacing="linear"`` is the official grid; ``"log"`` (our default) resolves the small-t region
    where fine-detail entropy is produced with the same number of points.
    """
    eps = check_open_interval("eps", eps, 0.0, 1.0)  # the rate diverges at t = 0 on a manifold
    n = check_int("n", n, 3)
    check_choice("spacing", spacing, ("log", "linear"))
    if spacing == "log":
        return np.geomspace(eps, 1.0, n)
    return np.linspace(eps, 1.0, n)


def check_times(times) -> np.ndarray:
    """A strictly increasing grid inside (0, 1]."""
    times = check_array("times", times, ndim=1, dtype=float)
    if times.size < 2 or times[0] <= 0 or times[-1] > 1 or np.any(np.diff(times) <= 0):
        raise fail("times", times, "a strictly increasing grid of >= 2 times in (0, 1]")
    return times


def entropy_production_rate(schedule: VPSchedule, t: float, e) -> float:
    """r(t) = 1/2 sigma(t)^2 E ||e||^2 for samples ``e`` (n, D) of ``grad log p_t - grad log p_eq``."""
    e = check_array("e", e, ndim=2)
    return float(0.5 * schedule.sigma(t) ** 2 * np.mean(np.sum(e**2, axis=1)))


def mutual_information_rate(schedule: VPSchedule, t: float, guidance) -> float:
    """i(t) = 1/2 sigma(t)^2 E ||g||^2 for guidance vectors ``g`` (n, D) = s(x|c) - s(x)."""
    guidance = check_array("guidance", guidance, ndim=2)
    return float(0.5 * schedule.sigma(t) ** 2 * np.mean(np.sum(guidance**2, axis=1)))


def integrate(times, rates) -> float:
    """Trapezoid integral of ``rates`` over ``times``."""
    times = check_times(times)
    rates = check_array("rates", rates, ndim=1)
    if rates.shape != times.shape:
        raise fail("rates", rates, f"one rate per time, shape {times.shape}")
    return float(np.trapezoid(rates, times))


def fraction_before(times, rates, t_split: float) -> float:
    """Share of ``int rates dt`` accumulated at ``t <= t_split`` (late in generation)."""
    times = check_times(times)
    t_split = check_number("t_split", t_split)
    if not times[0] < t_split < times[-1]:
        raise fail("t_split", t_split, f"a time strictly inside the grid ({times[0]:g}, {times[-1]:g})")
    total = integrate(times, rates)
    rates = np.asarray(rates, dtype=float)
    rate_split = np.interp(t_split, times, rates)
    keep = times < t_split
    head = np.append(times[keep], t_split)
    return float(np.trapezoid(np.append(rates[keep], rate_split), head) / total)


def time_centroid(times, rates) -> float:
    """Rate-weighted mean time ``int t r dt / int r dt``: where along the process information is supplied."""
    times = check_times(times)
    return integrate(times, np.asarray(rates, dtype=float) * times) / integrate(times, rates)


ScoreFn = Callable[[np.ndarray, float, np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class InformationProfile:
    """Time profiles of one model: entropy rate r(t), MI rate i(t) and the eps-space guidance norm."""

    times: np.ndarray
    entropy_rate: np.ndarray  # r(t), nats per unit time
    mi_rate: np.ndarray  # i(t), nats per unit time
    guidance_eps_norm: np.ndarray  # RMS of std(t) * ||g|| (the guidance vector in eps units)
    mi_rate_denoising: np.ndarray  # i(t) from the denoising-loss gap (Kong et al. 2024), same mean for exact scores

    @property
    def neural_entropy(self) -> float:
        """S_NN = int r dt."""
        return integrate(self.times, self.entropy_rate)

    @property
    def mutual_information(self) -> float:
        """I(X; C) = int i dt."""
        return integrate(self.times, self.mi_rate)

    @property
    def mutual_information_denoising(self) -> float:
        """I(X; C) from the denoising-loss gap."""
        return integrate(self.times, self.mi_rate_denoising)


def information_profile(schedule: VPSchedule, times, x0, labels, scores: ScoreFn, rng) -> InformationProfile:
    """Monte Carlo r(t), i(t) over ``x_t = mu(t) x0 + std(t) z`` on the grid ``times``.

    ``scores(x_t, t, labels)`` returns ``(s_cond, s_uncond)``, each (n, D): the class-conditional and
    the unconditional score of the model (exact or learned). One fresh z per sample and time, as in the
    official ``mc_entropy_rate``.
    """
    times = check_times(times)
    x0 = check_array("x0", x0, ndim=2, dtype=float)
    labels = check_array("labels", labels, ndim=1)
    if labels.shape[0] != x0.shape[0]:
        raise fail("labels", labels, f"one label per sample of x0 ({x0.shape[0]})")
    entropy, mi, eps_norm, mi_denoising = [], [], [], []
    for t in times:
        std = float(schedule.std(t))
        z = rng.standard_normal(x0.shape)
        x_t = schedule.mu(t) * x0 + std * z
        s_cond, s_uncond = scores(x_t, float(t), labels)
        if not (np.isfinite(s_cond).all() and np.isfinite(s_uncond).all()):
            raise FloatingPointError(f"scores at t={t:g}: non-finite values")
        guidance = s_cond - s_uncond  # the classifier-free guidance vector
        entropy.append(entropy_production_rate(schedule, t, s_uncond - schedule.grad_log_p_eq(x_t)))
        mi.append(mutual_information_rate(schedule, t, guidance))
        eps_norm.append(float(std * np.sqrt(np.mean(np.sum(guidance**2, axis=1)))))
        # Denoising losses ||s std + z||^2 of the two scores: for the exact scores
        # E[loss_u - loss_c] = std^2 E||g||^2 (orthogonality of the conditional mean), so this is i(t) too.
        loss_gap = np.sum((s_uncond * std + z) ** 2, axis=1) - np.sum((s_cond * std + z) ** 2, axis=1)
        mi_denoising.append(float(0.5 * schedule.sigma(t) ** 2 * np.mean(loss_gap) / std**2))
    return InformationProfile(times, np.array(entropy), np.array(mi), np.array(eps_norm), np.array(mi_denoising))
