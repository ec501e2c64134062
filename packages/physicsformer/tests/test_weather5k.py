"""WEATHER-5K's pipeline against the official dataset's semantics, on station files written in its format here."""

import json

import numpy as np
import pandas as pd
import pytest
import torch
from icml26_physicsformer import (
    WEATHER5K_MEAN,
    WEATHER5K_STD,
    Weather5KSplit,
    decoder_input,
    load_weather5k_station,
    time_marks,
    weather5k_root,
    weather5k_standardiser,
)
from icml26_physicsformer.experiment import CONFIGS, EXPERIMENT, Config

VARIABLES = ["TMP", "DEW", "WND_ANGLE", "WND_RATE", "SLP"]


def _write_station(folder, name, start, end, seed):
    """An hourly station file as WEATHER-5K ships it (DATE as 'YYYY-MM-DD HH:MM:SS', an extra column)."""
    times = pd.date_range(start, end, freq="h")
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "DATE": times.astype(str),
            "TMP": rng.normal(12, 10, len(times)).round(1),
            "DEW": rng.normal(6, 10, len(times)).round(1),
            "WND_ANGLE": rng.uniform(0, 360, len(times)).round(0),
            "WND_RATE": rng.gamma(2, 1.5, len(times)).round(1),
            "SLP": rng.normal(1015, 9, len(times)).round(1),
            "MASK": 0,
        }
    )
    folder.mkdir(parents=True, exist_ok=True)
    frame.to_csv(folder / name, index=False)
    return frame


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """Three stations over the last week of 2022 and all of 2023, and their percentiles."""
    root = tmp_path_factory.mktemp("weather5k")
    stations = root / "global_weather_stations"
    table = {}
    for i, name in enumerate(["B.csv", "A.csv", "C.csv"]):
        _write_station(stations, name, "2022-12-25 00:00", "2023-12-31 23:00", seed=i)
        table[name] = np.sort(np.random.default_rng(10 + i).normal(size=(5, 8)), axis=1).tolist()
    (root / "percentile.json").write_text(json.dumps(table))
    return root


def _official_windows(root, name, first, hours, L, label_len, H, indices):
    """The official __getitem__ for one station, restated: rows from DATE == str(first hour), marks then the
    fixed z-score in float32, window = rows [s, s + L + H), y = its last label_len + H rows."""
    df = pd.read_csv(root / "global_weather_stations" / name)
    start = df[df.iloc[:, 0] == str(pd.Timestamp(first))].index[0]
    df = df[start : start + hours]
    data = (df[VARIABLES].values - np.array(WEATHER5K_MEAN)[None]) / np.array(WEATHER5K_STD)[None]
    t = pd.DatetimeIndex(pd.to_datetime(df["DATE"]).values)
    stamp = np.vstack(
        [t.hour / 23.0 - 0.5, t.day_of_week / 6.0 - 0.5, (t.day - 1) / 30.0 - 0.5, (t.day_of_year - 1) / 365.0 - 0.5]
    )
    rows = np.concatenate([stamp.T, data], axis=1, dtype=np.float32)
    out = []
    for s in indices:
        window = rows[s : s + L + H]
        out.append((window[:L, 4:], window[-(H + label_len) :, 4:], window[:L, :4], window[-(H + label_len) :, :4]))
    return out


def test_test_split_matches_the_official_dataset(root):
    L, label_len, H = 48, 24, 72
    split = Weather5KSplit.load(root, "test", L, label_len, H)
    hours = 8760
    n = hours - (L + H - 1)  # windows per station
    assert split.stations == ("A.csv", "B.csv", "C.csv") and len(split) == 3 * n
    indices = np.array([0, 1, n - 1, n, n + 4000, 3 * n - 1])
    seq_x, seq_y, x_mark, y_mark, percentile = split.sample(indices)
    assert seq_x.shape == (6, L, 5) and seq_y.shape == (6, label_len + H, 5) and percentile.shape == (6, 1, 5, 8)
    table = json.loads((root / "percentile.json").read_text())
    for k, i in enumerate(indices):
        station, s = divmod(int(i), n)
        name = split.stations[station]
        ((ox, oy, oxm, oym),) = _official_windows(root, name, "2023-01-01", hours, L, label_len, H, [s])
        for ours, official in ((seq_x, ox), (seq_y, oy), (x_mark, oxm), (y_mark, oym)):
            np.testing.assert_array_equal(ours[k].numpy(), official)
        np.testing.assert_array_equal(percentile[k, 0].numpy(), np.array(table[name]))
    x, y = split.batch(indices)
    assert torch.equal(x[:, :, 0], seq_x) and torch.equal(y[:, :, 0], seq_y[:, -H:])


def test_the_week_before_the_split_is_never_read(root):
    split = Weather5KSplit.load(root, "test", 4, 2, 3)
    assert split.times[0] == np.datetime64("2023-01-01T00", "h") and split.times[-1] == np.datetime64("2023-12-31T23")
    assert split.values.shape == (3, 8760, 5)


