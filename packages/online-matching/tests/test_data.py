"""The heart-allocation simulator: compatibility rules, benefit properties, donor types, bad attributes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_online_matching import (
    Donors,
    Patients,
    SimulatorParams,
    benefit,
    learn_donor_types,
    sample_departures,
    sample_donors,
    sample_patients,
)
from icml26_online_matching.data import ABO_COMPATIBLE


def test_abo_rules():
    O, A, B, AB = range(4)
    assert ABO_COMPATIBLE[O].all() and ABO_COMPATIBLE[:, AB].all()
    assert not ABO_COMPATIBLE[A, B] and not ABO_COMPATIBLE[B, A] and not ABO_COMPATIBLE[AB, O]


@settings(deadline=None)
@given(st.integers(0, 10_000))
def test_benefit_is_nonnegative_and_zero_on_incompatible_pairs(seed):
    rng = np.random.default_rng(seed)
    patients, donors = sample_patients(20, rng), sample_donors(15, rng)
    W = benefit(patients, donors, rng=rng)
    assert W.shape == (15, 20) and (W >= 0).all()
    ratio = donors.weight[:, None] / patients.weight[None, :]
    incompatible = ~ABO_COMPATIBLE[donors.abo[:, None], patients.abo[None, :]] | (ratio < 0.8) | (ratio > 1.3)
    assert (W[incompatible] == 0).all()


def test_noise_free_benefit_is_the_log_normal_median_and_ideal_pair_value():
    params = SimulatorParams()
    p = Patients(abo=np.array([0]), tier=np.array([5]), age=np.array([30.0]), weight=np.array([70.0]))
    d = Donors(abo=np.array([0]), age=np.array([30.0]), weight=np.array([70.0]))
    assert np.isclose(benefit(p, d)[0, 0], params.post_base * 1.0 - params.wait_survival[4])


def test_donor_types_cover_history_and_keep_blood_groups():
    rng = np.random.default_rng(0)
    history = sample_donors(2000, rng)
    types = learn_donor_types(history, K=20)
    assert len(types.centroids) == 20 and np.isclose(types.p.sum(), 1.0)
    t = types.assign(history)
    assert (types.centroids.abo[t] == history.abo).all()


def test_departures_follow_urgency():
    rng = np.random.default_rng(0)
    patients = sample_patients(4000, rng)
    leave = sample_departures(patients, rng)
    assert leave[patients.tier == 1].mean() < leave[patients.tier == 6].mean()


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda: Donors(abo=np.array([4]), age=np.array([30.0]), weight=np.array([70.0])), "abo"),
        (lambda: Donors(abo=np.array([0]), age=np.array([np.nan]), weight=np.array([70.0])), "age"),
        (lambda: Donors(abo=np.array([0]), age=np.array([-1.0]), weight=np.array([70.0])), "age"),
        (lambda: Donors(abo=np.array([0]), age=np.array([30.0]), weight=np.array([-70.0])), "weight"),
        (
            lambda: Patients(abo=np.array([0]), tier=np.array([7]), age=np.array([30.0]), weight=np.array([70.0])),
            "tier",
        ),
        (lambda: SimulatorParams(size_ratio=(1.3, 0.8)), "size_ratio"),
        (lambda: SimulatorParams(abo_freq=(0.5, 0.5, 0.5, -0.5)), "abo_freq"),
        (lambda: sample_patients(0, np.random.default_rng(0)), "n"),
        (lambda: learn_donor_types(sample_donors(10, np.random.default_rng(0)), K=0), "K"),
    ],
)
def test_bad_inputs_name_the_argument(make, name):
    with pytest.raises(ValueError, match=f"^{name}="):
        make()
