"""The seven CAPTCHA types and three general GUI tasks of the sandbox [INF: our set, see README].

Each task is a generator (``new``: a fresh instance with its verifiable answer, the privileged state),
a renderer (``draw``: the screenshot of a state, deterministic per state), a verifier (``apply``: the
state after an action, the feedback status and the privileged error category), a scripted oracle
(``oracle``: the correct action and its reasoning trace, read from the privileged state) and a weaker
policy's typical mistake (``mistake``: a wrong action of a named error category, for self-correction data).

All geometry is in 64x64 canvas pixels. ``keeps_state`` types (slider, rotation, ordered click, drag
match) keep the consequence of a wrong attempt on screen, so recovering needs the agent to read the
new state; the others load a fresh challenge after a wrong answer (as real text CAPTCHAs do).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import ImageDraw

from .actions import Action
from .render import (
    CANVAS,
    FONTS,
    digit_image,
    draw_glyph,
    noise_background,
    noise_lines,
    plain_background,
    status_bar,
)

STATUSES = ("solved", "wrong", "progress", "invalid")
ERRORS = (
    "none", "overshoot", "undershoot", "wrong_direction", "wrong_item", "misread", "missed_target", "wrong_action",
)  # fmt: skip
DEG_PER_PX = 7.5  # rotation captcha: the 48-px track spans 360 degrees
TRACK = (8, 56)  # x range of the rotation and general slider tracks

State = dict[str, Any]


def _rng(state: State) -> np.random.Generator:
    return np.random.default_rng(state["noise_seed"])


def _near(x: float, y: float, cx: float, cy: float, rx: float, ry: float) -> bool:
    return abs(x - cx) <= rx and abs(y - cy) <= ry


def _off_target(target: int, offsets: list[int], rng: np.random.Generator) -> int:
    """``target`` moved by a random offset (either sign) that stays on the track."""
    moves = [target + s * d for d in offsets for s in (-1, 1) if TRACK[0] <= target + s * d <= TRACK[1]]
    return int(rng.choice(moves))


def _miss(before: float, after: float, period: float | None = None) -> str:
    """The error of a drag that left the goal unreached. ``before``, ``after``: the signed residual
    (position minus goal) before and after the drag, ``after`` along the path the drag took (not
    wrapped); with a ``period``, every multiple of it is the goal too (the arrow is upright every 360
    degrees). Past a goal: overshoot; else nearer the goal than before (or not moved): undershoot; else
    wrong_direction: moved, but ended no nearer the goal (a rule on the residual's sign alone would call
    that undershoot)."""
    low, high = sorted((before, after))
    if period is None:
        passed, distance = low <= 0 <= high, abs(after)
    else:
        passed, distance = np.floor(high / period) * period >= low, min(after % period, -after % period)
    if passed:
        return "overshoot"
    return "undershoot" if distance < abs(before) or after == before else "wrong_direction"


@dataclass(frozen=True)
class Task:
    """Base class: subclasses fill in the generator, renderer, verifier, oracle and mistake."""

    name: str
    captcha: bool
    keeps_state: bool
    action: str  # the action kind this task accepts

    def new(self, rng: np.random.Generator, split: str) -> State:
        raise NotImplementedError

    def instruction(self, state: State) -> tuple[str, ...]:
        raise NotImplementedError

    def draw(self, state: State):
        raise NotImplementedError

    def verify(self, state: State, action: Action) -> tuple[State, str, str]:
        raise NotImplementedError

    def oracle(self, state: State) -> tuple[Action, str]:
        raise NotImplementedError

    def mistake(self, state: State, rng: np.random.Generator) -> Action:
        raise NotImplementedError

    def apply(self, state: State, action: Action) -> tuple[State, str, str]:
        """(next state, status in STATUSES, error in ERRORS); a wrong action kind is an invalid attempt."""
        if action.kind != self.action:
            return state, "invalid", "wrong_action"
        return self.verify(state, action)

    def _base(self, rng: np.random.Generator, split: str) -> State:
        return {"noise_seed": int(rng.integers(1 << 31)), "split": split, "status": "none"}


class TextTask(Task):
    """Distorted digits over noise and strokes; type them (OCR under heavy noise)."""

    def __init__(self) -> None:
        super().__init__("text", True, False, "type")

    def new(self, rng, split):
        return {**self._base(rng, split), "answer": "".join(str(d) for d in rng.integers(0, 10, 3))}

    def instruction(self, state):
        return ("type", "the", "characters")

    def _glyphs(self, state: State) -> str:
        return state["answer"]

    def draw(self, state):
        rng = _rng(state)
        canvas = noise_background(rng)
        font_name = FONTS[int(rng.integers(len(FONTS)))]
        for i, ch in enumerate(self._glyphs(state)):
            fill = tuple(int(v) for v in rng.integers(0, 90, 3))
            center = (12 + 20 * i + rng.uniform(-2, 2), 32 + rng.uniform(-6, 6))
            draw_glyph(canvas, ch, center, 22, rng, 25, fill, font_name)
        noise_lines(canvas, rng, 4)
        return canvas

    def verify(self, state, action):
        return (
            state,
            ("solved" if action.text == state["answer"] else "wrong"),
            ("none" if action.text == state["answer"] else "misread"),
        )

    def oracle(self, state):
        return Action("type", text=state["answer"]), f"The distorted characters read {state['answer']}; type them."

    def mistake(self, state, rng):
        wrong = list(state["answer"])
        i = int(rng.integers(len(wrong)))
        wrong[i] = str((int(wrong[i]) + int(rng.integers(1, 10))) % 10)
        return Action("type", text="".join(wrong))


class ArithmeticTask(TextTask):
    """A noisy 'a+b'; type the sum (reading plus reasoning)."""

    def __init__(self) -> None:
        Task.__init__(self, "arithmetic", True, False, "type")

    def new(self, rng, split):
        a, b = (int(v) for v in rng.integers(1, 10, 2))
        return {**self._base(rng, split), "a": a, "b": b, "answer": str(a + b)}

    def instruction(self, state):
        return ("type", "the", "sum")

    def _glyphs(self, state):
        return f"{state['a']}+{state['b']}"

    def oracle(self, state):
        return Action(
            "type", text=state["answer"]
        ), f"The challenge shows {state['a']} + {state['b']} = {state['answer']}."


class SliderTask(Task):
    """Drag the puzzle piece horizontally into the gap (precise control); tolerance 3 px."""

    tolerance = 3

    def __init__(self) -> None:
        super().__init__("slider", True, True, "drag")

    def new(self, rng, split):
        return {**self._base(rng, split), "gap": int(rng.integers(28, 55)), "y": int(rng.integers(20, 45)), "piece": 9}

    def instruction(self, state):
        return ("drag", "piece", "to", "gap")

    def draw(self, state):
        rng = _rng(state)
        canvas = noise_background(rng, 25)
        noise_lines(canvas, rng, 6)
        pixels = np.asarray(canvas).copy()
        g, y = state["gap"], state["y"]
        pixels[y - 6 : y + 6, g - 6 : g + 6] = (pixels[y - 6 : y + 6, g - 6 : g + 6] * 0.4).astype(np.uint8)
        from PIL import Image

        canvas = Image.fromarray(pixels)
        colour = tuple(int(v) for v in rng.integers(40, 200, 3))
        p = state["piece"]
        ImageDraw.Draw(canvas).rectangle((p - 6, y - 6, p + 5, y + 5), fill=colour, outline=(255, 255, 255))
        return canvas

    def verify(self, state, action):
        if not _near(action.x, action.y, state["piece"], state["y"], 6, 6):
            return state, "wrong", "missed_target"
        before = state["piece"] - state["gap"]
        piece = round(float(np.clip(state["piece"] + action.x2 - action.x, 6, CANVAS - 6)))
        state = {**state, "piece": piece}
        after = piece - state["gap"]
        if abs(after) <= self.tolerance:
            return state, "solved", "none"
        return state, "wrong", _miss(before, after)

    def oracle(self, state):
        p, g, y = state["piece"], state["gap"], state["y"]
        direction = "right" if g > p else "left"
        thought = f"The gap is at x={g}, the piece at x={p}; drag the piece {direction} by {abs(g - p)} px."
        return Action("drag", p, y, g, y), thought

    def mistake(self, state, rng):
        p, g, y = state["piece"], state["gap"], state["y"]
        if rng.random() < 0.2:
            return Action("drag", p, y + 10 * rng.choice([-1, 1]), g, y)
        return Action("drag", p, y, int(np.clip(g + rng.choice([-1, 1]) * rng.integers(5, 13), 0, CANVAS - 1)), y)


class RotationTask(Task):
    """Drag the knob along the track until the arrow points up (fine-grained vision); tolerance 15 deg."""

    tolerance = 15.0
    knob_y = 56

    def __init__(self) -> None:
        super().__init__("rotation", True, True, "drag")

    def new(self, rng, split):
        angle = int(rng.choice([a for a in range(-150, 181, 30) if a != 0]))
        return {**self._base(rng, split), "theta0": angle, "knob": 32}

    @staticmethod
    def angle(state: State) -> float:
        """The arrow's clockwise angle from upright, in (-180, 180]."""
        a = (state["theta0"] + (state["knob"] - 32) * DEG_PER_PX) % 360
        return a - 360 if a > 180 else a

    def instruction(self, state):
        return ("drag", "knob", "to", "rotate", "upright")

    def draw(self, state):
        rng = _rng(state)
        canvas = noise_background(rng, 20)
        draw = ImageDraw.Draw(canvas)
        draw.ellipse((12, 6, 52, 46), fill=(245, 245, 245), outline=(60, 60, 60))
        t = np.deg2rad(self.angle(state))
        shape = np.array([(0, -17), (8, -5), (3, -5), (3, 15), (-3, 15), (-3, -5), (-8, -5)], dtype=float)
        rotation = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
        points = shape @ rotation.T + (32, 26)
        draw.polygon([tuple(p) for p in points], fill=(30, 30, 160))
        draw.line((TRACK[0], self.knob_y, TRACK[1], self.knob_y), fill=(80, 80, 80), width=2)
        k = state["knob"]
        draw.ellipse((k - 3, self.knob_y - 3, k + 3, self.knob_y + 3), fill=(200, 40, 40))
        return canvas

    def _target(self, state: State) -> int:
        target = state["knob"] - self.angle(state) / DEG_PER_PX
        for shift in (0, 48, -48):  # one of the equivalent positions lies on the track
            if TRACK[0] <= target + shift <= TRACK[1]:
                return round(float(target + shift))
        raise AssertionError("unreachable")  # pragma: no cover

    def verify(self, state, action):
        if not _near(action.x, action.y, state["knob"], self.knob_y, 4, 5):
            return state, "wrong", "missed_target"
        before = self.angle(state)
        knob = round(float(np.clip(state["knob"] + action.x2 - action.x, *TRACK)))
        turned = (knob - state["knob"]) * DEG_PER_PX
        state = {**state, "knob": knob}
        if abs(self.angle(state)) <= self.tolerance:
            return state, "solved", "none"
        return state, "wrong", _miss(before, before + turned, 360.0)

    def oracle(self, state):
        k, target = state["knob"], self._target(state)
        thought = f"The arrow is rotated {self.angle(state):+.0f} deg; move the knob from x={k} to x={target}."
        return Action("drag", k, self.knob_y, target, self.knob_y), thought

    def mistake(self, state, rng):
        k, target = state["knob"], self._target(state)
        if rng.random() < 0.2:
            return Action("drag", k, self.knob_y - 9, target, self.knob_y)
        return Action("drag", k, self.knob_y, _off_target(target, [4, 8], rng), self.knob_y)