def test_fixed_z_score_is_the_official_one():
    scaler = weather5k_standardiser()
    x = np.array([[12.70852261, 6.52705582, 191.18867587, 3.36941836, 1014.85317029]])
    np.testing.assert_allclose(scaler.transform(x), 0.0, atol=1e-12)
    np.testing.assert_allclose(scaler.transform(x + np.array(WEATHER5K_STD)), 1.0, atol=1e-12)


def test_time_marks_are_timeF_hourly():
    marks = time_marks(np.array(["2023-03-05T23"], dtype="datetime64[h]"))  # a Sunday, day 64 of the year
    np.testing.assert_allclose(marks[0], [0.5, 0.5, 4 / 30 - 0.5, 63 / 365 - 0.5], atol=1e-7)


def test_decoder_input_keeps_label_len_hours_then_zeros():
    seq_y = torch.arange(2 * 5 * 3, dtype=torch.float32).view(2, 5, 3)
    dec = decoder_input(seq_y, label_len=2, pred_len=3)
    assert torch.equal(dec[:, :2], seq_y[:, :2]) and not dec[:, 2:].any() and dec.shape == seq_y.shape


def test_stride_keeps_every_stride_th_start(root):
    full = Weather5KSplit.load(root, "test", 48, 24, 72)
    sparse = Weather5KSplit.load(root, "test", 48, 24, 72, stride=24)
    assert sparse.windows_per_station == -(-full.windows_per_station // 24)
    i = np.arange(len(sparse))
    station, start = sparse.locate(i)
    full_index = station * full.windows_per_station + start
    assert torch.equal(sparse.sample(i)[0], full.sample(full_index)[0])


def test_a_missing_hour_is_rejected_naming_the_file_and_the_gap(tmp_path):
    frame = _write_station(tmp_path, "gap.csv", "2023-01-01 00:00", "2023-01-01 05:00", seed=0)
    frame.drop(index=[2]).to_csv(tmp_path / "gap.csv", index=False)  # time steps [1, 2, 1, 1]
    with pytest.raises(ValueError, match=r"path=.*gap\.csv.*1 hours are missing.*after 2023-01-01T01"):
        load_weather5k_station(tmp_path / "gap.csv")
    frame.loc[3, "SLP"] = np.nan
    frame.to_csv(tmp_path / "gap.csv", index=False)
    with pytest.raises(ValueError, match="path=.*no missing values.*SLP at 2023-01-01T03"):
        load_weather5k_station(tmp_path / "gap.csv")


def test_a_file_not_covering_the_split_is_rejected(tmp_path):
    _write_station(tmp_path / "global_weather_stations", "short.csv", "2023-01-01 00:00", "2023-06-30 23:00", seed=0)
    (tmp_path / "percentile.json").write_text("{}")
    with pytest.raises(ValueError, match="root=.*covering the test split.*short.csv covers"):
        Weather5KSplit.load(tmp_path, "test")


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"split": "dev"}, "split"),
        ({"label_len": 49}, "label_len"),
        ({"stride": 0}, "stride"),
        ({"pred_len": 0}, "pred_len"),
    ],
)
def test_bad_arguments_are_named(root, kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Weather5KSplit.load(root, **({"split": "test"} | kwargs))


def test_missing_data_is_named_with_its_paths_and_source(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_DATA_MIRROR", str(tmp_path / "mirror"))
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    message = r"WEATHER-5K.*mirror/weather-5k.*cache/data/weather-5k.*github.com/taohan10200/WEATHER-5K"
    with pytest.raises(FileNotFoundError, match=message):
        weather5k_root()
    assert CONFIGS["paper"].dataset == "weather5k" and CONFIGS["paper"].label_len == 24
    with pytest.raises(FileNotFoundError, match=message):  # the paper run stops before any work
        EXPERIMENT.run("paper", tmp_path / "out")


def test_weather5k_measurement_runs_end_to_end(tmp_path, monkeypatch, root):
    """The paper path on tiny files: every split present (train years shortened by a stand-in split table)."""
    from icml26_physicsformer import weather5k

    monkeypatch.setitem(weather5k.WEATHER5K_SPLITS, "train", ("2022-12-25T00", "2022-12-31T23"))
    monkeypatch.setitem(weather5k.WEATHER5K_SPLITS, "val", ("2023-01-01T00", "2023-01-10T23"))
    config = Config(
        seeds=(0,), dataset="weather5k", data_root=str(root), steps=2, d_model=8, n_heads=2, n_layers=1,
        test_stride=240, synthetic_stations=12, synthetic_hours=200, workers=1,
    )  # fmt: skip
    record = EXPERIMENT.run(config, tmp_path)
    measured = {c["id"]: c["verdict"] for c in record.claims}
    assert measured["physicsformer_beats_dlinear"] == "inconclusive"  # no station graph per station
    assert np.isfinite(record.metrics["dlinear_mse_SLP_1_24h"]["mean"])
    assert record.metrics["test_windows"]["mean"] == 3 * -(-(8760 - 119) // 240)
