"""MAE per lead, WEATHER-5K's extreme hit rate and the textbook SEDI against brute-force counts."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_physicsformer import extreme_hit_rate, mae_by_lead, percentile_thresholds, roughness, sedi


def test_mae_by_lead_matches_a_loop():
    rng = np.random.default_rng(0)
    f, t = rng.normal(size=(4, 5, 3, 2)), rng.normal(size=(4, 5, 3, 2))
    expected = np.array([[np.mean(np.abs(f[:, h, :, c] - t[:, h, :, c])) for c in range(2)] for h in range(5)])
    np.testing.assert_allclose(mae_by_lead(f, t), expected)


@given(st.integers(0, 10_000))
def test_extreme_hit_rate_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=(6, 4, 3, 2))
    forecast = truth + 0.5 * rng.normal(size=truth.shape)
    thresholds = np.sort(rng.normal(size=(3, 2, 4)), axis=-1)
    got = extreme_hit_rate(forecast, truth, thresholds)
    for i in range(2):
        for c in range(2):
            hits = events = 0
            for b, h, s in np.ndindex(6, 4, 3):
                low, high, y, p = thresholds[s, c, i], thresholds[s, c, 3 - i], truth[b, h, s, c], forecast[b, h, s, c]
                events += (y < low) + (y > high)
                hits += (y < low and p < low) + (y > high and p > high)
            expected = hits / events if events else np.nan
            np.testing.assert_allclose(got[i, c], expected)


def test_perfect_forecast_hits_every_event():
    truth = np.random.default_rng(1).normal(size=(50, 3, 2, 2))
    thresholds = percentile_thresholds(truth.reshape(150, 2, 2))
    np.testing.assert_allclose(extreme_hit_rate(truth, truth, thresholds), 1.0)


def test_sedi_matches_its_formula_and_is_nan_where_undefined():
    truth = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0, 0], dtype=float).reshape(10, 1, 1, 1)
    forecast = np.array([1, 1, 1, 0, 1, 0, 0, 0, 0, 0], dtype=float).reshape(10, 1, 1, 1)
    H, F = 3 / 4, 1 / 6
    expected = (np.log(F) - np.log(H) - np.log(1 - F) + np.log(1 - H)) / (
        np.log(F) + np.log(H) + np.log(1 - F) + np.log(1 - H)
    )
    np.testing.assert_allclose(sedi(forecast, truth, np.full((1, 1), 0.5)), [expected])
    assert np.isnan(sedi(truth, truth, np.full((1, 1), 0.5))[0])  # H = 1, F = 0


def test_roughness_is_zero_for_linear_ramps():
    ramp = np.arange(10.0)[None, :, None, None] * np.ones((2, 10, 3, 2))
    assert roughness(ramp) == 0.0
    assert roughness(ramp + np.array([0, 1] * 5)[None, :, None, None]) == pytest.approx(2.0)


def test_metrics_reject_bad_inputs():
    x = np.zeros((2, 3, 2, 2))
    with pytest.raises(ValueError, match="forecast="):
        mae_by_lead(x, np.zeros((2, 3, 2, 3)))
    with pytest.raises(ValueError, match="thresholds=.*ascending"):
        extreme_hit_rate(x, x, np.array([[[1.0, 0.0]] * 2] * 2))
    with pytest.raises(ValueError, match="thresholds="):
        extreme_hit_rate(x, x, np.zeros((2, 2, 3)))
    with pytest.raises(ValueError, match="threshold="):
        sedi(x, x, np.zeros((3, 2)))
    with pytest.raises(ValueError, match="percentiles="):
        percentile_thresholds(np.zeros((5, 2, 2)), (90.0, 10.0))
