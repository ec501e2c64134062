"""WEATHER-5K's benchmark pipeline, the data path of the ``paper`` config.

The official semantics [PUB data_provider/station_dataset.py, exp/exp_global_weather_forecasting.py of
taohan10200/WEATHER-5K]:

* station files ``<root>/global_weather_stations/<station>.csv`` (hourly, DATE + TMP, DEW, WND_ANGLE, WND_RATE,
  SLP) and ``<root>/percentile.json`` (extreme thresholds per station, used on the test split);
* splits by calendar: train 2014-01-01 00h .. 2021-12-31 23h, val 2022, test 2023 (``WEATHER5K_SPLITS``);
  windows never cross a split boundary;
* a fixed global z-score (``WEATHER5K_MEAN``, ``WEATHER5K_STD``), the same for every station and split;
* time marks ``timeF`` at hourly frequency: hour / 23, weekday / 6, (day - 1) / 30, (day of year - 1) / 365,
  each minus 0.5;
* windows indexed per station: with ``n = T - (seq_len + pred_len - 1)`` windows per station, index ``i`` is
  station ``i // n`` starting at hour ``i % n``; the input is ``seq_len`` hours, the target block the last
  ``label_len + pred_len`` hours of the window, and the decoder input is the target block's first
  ``label_len`` hours followed by ``pred_len`` zeros; losses and scores use the last ``pred_len`` hours.

Stations are taken in sorted file-name order (the official ``glob`` order is the file system's). ``stride``
> 1 keeps every ``stride``-th start per station (ours, to score a subset of the test windows).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from icml26_shared import check_int, fail
from icml26_shared.cache import MIRROR_ENV, cache_dir

from .data import WEATHER5K_COLUMNS, WEATHER5K_MEAN, WEATHER5K_STD, load_weather5k_percentiles, load_weather5k_station
from .training import Standardiser

WEATHER5K_VARIABLES = WEATHER5K_COLUMNS[1:]
WEATHER5K_SPLITS = {
    "train": ("2014-01-01T00", "2021-12-31T23"),
    "val": ("2022-01-01T00", "2022-12-31T23"),
    "test": ("2023-01-01T00", "2023-12-31T23"),
}  # first and last hour, inclusive
WEATHER5K_FOLDER = "weather-5k"  # under $ICML26_DATA_MIRROR or <cache>/data
WEATHER5K_SOURCE = (
    "https://github.com/taohan10200/WEATHER-5K (the OneDrive link in its README; unzip so that "
    "global_weather_stations/ and percentile.json sit in the folder)"
)


def weather5k_standardiser() -> Standardiser:
    """The official fixed z-score of TMP, DEW, WND_ANGLE, WND_RATE, SLP (no statistics fitted on the data)."""
    return Standardiser(np.array(WEATHER5K_MEAN), np.array(WEATHER5K_STD))


def time_marks(times: np.ndarray) -> np.ndarray:
    """The official ``timeF`` marks (T, 4) float32 of hourly ``times``: hour, weekday, day of month, day of year."""
    index = pd.DatetimeIndex(np.asarray(times, dtype="datetime64[h]"))
    marks = [index.hour / 23.0, index.day_of_week / 6.0, (index.day - 1) / 30.0, (index.day_of_year - 1) / 365.0]
    return (np.stack([np.asarray(m, dtype=float) for m in marks], axis=1) - 0.5).astype(np.float32)


def weather5k_root(root: str | Path | None = None) -> Path:
    """The WEATHER-5K folder: ``root`` when given, else ``$ICML26_DATA_MIRROR/weather-5k``, else
    ``<cache>/data/weather-5k``. FileNotFoundError names every place looked at and the data's source."""
    candidates = [Path(root)] if root else []
    if not root and os.environ.get(MIRROR_ENV):
        candidates.append(Path(os.environ[MIRROR_ENV]) / WEATHER5K_FOLDER)
    if not root:
        candidates.append(cache_dir() / "data" / WEATHER5K_FOLDER)
    for folder in candidates:
        if (folder / "percentile.json").is_file() and any((folder / "global_weather_stations").glob("*.csv")):
            return folder
    looked = ", ".join(str(c) for c in candidates)
    raise FileNotFoundError(
        f"WEATHER-5K is not on this machine: expected global_weather_stations/*.csv and percentile.json in "
        f"{looked}. Source: {WEATHER5K_SOURCE}."
    )


def decoder_input(seq_y: torch.Tensor, label_len: int, pred_len: int) -> torch.Tensor:
    """The official decoder input: the first ``label_len`` hours of the target block, then ``pred_len`` zeros."""
    return torch.cat([seq_y[:, :label_len], torch.zeros_like(seq_y[:, -pred_len:])], dim=1)


