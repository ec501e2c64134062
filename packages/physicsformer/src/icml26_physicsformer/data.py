"""Station weather data: the Beijing 12-station hourly records, WEATHER-5K's file format, synthetic stations.

* ``load_beijing``: the Beijing multi-site data (UCI, CC BY 4.0; 12 stations, hourly, 2013-03..2017-02),
  fetched through the checksum-verified shared cache (``icml26_shared.fetch_file``, mirror first). Variables
  TEMP (degC), PRES (hPa), DEWP (degC), RAIN (mm), and the wind (``wd`` 16-point compass, ``WSPM`` m/s)
  turned into u/v components (m/s). Gaps are handled explicitly (``fill_gaps``): NaN runs up to ``max_gap``
  hours are linearly interpolated, longer runs stay NaN, and windows touching them are excluded
  (``window_starts``); the counts are reported in ``StationData.gaps``.
* ``load_weather5k_station`` / ``load_weather5k_percentiles``: WEATHER-5K's per-station CSV
  (``raw_inter_era5/<station>.csv``: DATE, TMP, DEW, WND_ANGLE, WND_RATE, SLP) and its ``percentile.json``.
* ``synthetic_stations``: generated stand-in stations (moving Gaussian highs/lows; the wind follows a known
  geostrophic-like relation to the pressure gradient) for the exact checks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from icml26_shared import check_int, check_positive, fail, fetch_file

from .physics import gradient_operator

VARIABLES = ("TEMP", "PRES", "DEWP", "RAIN", "U", "V")  # the model's channels, in this order
BEIJING_COLUMNS = ("year", "month", "day", "hour", "TEMP", "PRES", "DEWP", "RAIN", "wd", "WSPM")
# Station coordinates (lat, lon in degrees) of the Beijing Municipal Environmental Monitoring Center sites in the
# UCI data set: public knowledge, as listed on the site maps of the BJMEMC network and the aqicn.org station pages
# (about 0.01 degree, i.e. ~1 km, accuracy). [INF] approximate: the data set itself ships no coordinates.
BEIJING_STATIONS = {
    "Aotizhongxin": (39.982, 116.397),
    "Changping": (40.217, 116.230),
    "Dingling": (40.292, 116.220),
    "Dongsi": (39.929, 116.417),
    "Guanyuan": (39.929, 116.339),
    "Gucheng": (39.914, 116.184),
    "Huairou": (40.328, 116.628),
    "Nongzhanguan": (39.937, 116.461),
    "Shunyi": (40.127, 116.655),
    "Tiantan": (39.886, 116.407),
    "Wanliu": (39.987, 116.287),
    "Wanshouxigong": (39.878, 116.352),
}
COMPASS = ("N", "NNE", "NE", "ENE", "E", "ESE", "SE", "SSE", "S", "SSW", "SW", "WSW", "W", "WNW", "NW", "NNW")
EARTH_RADIUS_KM = 6371.0
# WEATHER-5K [PUB data_provider/station_dataset.py]: columns and the fixed global z-score (TMP, DEW, WND_ANGLE,
# WND_RATE, SLP)
WEATHER5K_COLUMNS = ("DATE", "TMP", "DEW", "WND_ANGLE", "WND_RATE", "SLP")
WEATHER5K_MEAN = (12.70852261, 6.52705582, 191.18867587, 3.36941836, 1014.85317029)
WEATHER5K_STD = (13.08167293, 12.13875438, 99.67403125, 2.65729403, 9.17480999)


@dataclass(frozen=True)
class StationData:
    """Hourly multi-station weather: ``values`` (T, S, C) on the hourly grid ``times`` (T,), NaN where missing;
    ``coords`` (S, 2) station positions in km (x east, y north); ``gaps`` the gap-handling counts."""

    times: np.ndarray
    values: np.ndarray
    coords: np.ndarray
    stations: tuple[str, ...]
    variables: tuple[str, ...] = VARIABLES
    gaps: dict[str, int] = field(default_factory=dict)

    def slice(self, start: str | None = None, end: str | None = None) -> StationData:
        """The hours in [start, end) (ISO dates; None = open end)."""
        keep = np.ones(len(self.times), dtype=bool)
        if start is not None:
            keep &= self.times >= np.datetime64(start, "h")
        if end is not None:
            keep &= self.times < np.datetime64(end, "h")
        return StationData(self.times[keep], self.values[keep], self.coords, self.stations, self.variables, self.gaps)


def wind_components(direction_deg: np.ndarray, speed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Meteorological direction (where the wind blows FROM, degrees clockwise from north) and speed -> (u, v),
    u eastward, v northward: ``u = -speed sin(dir)``, ``v = -speed cos(dir)``."""
    theta = np.deg2rad(direction_deg)
    return -speed * np.sin(theta), -speed * np.cos(theta)


