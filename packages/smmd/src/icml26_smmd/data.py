"""Generated numeric-target tasks: analogue clock images (clock-time recognition) and 2-digit addition.

``render_clocks``: grayscale clock faces drawn with Pillow (dial, 12 ticks, a short thick hour hand at
``(h mod 12 + m/60) * 30`` degrees, a long thin minute hand at ``6 m`` degrees), drawn at 2x and
downsampled (anti-aliased), with per-image jitter of hand length/width and Gaussian pixel noise. The
target text is ``"{h}:{m}"`` with h in 1..12 and m in 0..59, as a VLM would answer.

``addition_problems``: ``"aa+bb="`` with a, b in 0..99 (zero-padded) and the 3-digit zero-padded sum as
the answer, for a digit-level tokenizer (V_num = 0..9), on a random train/test split of all 10^4 pairs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from icml26_shared import check_closed_interval, check_int, fail

from .tokens import NumberTokenizer

MINUTES_PER_DIAL = 720


@dataclass(frozen=True)
class TokenTask:
    """Inputs and (n, T) target token ids; ``numeric_positions`` are the answer positions scored by MAE."""

    inputs: np.ndarray  # (n, 1, S, S) float32 images, or (n, L) int64 prompt token ids
    targets: np.ndarray  # (n, T) int64 answer token ids, ending with <eos>
    values: np.ndarray  # (n, k) int64 numeric answer values (clock: hour, minute; addition: the sum)


def _hand(draw, centre: float, angle_deg: float, length: float, width: int) -> None:
    theta = math.radians(angle_deg)
    end = (centre + length * math.sin(theta), centre - length * math.cos(theta))
    draw.line([(centre, centre), end], fill=255, width=width)


def render_clocks(
    minutes_of_day: np.ndarray, size: int = 32, noise: float = 0.1, rng: np.random.Generator | None = None
) -> np.ndarray:
    """Clock images (n, 1, size, size) in [0, 1] (plus noise) for times given in minutes 0..719."""
    from PIL import Image, ImageDraw

    size = check_int("size", size, 16)
    noise = check_closed_interval("noise", noise, 0.0, 1.0)
    t = np.asarray(minutes_of_day)
    if t.ndim != 1 or not np.issubdtype(t.dtype, np.integer) or t.size == 0 or t.min() < 0 or t.max() >= 720:
        raise fail("minutes_of_day", t, "a non-empty 1-d integer array with values in [0, 719]")
    rng = rng if rng is not None else np.random.default_rng(0)
    big, c = 2 * size, size  # drawn at 2x, centre of the big canvas
    out = np.empty((t.size, 1, size, size), dtype=np.float32)
    for k, minute_of_day in enumerate(t):
        h, m = divmod(int(minute_of_day), 60)
        image = Image.new("L", (big, big), 0)
        draw = ImageDraw.Draw(image)
        radius = 0.92 * c
        draw.ellipse([c - radius, c - radius, c + radius, c + radius], outline=110, width=2)
        for tick in range(12):
            a = math.radians(30 * tick)
            inner = 0.78 * radius if tick % 3 else 0.68 * radius
            p0 = (c + inner * math.sin(a), c - inner * math.cos(a))
            p1 = (c + 0.9 * radius * math.sin(a), c - 0.9 * radius * math.cos(a))
            draw.line([p0, p1], fill=150, width=2)
        _hand(draw, c, (h + m / 60) * 30, radius * rng.uniform(0.42, 0.52), int(rng.integers(4, 6)))
        _hand(draw, c, 6 * m, radius * rng.uniform(0.78, 0.88), int(rng.integers(2, 3)))
        small = image.resize((size, size), Image.Resampling.BILINEAR)
        out[k, 0] = np.asarray(small, dtype=np.float32) / 255.0
    return out + rng.normal(0.0, noise, size=out.shape).astype(np.float32)


def clock_task(n: int, tokenizer: NumberTokenizer, rng: np.random.Generator, size: int = 32, noise: float = 0.1):
    """``n`` random clock images and their answers ``"{h}:{m}" <eos>`` (h in 1..12) as tokens."""
    n = check_int("n", n, 1)
    t = rng.integers(0, MINUTES_PER_DIAL, size=n)
    hours, minutes = t // 60, t % 60
    hours = np.where(hours == 0, 12, hours)
    targets = [[*tokenizer.encode(f"{h}:{m}"), tokenizer.eos_id] for h, m in zip(hours, minutes, strict=True)]
    if {len(x) for x in targets} != {4}:
        raise fail("tokenizer", tokenizer.max_number_token, "single tokens for 0..59 (max_number_token >= 59)")
    values = np.stack([hours, minutes], axis=1).astype(np.int64)
    return TokenTask(render_clocks(t, size, noise, rng), np.array(targets, dtype=np.int64), values)


def addition_task(tokenizer: NumberTokenizer, n_train: int, n_test: int, rng: np.random.Generator):
    """Disjoint train/test splits of the 10^4 problems ``"aa+bb="`` -> ``"ccc" <eos>`` (digit tokens)."""
    n_train = check_int("n_train", n_train, 1)
    n_test = check_int("n_test", n_test, 1, 10_000 - n_train)
    if tokenizer.max_number_token != 9:
        raise fail("tokenizer", tokenizer.max_number_token, "a digit-level tokenizer (max_number_token = 9)")
    pairs = rng.permutation(10_000)[: n_train + n_test]

    def build(idx: np.ndarray) -> TokenTask:
        a, b = idx // 100, idx % 100
        prompts = [tokenizer.encode(f"{x:02d}+{y:02d}=") for x, y in zip(a, b, strict=True)]
        answers = [[*tokenizer.encode(f"{x + y:03d}"), tokenizer.eos_id] for x, y in zip(a, b, strict=True)]
        return TokenTask(np.array(prompts, dtype=np.int64), np.array(answers, dtype=np.int64), (a + b)[:, None])

    return build(pairs[:n_train]), build(pairs[n_train:])
