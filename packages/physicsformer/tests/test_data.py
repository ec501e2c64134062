"""Loaders (Beijing CSV format, WEATHER-5K files written by the test), gap handling and windows."""

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_physicsformer import (
    fill_gaps,
    load_beijing,
    load_beijing_station,
    load_weather5k_percentiles,
    load_weather5k_station,
    synthetic_stations,
    wind_components,
    window_starts,
)
from icml26_physicsformer.data import BEIJING_COLUMNS, WEATHER5K_COLUMNS


def test_wind_components_follow_the_meteorological_convention():
    u, v = wind_components(np.array([0.0, 90.0, 225.0]), np.array([2.0, 3.0, np.sqrt(2)]))
    np.testing.assert_allclose(u, [0, -3, 1], atol=1e-12)  # from the east blows westward
    np.testing.assert_allclose(v, [-2, 0, 1], atol=1e-12)  # from the north blows southward


def test_fill_gaps_interpolates_short_runs_and_excludes_long_ones():
    x = np.array([0.0, np.nan, np.nan, 3.0, np.nan, np.nan, np.nan, np.nan, 8.0, np.nan])
    filled, counts = fill_gaps(x[:, None], max_gap=3)
    np.testing.assert_allclose(filled[:4, 0], [0, 1, 2, 3])
    assert np.isnan(filled[4:8, 0]).all() and np.isnan(filled[9, 0])  # too long; at the end
    assert counts == {"runs_interpolated": 1, "hours_interpolated": 2, "runs_excluded": 2, "hours_excluded": 5}


def test_fill_gaps_raises_on_long_runs_when_asked():
    x = np.array([0.0, np.nan, np.nan, np.nan, 4.0])[:, None]
    with pytest.raises(ValueError, match="values=.*NaN run of 3"):
        fill_gaps(x, max_gap=2, long_runs="raise")
    with pytest.raises(ValueError, match="max_gap="):
        fill_gaps(x, max_gap=-1)
    with pytest.raises(ValueError, match="long_runs="):
        fill_gaps(x, max_gap=2, long_runs="drop")


@given(st.lists(st.booleans(), min_size=5, max_size=60), st.integers(1, 5), st.integers(1, 3))
def test_window_starts_match_brute_force(valid, length, stride):
    valid = np.array(valid)
    length = min(length, len(valid))
    expected = [s for s in range(0, len(valid) - length + 1, stride) if valid[s : s + length].all()]
    assert window_starts(valid, length, stride).tolist() == expected


def _beijing_frame(hours=10):
    t = pd.date_range("2014-01-01", periods=hours, freq="h")
    return pd.DataFrame(
        {
            "No": range(hours), "year": t.year, "month": t.month, "day": t.day, "hour": t.hour,
            "TEMP": np.linspace(-2, 3, hours), "PRES": 1020.0, "DEWP": -10.0, "RAIN": 0.0,
            "wd": (["N", "E", None, "SW"] * hours)[:hours], "WSPM": ([2.0, 1.0, 0.0, 2.0] * hours)[:hours],
            "station": "X",
        }
    )  # fmt: skip


def test_beijing_station_loader_reads_the_format(tmp_path):
    path = tmp_path / "PRSA_X.csv"
    _beijing_frame(8).to_csv(path, index=False)
    times, values = load_beijing_station(path)
    assert len(times) == 8 and values.shape == (8, 6)
    np.testing.assert_allclose(values[:4, 4:], [[0, -2], [-1, 0], [0, 0], [np.sqrt(2), np.sqrt(2)]], atol=1e-12)
    frame = _beijing_frame(8).drop(index=3)  # a missing hour lands as NaN on the hourly grid
    frame.to_csv(path, index=False)
    times, values = load_beijing_station(path)
    assert len(times) == 8 and np.isnan(values[3]).all()


@pytest.mark.parametrize("column", BEIJING_COLUMNS)
def test_beijing_loader_rejects_missing_columns(tmp_path, column):
    path = tmp_path / "bad.csv"
    _beijing_frame().drop(columns=[column]).to_csv(path, index=False)
    with pytest.raises(ValueError, match=f"path=.*missing \\['{column}'\\]"):
        load_beijing_station(path)