def project_km(latlon: np.ndarray) -> np.ndarray:
    """(lat, lon) degrees (S, 2) -> (x, y) km on the local equirectangular plane around their mean."""
    lat, lon = np.deg2rad(latlon[:, 0]), np.deg2rad(latlon[:, 1])
    x = EARTH_RADIUS_KM * np.cos(lat.mean()) * (lon - lon.mean())
    return np.stack([x, EARTH_RADIUS_KM * (lat - lat.mean())], axis=1)


def _check_columns(frame: pd.DataFrame, required: tuple[str, ...], path: Path) -> None:
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise fail("path", str(path), f"a station file with the columns {list(required)}; missing {missing}")


def _check_increasing(times: np.ndarray, path: Path) -> None:
    bad = np.flatnonzero(np.diff(times) <= np.timedelta64(0))
    if bad.size:
        i = int(bad[0]) + 1
        raise fail(
            "path", str(path), f"strictly increasing timestamps; row {i} ({times[i]}) is not after {times[i - 1]}"
        )


def _on_hourly_grid(times: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows placed on the full hourly grid from the first to the last time; absent hours become NaN."""
    grid = np.arange(times[0], times[-1] + np.timedelta64(1, "h"), np.timedelta64(1, "h"))
    out = np.full((len(grid), values.shape[1]), np.nan)
    out[(times - grid[0]).astype(np.int64)] = values
    return grid, out


def load_beijing_station(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """One Beijing station CSV -> (times (T,) datetime64[h], values (T, 6) in ``VARIABLES`` order).

    Calm hours (``wd`` missing, ``WSPM`` = 0) get u = v = 0; a missing ``wd`` with wind blowing stays NaN.
    """
    path = Path(path)
    frame = pd.read_csv(path, usecols=lambda c: c in BEIJING_COLUMNS)
    _check_columns(frame, BEIJING_COLUMNS, path)
    times = pd.to_datetime(frame[["year", "month", "day", "hour"]]).to_numpy().astype("datetime64[h]")
    _check_increasing(times, path)
    wd = frame["wd"]
    unknown = sorted(set(wd.dropna()) - set(COMPASS))
    if unknown:
        raise fail("path", str(path), f"wind directions (wd) from the 16-point compass {COMPASS}; found {unknown[:5]}")
    direction = wd.map({name: 22.5 * i for i, name in enumerate(COMPASS)}).to_numpy(dtype=float, copy=True)
    speed = frame["WSPM"].to_numpy(dtype=float, copy=True)
    if (speed < 0).any():
        raise fail("path", str(path), "wind speeds WSPM >= 0")
    direction[np.isnan(direction) & (speed == 0)] = 0.0  # calm: direction undefined, u = v = 0
    u, v = wind_components(direction, speed)
    values = np.column_stack([frame[c].to_numpy(dtype=float) for c in ("TEMP", "PRES", "DEWP", "RAIN")] + [u, v])
    return _on_hourly_grid(times, values)


def nan_runs(column: np.ndarray) -> list[tuple[int, int]]:
    """(start, length) of every run of NaN in a 1-D array."""
    isnan = np.concatenate([[False], np.isnan(column), [False]])
    edges = np.flatnonzero(np.diff(isnan.astype(np.int8)))
    return [(int(a), int(b - a)) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def fill_gaps(values: np.ndarray, max_gap: int, long_runs: str = "exclude") -> tuple[np.ndarray, dict[str, int]]:
    """Interpolate interior NaN runs of at most ``max_gap`` steps linearly along axis 0 (every column apart).

    Longer runs, and runs touching either end, stay NaN (``long_runs="exclude"``: windows over them are dropped
    later) or raise (``long_runs="raise"``). Returns the filled copy and the counts
    ``{runs_interpolated, hours_interpolated, runs_excluded, hours_excluded}``.
    """
    check_int("max_gap", max_gap, 0)
    if long_runs not in ("exclude", "raise"):
        raise fail("long_runs", long_runs, "'exclude' or 'raise'")
    out = np.array(values, dtype=float)
    flat = out.reshape(len(out), -1)
    counts = dict.fromkeys(("runs_interpolated", "hours_interpolated", "runs_excluded", "hours_excluded"), 0)
    for j in range(flat.shape[1]):
        column = flat[:, j]
        for start, length in nan_runs(column):
            interior = start > 0 and start + length < len(column)
            if interior and length <= max_gap:
                left, right = column[start - 1], column[start + length]
                column[start : start + length] = left + (right - left) * np.arange(1, length + 1) / (length + 1)
                counts["runs_interpolated"] += 1
                counts["hours_interpolated"] += length
            elif long_runs == "raise":
                raise fail(
                    "values", f"NaN run of {length} steps at row {start}, column {j}", f"runs <= max_gap={max_gap}"
                )
            else:
                counts["runs_excluded"] += 1
                counts["hours_excluded"] += length
    return out, counts


def window_starts(valid: np.ndarray, length: int, stride: int = 1) -> np.ndarray:
    """Start indices s (multiples of ``stride``) with ``valid[s : s + length]`` all true: the windows that
    avoid every excluded gap."""
    valid = np.asarray(valid, dtype=bool)
    check_int("length", length, 1, len(valid))
    check_int("stride", stride, 1)
    bad = np.concatenate([[0], np.cumsum(~valid)])
    starts = np.arange(0, len(valid) - length + 1, stride)
    return starts[bad[starts + length] - bad[starts] == 0]


def load_beijing(
    stations: tuple[str, ...] = tuple(BEIJING_STATIONS),
    start: str | None = None,
    end: str | None = None,
    max_gap: int = 6,
) -> StationData:
    """The Beijing stations on one hourly grid, gaps <= ``max_gap`` hours interpolated (longer ones left NaN)."""
    unknown = [s for s in stations if s not in BEIJING_STATIONS]
    if not stations or unknown:
        raise fail("stations", stations, f"a non-empty tuple of names from {list(BEIJING_STATIONS)}")
    series = [load_beijing_station(fetch_file(f"beijing-air/PRSA_Data_{s}_20130301-20170228.csv")) for s in stations]
    times = series[0][0]
    if any(len(t) != len(times) or (t != times).any() for t, _ in series):
        raise fail("stations", stations, "stations on the same hourly grid")
    values, gaps = fill_gaps(np.stack([v for _, v in series], axis=1), max_gap)
    coords = project_km(np.array([BEIJING_STATIONS[s] for s in stations]))
    return StationData(times, values, coords, tuple(stations), VARIABLES, gaps).slice(start, end)


def load_weather5k_station(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """A WEATHER-5K station CSV -> (times (T,) datetime64[h], values (T, 5): TMP, DEW, WND_ANGLE, WND_RATE, SLP).

    Extra columns are ignored; wind angles must lie in [0, 360] and rates be >= 0. The official pipeline reads
    rows as consecutive hours, so a file with a missing hour or a missing value is rejected (ValueError naming
    the file and the first gap) rather than loaded with windows spanning the gap (issue 27).
    """
    path = Path(path)
    frame = pd.read_csv(path)
    _check_columns(frame, WEATHER5K_COLUMNS, path)
    times = pd.to_datetime(frame["DATE"]).to_numpy().astype("datetime64[h]")
    _check_increasing(times, path)
    steps = np.diff(times).astype(np.int64)
    if (steps != 1).any():
        i = int(np.flatnonzero(steps != 1)[0])
        raise fail(
            "path",
            str(path),
            f"consecutive hourly rows; {int((steps - 1).sum())} hours are missing, the first gap after {times[i]} "
            f"(next row {times[i + 1]})",
        )
    values = frame[list(WEATHER5K_COLUMNS[1:])].to_numpy(dtype=float)
    missing = np.argwhere(np.isnan(values))
    if missing.size:
        row, col = missing[0]
        raise fail(
            "path",
            str(path),
            f"no missing values; {len(missing)} found, the first {WEATHER5K_COLUMNS[1 + col]} at {times[row]}",
        )
    angle, rate = values[:, 2], values[:, 3]
    if ((angle < 0) | (angle > 360)).any():
        raise fail("path", str(path), "WND_ANGLE in [0, 360] degrees")
    if (rate < 0).any():
        raise fail("path", str(path), "WND_RATE >= 0")
    return times, values


def load_weather5k_percentiles(path: str | Path) -> dict[str, np.ndarray]:
    """WEATHER-5K's ``percentile.json``: station file name -> thresholds (5 variables, P) ascending along P
    (P even: low thresholds then their high mirrors, e.g. 0.5, 2, 5, 10, 90, 95, 98, 99.5th percentiles)."""
    path = Path(path)
    table = json.loads(path.read_text())
    out = {}
    for station, rows in table.items():
        thresholds = np.asarray(rows, dtype=float)
        if thresholds.ndim != 2 or thresholds.shape[0] != 5 or thresholds.shape[1] % 2:
            raise fail("path", str(path), f"(5, even) thresholds per station; {station} has {thresholds.shape}")
        if (np.diff(thresholds, axis=1) < 0).any():
            raise fail("path", str(path), f"ascending thresholds (low <= high); {station} is not")
        out[station] = thresholds
    return out


def synthetic_stations(
    n_stations: int = 16,
    hours: int = 24 * 90,
    kappa: float = 0.8,
    noise: float = 0.1,
    seed: int = 0,
    domain_km: float = 200.0,
    length_scale: float = 50.0,
) -> StationData:
    """Generated stand-in stations on a ``domain_km`` square: moving Gaussian highs/lows give the pressure
    (hPa); the wind is geostrophic-like, ``w = kappa * k x grad p`` (m/s per hPa/100 km: perpendicular to the
    gradient, speed proportional to it) plus ``noise``, with ``grad p`` the station gradient operator
    (``physics.gradient_operator(coords, length_scale)``), so that the relation holds exactly on the stations;
    temperature has diurnal and slow cycles, dew point a positive depression below it, rain falls where the
    pressure is low."""
    check_int("n_stations", n_stations, 3)
    check_int("hours", hours, 2)
    check_positive("kappa", kappa)
    if noise < 0:
        raise fail("noise", noise, "a number >= 0")
    rng = np.random.default_rng(seed)
    coords = rng.uniform(0, domain_km, size=(n_stations, 2))
    t = np.arange(hours, dtype=float)
    n_systems = 4
    amplitude = rng.choice([-1.0, 1.0], n_systems) * rng.uniform(8, 15, n_systems)  # hPa
    width = rng.uniform(0.8, 1.2, n_systems) * domain_km  # synoptic systems are broader than the network
    start = rng.uniform(0, domain_km, (n_systems, 2))
    velocity = rng.uniform(-1.5, 1.5, (n_systems, 2))  # km/h
    centres = (start[:, None] + velocity[:, None] * t[None, :, None]) % domain_km  # (K, T, 2)
    offset = coords[None, None] - centres[:, :, None]  # (K, T, S, 2)
    bump = amplitude[:, None, None] * np.exp(-(offset**2).sum(-1) / (2 * width[:, None, None] ** 2))
    pressure = 1013.0 + bump.sum(0)  # (T, S)
    grad = np.einsum("sdj,tj->tsd", gradient_operator(coords, length_scale), pressure)  # hPa per 100 km
    u = kappa * -grad[..., 1] + noise * rng.normal(size=pressure.shape)  # k x grad p = (-dp/dy, dp/dx)
    v = kappa * grad[..., 0] + noise * rng.normal(size=pressure.shape)
    diurnal = 5 * np.sin(2 * np.pi * (t - 9) / 24)[:, None]
    temp = 15 + diurnal + 3 * np.sin(2 * np.pi * t / (24 * 30))[:, None] + rng.normal(0, 0.5, pressure.shape)
    dew = temp - rng.gamma(2.0, 2.0, pressure.shape)
    rain = np.where(pressure < 1003.0, rng.exponential(1.0, pressure.shape), 0.0)
    values = np.stack([temp, pressure, dew, rain, u, v], axis=-1)
    times = np.datetime64("2020-01-01T00", "h") + np.arange(hours).astype("timedelta64[h]")
    return StationData(times, values, coords, tuple(f"S{i:02d}" for i in range(n_stations)))
