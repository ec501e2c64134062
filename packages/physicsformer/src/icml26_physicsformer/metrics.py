"""Forecast scores on physical values (numpy): MAE per variable and lead time, extreme-event scores, roughness.

Two different extreme scores, named apart:

* ``extreme_hit_rate``: what WEATHER-5K's code calls "SEDI" [PUB utils/metrics.py]: for threshold pairs
  (low_i, high_i) (percentiles 0.5/99.5, 2/98, 5/95, 10/90 of each station and variable), the observed events
  ``truth < low`` or ``truth > high`` and the hits (the forecast on the same side of the same threshold);
  score = hits / events per pair and variable.
* ``sedi``: the textbook Symmetric Extremal Dependence Index (Ferro & Stephenson 2011),
  ``(ln F - ln H - ln(1-F) + ln(1-H)) / (ln F + ln H + ln(1-F) + ln(1-H))`` with hit rate H and false-alarm
  rate F of the event ``value > threshold``; NaN where H or F is 0 or 1 (the index is undefined there).
"""

from __future__ import annotations

import numpy as np
from icml26_shared import check_array, fail

EXTREME_PERCENTILES = (0.5, 2.0, 5.0, 10.0, 90.0, 95.0, 98.0, 99.5)  # WEATHER-5K's percentile.json layout


def _pair(forecast: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    forecast = check_array("forecast", forecast, ndim=4)
    truth = check_array("truth", truth, ndim=4)
    if forecast.shape != truth.shape:
        raise fail("forecast", forecast, f"the shape of truth {truth.shape} (B, H, S, C)")
    return forecast, truth


def mae_by_lead(forecast: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """MAE (H, C) per lead time and variable over windows and stations; arrays (B, H, S, C)."""
    forecast, truth = _pair(forecast, truth)
    return np.abs(forecast - truth).mean(axis=(0, 2))


def percentile_thresholds(history: np.ndarray, percentiles: tuple[float, ...] = EXTREME_PERCENTILES) -> np.ndarray:
    """Per station and variable thresholds (S, C, P) from a history (T, S, C) (NaN ignored)."""
    history = check_array("history", history, ndim=3, finite=False)
    p = np.asarray(percentiles, dtype=float)
    if len(p) % 2 or (np.diff(p) <= 0).any() or p[0] < 0 or p[-1] > 100:
        raise fail("percentiles", percentiles, "an even number of ascending percentiles in [0, 100]")
    return np.moveaxis(np.nanpercentile(history, p, axis=0), 0, -1)


def extreme_hit_rate(forecast: np.ndarray, truth: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """WEATHER-5K's "SEDI": hits / events (P // 2, C) per threshold pair and variable (NaN: no event).

    thresholds (S, C, P) ascending along P: pair i is (thresholds[..., i], thresholds[..., P - 1 - i])."""
    forecast, truth = _pair(forecast, truth)
    thresholds = check_array("thresholds", thresholds, ndim=3)
    if thresholds.shape[:2] != truth.shape[2:] or thresholds.shape[2] % 2:
        raise fail("thresholds", thresholds, f"shape ({truth.shape[2]}, {truth.shape[3]}, even P)")
    if (np.diff(thresholds, axis=-1) < 0).any():
        raise fail("thresholds", thresholds, "ascending thresholds along the last axis (low <= high)")
    P = thresholds.shape[-1]
    out = np.full((P // 2, truth.shape[-1]), np.nan)
    for i in range(P // 2):
        low, high = thresholds[..., i], thresholds[..., P - 1 - i]  # (S, C), broadcast over (B, H)
        event_low, event_high = truth < low, truth > high
        hits = (event_low & (forecast < low)).sum(axis=(0, 1, 2)) + (event_high & (forecast > high)).sum(axis=(0, 1, 2))
        events = event_low.sum(axis=(0, 1, 2)) + event_high.sum(axis=(0, 1, 2))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[i] = np.where(events > 0, hits / events, np.nan)
    return out


def sedi(forecast: np.ndarray, truth: np.ndarray, threshold: np.ndarray) -> np.ndarray:
    """Textbook SEDI (C,) of the event ``value > threshold``; threshold (S, C) per station and variable."""
    forecast, truth = _pair(forecast, truth)
    threshold = check_array("threshold", threshold, ndim=2)
    if threshold.shape != truth.shape[2:]:
        raise fail("threshold", threshold, f"shape {truth.shape[2:]} (S, C)")
    observed, predicted = truth > threshold, forecast > threshold
    axes = (0, 1, 2)
    H = (observed & predicted).sum(axes) / np.maximum(observed.sum(axes), 1)
    F = (~observed & predicted).sum(axes) / np.maximum((~observed).sum(axes), 1)
    defined = (H > 0) & (H < 1) & (F > 0) & (F < 1) & observed.any(axes) & (~observed).any(axes)
    with np.errstate(divide="ignore", invalid="ignore"):
        lF, lH, l1F, l1H = np.log(F), np.log(H), np.log1p(-F), np.log1p(-H)
        score = (lF - lH - l1F + l1H) / (lF + lH + l1F + l1H)
    return np.where(defined, score, np.nan)


def roughness(forecast: np.ndarray) -> float:
    """Mean |second difference| of the forecast along the lead axis (B, H, S, C)."""
    forecast = check_array("forecast", forecast, ndim=4)
    return float(np.abs(np.diff(forecast, n=2, axis=1)).mean())