def test_beijing_loader_rejects_unordered_times_and_unknown_directions(tmp_path):
    path = tmp_path / "bad.csv"
    _beijing_frame().iloc[[0, 2, 1, 3]].to_csv(path, index=False)
    with pytest.raises(ValueError, match="path=.*strictly increasing"):
        load_beijing_station(path)
    frame = _beijing_frame()
    frame.loc[1, "wd"] = "cv"
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError, match="path=.*compass"):
        load_beijing_station(path)


def test_real_beijing_stations_load_on_one_grid():
    data = load_beijing(("Aotizhongxin", "Dongsi", "Huairou"), start="2014-01-01", end="2014-02-01")
    assert data.values.shape == (744, 3, 6) and data.coords.shape == (3, 2)
    assert np.isfinite(data.values).mean() > 0.99
    assert data.gaps["runs_interpolated"] > 0  # the raw files have short gaps
    assert 980 < np.nanmean(data.values[..., 1]) < 1050  # hPa
    with pytest.raises(ValueError, match="stations="):
        load_beijing(("Nowhere",))


def _weather5k(tmp_path, rows=None):
    t = pd.date_range("2014-01-01", periods=6, freq="h").astype(str)
    frame = pd.DataFrame(
        {"DATE": t, "TMP": 1.0, "DEW": -1.0, "WND_ANGLE": [0, 90, 180, 270, 359, 10], "WND_RATE": 2.0, "SLP": 1010.0,
         "extra": 0},
    )  # fmt: skip
    path = tmp_path / "station.csv"
    (frame if rows is None else frame.iloc[rows]).to_csv(path, index=False)
    return path, frame


def test_weather5k_station_loader_reads_its_format(tmp_path):
    path, frame = _weather5k(tmp_path)
    times, values = load_weather5k_station(path)
    assert values.shape == (6, 5) and times[0] == np.datetime64("2014-01-01T00", "h")
    np.testing.assert_allclose(values[:, 2], frame["WND_ANGLE"])


@pytest.mark.parametrize("column", WEATHER5K_COLUMNS)
def test_weather5k_loader_rejects_missing_columns(tmp_path, column):
    path, frame = _weather5k(tmp_path)
    frame.drop(columns=[column]).to_csv(path, index=False)
    with pytest.raises(ValueError, match=f"path=.*missing \\['{column}'\\]"):
        load_weather5k_station(path)


def test_weather5k_loader_rejects_unordered_times_and_bad_angles(tmp_path):
    path, _ = _weather5k(tmp_path, rows=[0, 1, 3, 2, 4, 5])
    with pytest.raises(ValueError, match="path=.*strictly increasing"):
        load_weather5k_station(path)
    path, frame = _weather5k(tmp_path)
    frame.loc[2, "WND_ANGLE"] = 400
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError, match="path=.*WND_ANGLE"):
        load_weather5k_station(path)


def test_weather5k_percentiles(tmp_path):
    table = {"A.csv": np.sort(np.random.default_rng(0).normal(size=(5, 8)), axis=1).tolist()}
    path = tmp_path / "percentile.json"
    path.write_text(json.dumps(table))
    assert load_weather5k_percentiles(path)["A.csv"].shape == (5, 8)
    table["A.csv"][0] = table["A.csv"][0][::-1]  # low > high
    path.write_text(json.dumps(table))
    with pytest.raises(ValueError, match="path=.*ascending"):
        load_weather5k_percentiles(path)


def test_synthetic_stations_are_physical():
    data = synthetic_stations(n_stations=8, hours=100, seed=0)
    assert data.values.shape == (100, 8, 6) and np.isfinite(data.values).all()
    assert (data.values[..., 2] <= data.values[..., 0]).all()  # dew point below temperature
    assert (data.values[..., 3] >= 0).all()
    with pytest.raises(ValueError, match="n_stations="):
        synthetic_stations(n_stations=2)
