"""Drawing helpers for the sandbox screenshots: real glyphs from registry packages, noise, markers.

Text glyphs are the DejaVu TrueType fonts that matplotlib ships; image glyphs are scikit-learn's
``load_digits`` handwritten digits (8x8, upscaled), split by index parity into a train pool (even) and a
held-out test pool (odd) so that evaluation screenshots never reuse a training digit image.
Everything is drawn on a 64x64 RGB canvas (the environment upscales it for larger screens).
"""

from __future__ import annotations

import threading
from functools import cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

CANVAS = 64  # every layout is defined on a 64x64 grid
FONTS = ("DejaVuSans-Bold.ttf", "DejaVuSerif-Bold.ttf", "DejaVuSansMono-Bold.ttf")
SPLITS = ("train", "test")
_FONT_LOCK = threading.Lock()  # the cached fonts are shared: one FreeType face is not safe in two threads at once


@cache
def font(size: int, name: str = FONTS[0]) -> ImageFont.FreeTypeFont:
    """A DejaVu font from matplotlib's bundled ``mpl-data/fonts/ttf`` (located without importing pyplot)."""
    import matplotlib

    return ImageFont.truetype(str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / name), size)


@cache
def digit_pool(split: str) -> tuple[np.ndarray, np.ndarray]:
    """(images (N, 8, 8) in [0, 1], labels (N,)) of one split of scikit-learn's handwritten digits."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    index = np.arange(len(digits.target))[SPLITS.index(split) :: 2]
    return digits.images[index] / 16.0, digits.target[index]


def digit_image(split: str, label: int, rng: np.random.Generator, size: int) -> Image.Image:
    """A random handwritten ``label`` from ``split``, upscaled to ``size`` px (dark ink on white)."""
    images, labels = digit_pool(split)
    image = images[rng.choice(np.flatnonzero(labels == label))]
    ink = (255 * (1 - image)).astype(np.uint8)
    return Image.fromarray(ink, "L").resize((size, size), Image.BILINEAR).convert("RGB")


def noise_background(rng: np.random.Generator, amount: float = 40.0) -> Image.Image:
    """A light random-colour canvas with per-pixel noise (the CAPTCHA look)."""
    base = rng.integers(170, 236, size=3)
    pixels = base + rng.normal(0, amount, size=(CANVAS, CANVAS, 3))
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), "RGB")


def plain_background(shade: int = 236) -> Image.Image:
    """A clean GUI canvas."""
    return Image.new("RGB", (CANVAS, CANVAS), (shade, shade, shade))


def draw_glyph(
    canvas: Image.Image,
    text: str,
    center: tuple[float, float],
    size: int,
    rng: np.random.Generator | None = None,
    max_angle: float = 0.0,
    fill: tuple[int, int, int] = (20, 20, 20),
    font_name: str = FONTS[0],
) -> None:
    """Draw ``text`` centred at ``center``, rotated by a random angle in [-max_angle, max_angle] degrees."""
    f = font(size, font_name)
    with _FONT_LOCK:
        left, top, right, bottom = f.getbbox(text)
        tile = Image.new("RGBA", (right - left + 4, bottom - top + 4), (0, 0, 0, 0))
        ImageDraw.Draw(tile).text((2 - left, 2 - top), text, font=f, fill=(*fill, 255))
    if max_angle and rng is not None:
        tile = tile.rotate(float(rng.uniform(-max_angle, max_angle)), resample=Image.BILINEAR, expand=True)
    x, y = round(center[0] - tile.width / 2), round(center[1] - tile.height / 2)
    canvas.paste(tile, (x, y), tile)


def noise_lines(canvas: Image.Image, rng: np.random.Generator, count: int) -> None:
    """``count`` random dark strokes across the canvas."""
    draw = ImageDraw.Draw(canvas)
    for _ in range(count):
        xy = [tuple(int(v) for v in rng.integers(0, CANVAS, 2)) for _ in range(2)]
        draw.line(xy, fill=tuple(int(v) for v in rng.integers(0, 120, 3)), width=1)


def status_bar(canvas: Image.Image, status: str) -> None:
    """A 2-px strip on top: red after a wrong attempt, green after progress, absent otherwise."""
    colour = {"wrong": (220, 30, 30), "invalid": (220, 30, 30), "progress": (30, 180, 30)}.get(status)
    if colour is not None:
        ImageDraw.Draw(canvas).rectangle((0, 0, CANVAS - 1, 1), fill=colour)


def to_array(canvas: Image.Image, scale: int) -> np.ndarray:
    """The screenshot as (H, W, 3) uint8, upscaled by an integer ``scale`` (nearest neighbour)."""
    if scale != 1:
        canvas = canvas.resize((CANVAS * scale, CANVAS * scale), Image.NEAREST)
    return np.asarray(canvas, dtype=np.uint8).copy()
