"""Argument checks with one message shape: ``<name>=<value>: expected <what>``.

Every public function in the repo validates through these, so a researcher always reads which
argument was wrong, what it was and what was expected. Nothing is clamped or wrapped silently.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np


def _show(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"array(shape={value.shape}, dtype={value.dtype})"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def fail(name: str, value: Any, expected: str) -> ValueError:
    """The one error shape; ``raise fail("eps", eps, "a finite number > 0")``."""
    return ValueError(f"{name}={_show(value)}: expected {expected}")


def check_number(name: str, value: Any) -> float:
    """A finite real number (bool is refused)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise fail(name, value, "a real number")
    if not math.isfinite(float(value)):
        raise fail(name, value, "a finite number")
    return float(value)


def check_positive(name: str, value: Any) -> float:
    """A finite number > 0."""
    v = check_number(name, value)
    if v <= 0:
        raise fail(name, value, "a finite number > 0")
    return v


def check_open_interval(name: str, value: Any, low: float, high: float) -> float:
    """A finite number strictly inside (low, high)."""
    v = check_number(name, value)
    if not low < v < high:
        raise fail(name, value, f"a number in the open interval ({low}, {high})")
    return v


def check_closed_interval(name: str, value: Any, low: float, high: float) -> float:
    """A finite number inside [low, high]."""
    v = check_number(name, value)
    if not low <= v <= high:
        raise fail(name, value, f"a number in [{low}, {high}]")
    return v


def check_int(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """An integer (bool refused) inside [low, high] where given."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise fail(name, value, "an integer")
    v = int(value)
    if (low is not None and v < low) or (high is not None and v > high):
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise fail(name, value, f"an integer in [{lo}, {hi}]")
    return v


def check_choice(name: str, value: Any, choices: Iterable[Any]) -> Any:
    """One of ``choices``."""
    options = list(choices)
    if value not in options:
        raise fail(name, value, f"one of {options}")
    return value


def check_array(
    name: str,
    value: Any,
    ndim: int | Sequence[int] | None = None,
    finite: bool = True,
    dtype: Any = None,
) -> np.ndarray:
    """A numeric numpy array with the given number of dimensions, all finite unless ``finite=False``."""
    try:
        arr = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError) as err:
        raise fail(name, value, f"an array-like of numbers ({err})") from None
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
        raise fail(name, value, "a numeric array")
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            raise fail(name, arr, f"an array with ndim in {allowed}, got ndim={arr.ndim}")
    if arr.size == 0:
        raise fail(name, arr, "a non-empty array")
    if finite and np.issubdtype(arr.dtype, np.inexact) and not np.isfinite(arr).all():
        raise fail(name, arr, "finite values (found NaN or inf)")
    return arr


def check_same_length(**arrays: Any) -> int:
    """All arrays share their first dimension; returns it."""
    lengths = {k: len(v) for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"{', '.join(lengths)}: expected the same length, got {lengths}")
    return next(iter(lengths.values()))