@dataclass(frozen=True)
class Weather5KSplit:
    """One split of WEATHER-5K: ``values`` (N, T, 5) standardised float32, ``marks`` (T, 4), ``times`` (T,),
    ``percentiles`` (N, 5, P) on the test split (else None), indexed per station as the official dataset."""

    values: np.ndarray
    marks: np.ndarray
    times: np.ndarray
    stations: tuple[str, ...]
    seq_len: int
    label_len: int
    pred_len: int
    stride: int = 1
    percentiles: np.ndarray | None = None

    @classmethod
    def load(
        cls,
        root: str | Path,
        split: str,
        seq_len: int = 48,
        label_len: int = 24,
        pred_len: int = 72,
        stride: int = 1,
    ) -> Weather5KSplit:
        """Every station of ``root`` on the hours of ``split``; each file must cover them without a gap."""
        if split not in WEATHER5K_SPLITS:
            raise fail("split", split, f"one of {list(WEATHER5K_SPLITS)}")
        check_int("seq_len", seq_len, 1)
        check_int("label_len", label_len, 0, seq_len)
        check_int("pred_len", pred_len, 1)
        check_int("stride", stride, 1)
        first, last = (np.datetime64(t, "h") for t in WEATHER5K_SPLITS[split])
        times = np.arange(first, last + np.timedelta64(1, "h"), np.timedelta64(1, "h"))
        if seq_len + pred_len > len(times):
            raise fail("seq_len", seq_len, f"seq_len + pred_len <= the {len(times)} hours of the {split} split")
        paths = sorted(Path(root, "global_weather_stations").glob("*.csv"))
        if not paths:
            raise fail("root", str(root), "a folder with global_weather_stations/*.csv")
        scaler, blocks = weather5k_standardiser(), []
        for path in paths:
            station_times, values = load_weather5k_station(path)
            start = np.searchsorted(station_times, first)
            if start == len(station_times) or station_times[start] != first or len(station_times) - start < len(times):
                raise fail(
                    "root",
                    str(root),
                    f"station files covering the {split} split {first} .. {last}; {path.name} covers "
                    f"{station_times[0]} .. {station_times[-1]}",
                )
            blocks.append(scaler.transform(values[start : start + len(times)]).astype(np.float32))
        percentiles = None
        if split == "test":
            table = load_weather5k_percentiles(Path(root, "percentile.json"))
            missing = [p.name for p in paths if p.name not in table]
            if missing:
                raise fail("root", str(root), f"percentile.json thresholds for every station; missing {missing[:5]}")
            percentiles = np.stack([table[p.name] for p in paths])
        stations = tuple(p.name for p in paths)
        return cls(
            np.stack(blocks), time_marks(times), times, stations, seq_len, label_len, pred_len, stride, percentiles
        )

    @property
    def windows_per_station(self) -> int:
        """Window starts per station: every ``stride``-th of the official ``T - (seq_len + pred_len - 1)``."""
        return -(-(len(self.times) - (self.seq_len + self.pred_len - 1)) // self.stride)

    def __len__(self) -> int:
        return len(self.stations) * self.windows_per_station

    def locate(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Window indices -> (station ids, start hours), the official ``i // n``, ``i % n``."""
        index = np.asarray(index, dtype=np.int64).reshape(-1)
        if index.size and (index.min() < 0 or index.max() >= len(self)):
            raise fail("index", index, f"window indices in [0, {len(self)})")
        n = self.windows_per_station
        return index // n, (index % n) * self.stride

    def sample(self, index: np.ndarray) -> tuple[torch.Tensor, ...]:
        """seq_x (B, L, 5), seq_y (B, label_len + H, 5), x_mark (B, L, 4), y_mark (B, label_len + H, 4), as the
        official ``__getitem__``; on the test split also the stations' percentiles (B, 1, 5, P)."""
        station, start = self.locate(index)
        span = start[:, None] + np.arange(self.seq_len + self.pred_len)
        block, marks = self.values[station[:, None], span], self.marks[span]
        tail = self.label_len + self.pred_len
        out = (block[:, : self.seq_len], block[:, -tail:], marks[:, : self.seq_len], marks[:, -tail:])
        out = tuple(torch.from_numpy(np.ascontiguousarray(a)) for a in out)
        if self.percentiles is not None:
            out = (*out, torch.from_numpy(self.percentiles[station][:, None]))
        return out

    def batch(self, index: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        """What ``training.train``/``predict`` use: x (B, L, 1, 5) and the last ``pred_len`` target hours
        (B, H, 1, 5): each window is one station (the official per-station protocol, features M)."""
        seq_x, seq_y = self.sample(index)[:2]
        return seq_x[:, :, None], seq_y[:, -self.pred_len :, None]