class OrderClickTask(Task):
    """Click the three digits in ascending order (multi-step); clicked digits get a green ring."""

    def __init__(self) -> None:
        super().__init__("order_click", True, True, "click")

    def new(self, rng, split):
        cells = rng.choice(9, 3, replace=False)
        centers = [
            (int(11 + 21 * (c % 3) + rng.integers(-3, 4)), int(12 + 20 * (c // 3) + rng.integers(-3, 4))) for c in cells
        ]
        digits = [int(d) for d in rng.choice(10, 3, replace=False)]
        return {**self._base(rng, split), "digits": digits, "centers": centers, "clicked": 0}

    def instruction(self, state):
        return ("click", "digits", "in", "ascending", "order")

    def _order(self, state: State) -> list[int]:
        return sorted(range(3), key=lambda i: state["digits"][i])

    def draw(self, state):
        rng = _rng(state)
        canvas = noise_background(rng, 30)
        draw = ImageDraw.Draw(canvas)
        for i in self._order(state)[: state["clicked"]]:
            cx, cy = state["centers"][i]
            draw.ellipse((cx - 9, cy - 9, cx + 9, cy + 9), outline=(0, 170, 0), width=2)
        for d, center in zip(state["digits"], state["centers"], strict=True):
            draw_glyph(canvas, str(d), center, 16, rng, 20, tuple(int(v) for v in rng.integers(0, 90, 3)))
        noise_lines(canvas, rng, 2)
        return canvas

    def verify(self, state, action):
        order = self._order(state)
        cx, cy = state["centers"][order[state["clicked"]]]
        if _near(action.x, action.y, cx, cy, 7, 8):
            state = {**state, "clicked": state["clicked"] + 1}
            return state, ("solved" if state["clicked"] == 3 else "progress"), "none"
        hit_other = any(_near(action.x, action.y, x, y, 7, 8) for x, y in state["centers"])
        return state, "wrong", ("wrong_item" if hit_other else "missed_target")

    def oracle(self, state):
        i = self._order(state)[state["clicked"]]
        cx, cy = state["centers"][i]
        return Action(
            "click", cx, cy
        ), f"Clicked {state['clicked']} so far; the next smallest digit is {state['digits'][i]} at ({cx},{cy})."

    def mistake(self, state, rng):
        order = self._order(state)
        others = order[state["clicked"] + 1 :] or order[: state["clicked"]]
        cx, cy = state["centers"][int(rng.choice(others))]
        return Action("click", cx, cy)


class GridSelectTask(Task):
    """A 3x3 grid of handwritten digits; click the one image of digit k (image selection)."""

    def __init__(self) -> None:
        super().__init__("grid_select", True, False, "click")

    def new(self, rng, split):
        k = int(rng.integers(10))
        labels = [int(v) for v in rng.choice([d for d in range(10) if d != k], 9)]
        target = int(rng.integers(9))
        labels[target] = k
        return {**self._base(rng, split), "k": k, "labels": labels, "target": target}

    def instruction(self, state):
        return ("click", "image", "of", "digit", str(state["k"]))

    @staticmethod
    def center(i: int) -> tuple[int, int]:
        return 12 + 20 * (i % 3), 12 + 20 * (i // 3)

    def draw(self, state):
        rng = _rng(state)
        canvas = plain_background(200)
        for i, label in enumerate(state["labels"]):
            cx, cy = self.center(i)
            canvas.paste(digit_image(state["split"], label, rng, 18), (cx - 9, cy - 9))
        return canvas

    def verify(self, state, action):
        cx, cy = self.center(state["target"])
        if _near(action.x, action.y, cx, cy, 9, 9):
            return state, "solved", "none"
        return state, "wrong", "wrong_item"

    def oracle(self, state):
        cx, cy = self.center(state["target"])
        return Action(
            "click", cx, cy
        ), f"The image of digit {state['k']} is tile {state['target'] + 1}, at ({cx},{cy})."

    def mistake(self, state, rng):
        cx, cy = self.center(int(rng.choice([i for i in range(9) if i != state["target"]])))
        return Action("click", cx, cy)


class DragMatchTask(Task):
    """Drag the handwritten digit at the bottom onto the slot showing the same digit (2-D drag)."""

    slots = ((12, 13), (32, 13), (52, 13))

    def __init__(self) -> None:
        super().__init__("drag_match", True, True, "drag")

    def new(self, rng, split):
        labels = [int(v) for v in rng.choice(10, 3, replace=False)]
        return {**self._base(rng, split), "labels": labels, "match": int(rng.integers(3)), "piece": (32, 46)}

    def instruction(self, state):
        return ("drag", "piece", "to", "matching", "slot")

    def draw(self, state):
        rng = _rng(state)
        canvas = noise_background(rng, 15)
        draw = ImageDraw.Draw(canvas)
        for label, (cx, cy) in zip(state["labels"], self.slots, strict=True):
            draw.rectangle((cx - 10, cy - 10, cx + 9, cy + 9), outline=(40, 40, 40))
            canvas.paste(digit_image(state["split"], label, rng, 16), (cx - 8, cy - 8))
        px, py = state["piece"]
        piece = digit_image(state["split"], state["labels"][state["match"]], rng, 16)
        canvas.paste(piece, (px - 8, py - 8))
        draw.rectangle((px - 9, py - 9, px + 8, py + 8), outline=(200, 40, 40))
        return canvas

    def verify(self, state, action):
        px, py = state["piece"]
        if not _near(action.x, action.y, px, py, 8, 8):
            return state, "wrong", "missed_target"
        piece = tuple(
            round(float(np.clip(v + d, 9, CANVAS - 9)))
            for v, d in ((px, action.x2 - action.x), (py, action.y2 - action.y))
        )
        state = {**state, "piece": piece}
        hits = [i for i, (cx, cy) in enumerate(self.slots) if _near(*piece, cx, cy, 6, 6)]
        if hits == [state["match"]]:
            return state, "solved", "none"
        return state, "wrong", ("wrong_item" if hits else "missed_target")

    def oracle(self, state):
        (px, py), (cx, cy) = state["piece"], self.slots[state["match"]]
        label = state["labels"][state["match"]]
        return Action(
            "drag", px, py, cx, cy
        ), f"The piece shows {label}, like slot {state['match'] + 1} at ({cx},{cy})."

    def mistake(self, state, rng):
        (px, py), wrong = state["piece"], int(rng.choice([i for i in range(3) if i != state["match"]]))
        return Action("drag", px, py, *self.slots[wrong])


class ClickButtonTask(Task):
    """General GUI: four labelled buttons; click button k."""

    def __init__(self) -> None:
        super().__init__("click_button", False, True, "click")

    def new(self, rng, split):
        labels = [int(v) for v in rng.choice(10, 4, replace=False)]
        centers = [
            (int(x + rng.integers(-3, 4)), int(y + rng.integers(-3, 4)))
            for x, y in ((16, 20), (48, 20), (16, 46), (48, 46))
        ]
        return {**self._base(rng, split), "labels": labels, "centers": centers, "target": int(rng.integers(4))}

    def instruction(self, state):
        return ("click", "button", str(state["labels"][state["target"]]))

    def draw(self, state):
        canvas = plain_background()
        draw = ImageDraw.Draw(canvas)
        for label, (cx, cy) in zip(state["labels"], state["centers"], strict=True):
            draw.rounded_rectangle((cx - 11, cy - 7, cx + 11, cy + 7), 3, fill=(70, 110, 200))
            draw_glyph(canvas, str(label), (cx, cy), 11, fill=(255, 255, 255))
        return canvas

    def verify(self, state, action):
        cx, cy = state["centers"][state["target"]]
        return (state, "solved", "none") if _near(action.x, action.y, cx, cy, 11, 7) else (state, "wrong", "wrong_item")

    def oracle(self, state):
        cx, cy = state["centers"][state["target"]]
        return Action("click", cx, cy), f"Button {state['labels'][state['target']]} is at ({cx},{cy})."

    def mistake(self, state, rng):
        cx, cy = state["centers"][int(rng.choice([i for i in range(4) if i != state["target"]]))]
        return Action("click", cx, cy)


class TypeFieldTask(TextTask):
    """General GUI: a form field shows a number; type it (clean text)."""

    def __init__(self) -> None:
        Task.__init__(self, "type_field", False, False, "type")

    def instruction(self, state):
        return ("type", "the", "number", "in", "field")

    def draw(self, state):
        canvas = plain_background()
        ImageDraw.Draw(canvas).rectangle((6, 22, 57, 42), fill=(255, 255, 255), outline=(90, 90, 90))
        draw_glyph(canvas, state["answer"], (32, 32), 14)
        return canvas

    def oracle(self, state):
        return Action("type", text=state["answer"]), f"The field shows {state['answer']}."


class DragSliderTask(Task):
    """General GUI: a slider with ticks 0..8; drag the knob to value v; tolerance 2 px."""

    y = 44

    def __init__(self) -> None:
        super().__init__("drag_slider", False, True, "drag")

    @staticmethod
    def x_of(value: int) -> int:
        return TRACK[0] + 6 * value

    def new(self, rng, split):
        start, value = (int(v) for v in rng.choice(9, 2, replace=False))
        return {**self._base(rng, split), "knob": self.x_of(start), "value": value}

    def instruction(self, state):
        return ("drag", "knob", "to", "value", str(state["value"]))

    def draw(self, state):
        canvas = plain_background()
        draw = ImageDraw.Draw(canvas)
        draw.line((TRACK[0], self.y, TRACK[1], self.y), fill=(90, 90, 90), width=2)
        for v in range(9):
            draw.line((self.x_of(v), self.y + 3, self.x_of(v), self.y + 5), fill=(90, 90, 90))
            draw_glyph(canvas, str(v), (self.x_of(v), self.y - 9), 7)
        k = state["knob"]
        draw.rectangle((k - 2, self.y - 4, k + 2, self.y + 4), fill=(70, 110, 200))
        return canvas

    def verify(self, state, action):
        if not _near(action.x, action.y, state["knob"], self.y, 4, 5):
            return state, "wrong", "missed_target"
        before = state["knob"] - self.x_of(state["value"])
        state = {**state, "knob": round(float(np.clip(state["knob"] + action.x2 - action.x, *TRACK)))}
        after = state["knob"] - self.x_of(state["value"])
        return (state, "solved", "none") if abs(after) <= 2 else (state, "wrong", _miss(before, after))

    def oracle(self, state):
        k, target = state["knob"], self.x_of(state["value"])
        return Action(
            "drag", k, self.y, target, self.y
        ), f"Value {state['value']} is at x={target}; the knob is at x={k}."

    def mistake(self, state, rng):
        k, target = state["knob"], self.x_of(state["value"])
        return Action("drag", k, self.y, _off_target(target, [6], rng), self.y)


TASKS: dict[str, Task] = {
    t.name: t
    for t in (
        TextTask(),
        SliderTask(),
        RotationTask(),
        OrderClickTask(),
        GridSelectTask(),
        DragMatchTask(),
        ArithmeticTask(),
        ClickButtonTask(),
        TypeFieldTask(),
        DragSliderTask(),
    )
}
CAPTCHA_TYPES = tuple(name for name, t in TASKS.items() if t.captcha)
GENERAL_TASKS = tuple(name for name, t in TASKS.items() if not t.captcha)
MULTI_STEP_TYPES = tuple(name for name in CAPTCHA_TYPES if TASKS[name].keeps_state)


def render(task: Task, state: State):
    """The screenshot (a 64x64 PIL image) of ``state``, with the feedback strip of the last attempt."""
    canvas = task.draw(state)
    status_bar(canvas, state["status"])
    return canvas
