"""A heart-allocation simulator: waitlisted patients (offline nodes), donor hearts (online arrivals), their benefit.

Real registry data (UNOS/SRTR, used by the paper) is access-restricted, so every number here is an explicit,
documented parameter of ``SimulatorParams`` (our [INF] choices, set once from the public clinical picture, not tuned to
the claims). The benefit ``w(u, v)`` of giving donor heart ``v`` to patient ``u`` is the expected life-years gained:
post-transplant survival minus survival on the waitlist, zero when the pair is incompatible (ABO or size).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from icml26_shared import check_array, check_int, check_same_length, fail
from sklearn.cluster import KMeans

ABO = ("O", "A", "B", "AB")
# ABO_COMPATIBLE[d, r]: a donor of blood type d can give to a recipient of blood type r (O universal donor, AB universal
# recipient).
ABO_COMPATIBLE = np.array(
    [
        [True, True, True, True],  # O  -> O, A, B, AB
        [False, True, False, True],  # A  -> A, AB
        [False, False, True, True],  # B  -> B, AB
        [False, False, False, True],  # AB -> AB
    ]
)
N_TIERS = 6  # the 2018 US adult heart allocation has six medical-urgency statuses, 1 = most urgent


@dataclass(frozen=True)
class SimulatorParams:
    """Every parameter of the simulator, in one place (all [INF]: ours, no registry data behind them).

    Ages in years, body weights in kg, survival in years, waiting times in days.
    """

    abo_freq: tuple[float, ...] = (0.44, 0.42, 0.10, 0.04)  # US population O, A, B, AB (donors and patients)
    tier_probs: tuple[float, ...] = (0.08, 0.22, 0.15, 0.30, 0.05, 0.20)  # share of the waitlist in status 1..6
    wait_survival: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 3.0, 5.0)  # mean years left on the waitlist, by status
    tier_post_factor: tuple[float, ...] = (0.80, 0.85, 0.90, 0.95, 1.0, 1.0)  # sicker patients do worse after
    patient_age: tuple[float, float, float, float] = (52.0, 12.0, 18.0, 75.0)  # mean, sd, min, max
    donor_age: tuple[float, float, float, float] = (35.0, 12.0, 14.0, 65.0)
    patient_log_weight: tuple[float, float] = (np.log(80.0), 0.20)  # log-normal body weight: mean of log, sd of log
    donor_log_weight: tuple[float, float] = (np.log(78.0), 0.20)
    size_ratio: tuple[float, float] = (0.8, 1.3)  # donor/recipient weight ratio accepted for a size match
    post_base: float = 12.0  # years of post-transplant survival of a reference pair (age 50, ideal donor)
    recipient_age_effect: float = 0.10  # log-survival lost per decade of recipient age above 50
    donor_age_effect: float = 0.10  # log-survival lost per decade of donor age above 30
    age_gap_effect: float = 0.15  # log-survival lost per decade of donor-recipient age gap
    size_sd: float = 0.15  # survival factor exp(-(log ratio)^2 / (2 size_sd^2)) for size mismatch
    noise_sd: float = 0.10  # log-normal pair-level noise the policies see only when the donor arrives
    mean_wait_days: float = 180.0  # waiting time already accrued, exponential (status-quo tie-break)
    horizon_years: float = 1.0  # the arrivals span this many years (dynamic extension: departures within it)

    def __post_init__(self) -> None:
        for name in ("abo_freq", "tier_probs"):
            probs = np.asarray(getattr(self, name), dtype=float)
            if (probs < 0).any() or not np.isclose(probs.sum(), 1.0):
                raise fail(name, getattr(self, name), "non-negative probabilities summing to 1")
        if len(self.abo_freq) != len(ABO):
            raise fail("abo_freq", self.abo_freq, f"{len(ABO)} frequencies for {ABO}")
        for name in ("tier_probs", "wait_survival", "tier_post_factor"):
            if len(getattr(self, name)) != N_TIERS:
                raise fail(name, getattr(self, name), f"{N_TIERS} values, one per urgency status")
        low, high = self.size_ratio
        if not 0 < low < high:
            raise fail("size_ratio", self.size_ratio, "an interval 0 < low < high (not inverted)")


@dataclass(frozen=True)
class Patients:
    """The waitlist (offline nodes): ABO index (0..3 for O, A, B, AB), status 1..6, age, body weight, days waited."""

    abo: np.ndarray
    tier: np.ndarray
    age: np.ndarray
    weight: np.ndarray
    waited: np.ndarray = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        n = check_same_length(abo=self.abo, tier=self.tier, age=self.age, weight=self.weight)
        if self.waited is None:
            object.__setattr__(self, "waited", np.zeros(n))
        _check_attributes(self.abo, self.age, self.weight)
        tier = check_array("tier", self.tier, ndim=1)
        if not np.isin(tier, np.arange(1, N_TIERS + 1)).all():
            raise fail("tier", tier, f"urgency statuses in 1..{N_TIERS}")
        if (check_array("waited", self.waited, ndim=1) < 0).any():
            raise fail("waited", self.waited, "waiting times >= 0 days")

    def __len__(self) -> int:
        return len(self.abo)


@dataclass(frozen=True)
class Donors:
    """Donor hearts (online arrivals, or k-means donor types): ABO index, age, body weight."""

    abo: np.ndarray
    age: np.ndarray
    weight: np.ndarray

    def __post_init__(self) -> None:
        check_same_length(abo=self.abo, age=self.age, weight=self.weight)
        _check_attributes(self.abo, self.age, self.weight)

    def __len__(self) -> int:
        return len(self.abo)


def _check_attributes(abo: np.ndarray, age: np.ndarray, weight: np.ndarray) -> None:
    """Attributes inside their domain: ABO index in 0..3, age in [0, 120] years, body weight > 0 kg, no NaN."""
    abo = check_array("abo", abo, ndim=1)
    if not np.isin(abo, np.arange(len(ABO))).all():
        raise fail("abo", abo, f"blood-type indices in 0..{len(ABO) - 1} for {ABO}")
    age = check_array("age", age, ndim=1)
    if ((age < 0) | (age > 120)).any():
        raise fail("age", age, "ages in [0, 120] years")
    if (check_array("weight", weight, ndim=1) <= 0).any():
        raise fail("weight", weight, "body weights > 0 kg")


def _truncated_normal(rng: np.random.Generator, spec: tuple[float, float, float, float], size: int) -> np.ndarray:
    """Normal(mean, sd) resampled until inside [min, max] (rejection; no clipping mass at the bounds)."""
    mean, sd, low, high = spec
    out = rng.normal(mean, sd, size)
    bad = (out < low) | (out > high)
    while bad.any():
        out[bad] = rng.normal(mean, sd, bad.sum())
        bad = (out < low) | (out > high)
    return out


def sample_patients(n: int, rng: np.random.Generator, params: SimulatorParams = SimulatorParams()) -> Patients:
    """A waitlist of ``n`` patients drawn from ``params``."""
    n = check_int("n", n, 1)
    return Patients(
        abo=rng.choice(len(ABO), size=n, p=params.abo_freq),
        tier=rng.choice(np.arange(1, N_TIERS + 1), size=n, p=params.tier_probs),
        age=_truncated_normal(rng, params.patient_age, n),
        weight=np.exp(rng.normal(*params.patient_log_weight, n)),
        waited=rng.exponential(params.mean_wait_days, n),
    )


def sample_donors(T: int, rng: np.random.Generator, params: SimulatorParams = SimulatorParams()) -> Donors:
    """``T`` donor hearts drawn i.i.d. from ``params`` (the arrival distribution the policies face)."""
    T = check_int("T", T, 1)
    return Donors(
        abo=rng.choice(len(ABO), size=T, p=params.abo_freq),
        age=_truncated_normal(rng, params.donor_age, T),
        weight=np.exp(rng.normal(*params.donor_log_weight, T)),
    )


def sample_departures(patients: Patients, rng: np.random.Generator, params: SimulatorParams = SimulatorParams()):
    """Dynamic extension: the time (years) each patient leaves the waitlist (death or delisting), exponential with
    the mean survival of its urgency status; the policies never see it in advance, the omniscient optimum does."""
    mean = np.asarray(params.wait_survival)[patients.tier - 1]
    return rng.exponential(mean)


def benefit(
    patients: Patients,
    donors: Donors,
    params: SimulatorParams = SimulatorParams(),
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """Life-years gained ``w(v, u)`` for every donor ``v`` and patient ``u``: (T, n), >= 0, 0 if incompatible.

    post = post_base * tier_factor * exp(-age effects) * exp(-(log r)^2 / (2 size_sd^2)), r = donor/recipient weight;
    w = max(post - wait_survival[tier], 0) on ABO- and size-compatible pairs. With ``rng`` each pair gets a mean-one
    log-normal factor (what the transplant centre learns once the heart is offered); without it, the noise-free value.
    """
    abo_ok = ABO_COMPATIBLE[donors.abo[:, None], patients.abo[None, :]]
    ratio = donors.weight[:, None] / patients.weight[None, :]
    size_ok = (ratio >= params.size_ratio[0]) & (ratio <= params.size_ratio[1])
    log_post = (
        np.log(params.post_base)
        + np.log(np.asarray(params.tier_post_factor))[patients.tier - 1][None, :]
        - params.recipient_age_effect * np.maximum(patients.age - 50.0, 0.0)[None, :] / 10.0
        - params.donor_age_effect * np.maximum(donors.age - 30.0, 0.0)[:, None] / 10.0
        - params.age_gap_effect * np.abs(donors.age[:, None] - patients.age[None, :]) / 10.0
        - np.log(ratio) ** 2 / (2.0 * params.size_sd**2)
    )
    if rng is not None:
        log_post = log_post + rng.normal(-0.5 * params.noise_sd**2, params.noise_sd, log_post.shape)
    gain = np.exp(log_post) - np.asarray(params.wait_survival)[patients.tier - 1][None, :]
    return np.where(abo_ok & size_ok, np.maximum(gain, 0.0), 0.0)


@dataclass(frozen=True)
class DonorTypes:
    """Donor types Θ learned from historical donors: representative donors (K) and their frequencies p_t."""

    centroids: Donors
    p: np.ndarray
    scale: np.ndarray  # feature scale (age, log weight) used for the nearest-type assignment

    def assign(self, donors: Donors) -> np.ndarray:
        """The type of each donor: the nearest centroid of the same blood type (standardised age, log weight)."""
        x = _features(donors, self.scale)
        c = _features(self.centroids, self.scale)
        d2 = ((x[:, None, :] - c[None, :, :]) ** 2).sum(-1)
        d2[donors.abo[:, None] != self.centroids.abo[None, :]] = np.inf
        return d2.argmin(1)


def _features(donors: Donors, scale: np.ndarray) -> np.ndarray:
    return np.stack([donors.age, np.log(donors.weight)], 1) / scale


def learn_donor_types(history: Donors, K: int, seed: int = 0) -> DonorTypes:
    """k-means donor types (the paper discretises donor profiles into representative types from historical data).

    [INF] K is split across blood types in proportion to their frequency (at least one type each present), and
    k-means runs within each blood type on standardised (age, log weight), so no type mixes blood groups.
    """
    K = check_int("K", K, 1, len(history))
    scale = np.array([history.age.std(), np.log(history.weight).std()])
    present = [a for a in range(len(ABO)) if (history.abo == a).any()]
    if K < len(present):
        raise fail("K", K, f"at least one type per blood group present ({len(present)})")
    counts = np.array([(history.abo == a).sum() for a in present], dtype=float)
    k_per = np.maximum(1, np.floor(K * counts / counts.sum())).astype(int)
    while k_per.sum() < K:  # hand the remainder to the groups with most donors per type
        k_per[np.argmax(counts / k_per)] += 1
    while k_per.sum() > K:
        k_per[np.argmax(np.where(k_per > 1, k_per, 0))] -= 1
    abo, centres, p = [], [], []
    x_all = _features(history, scale)
    for a, k in zip(present, k_per, strict=True):
        x = x_all[history.abo == a]
        k = min(int(k), len(x))
        km = KMeans(n_clusters=k, n_init=1, random_state=seed).fit(x)
        abo += [a] * k
        centres.append(km.cluster_centers_ * scale)
        p.append(np.bincount(km.labels_, minlength=k) / len(history))
    c = np.concatenate(centres)
    centroids = Donors(abo=np.array(abo), age=c[:, 0], weight=np.exp(c[:, 1]))
    return DonorTypes(centroids=centroids, p=np.concatenate(p), scale=scale)
