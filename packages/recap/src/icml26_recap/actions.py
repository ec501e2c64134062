"""The native GUI action space: click, drag, type; parsed from and printed in the UI-TARS format.

``click(start_box='(x,y)')``, ``drag(start_box='(x1,y1)', end_box='(x2,y2)')`` and
``type(content='123')`` are the strings a native GUI agent (UI-TARS, Qwen2.5-VL) emits; coordinates are
screenshot pixels, x to the right, y down. ``parse_action`` reads the last such call in a model reply
(after an optional ``Thought: ...`` / ``Reflection: ...``), so an LMM behind ``icml26_shared.chat``
plugs in unchanged.
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass

from icml26_shared import fail

ACTION_KINDS = ("click", "drag", "type")
MAX_TEXT = 4  # the text head types at most 4 characters
_POINT = r"\(\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*\)"
_PATTERNS = {
    "click": re.compile(rf"click\(\s*start_box\s*=\s*['\"]{_POINT}['\"]\s*\)"),
    "drag": re.compile(rf"drag\(\s*start_box\s*=\s*['\"]{_POINT}['\"]\s*,\s*end_box\s*=\s*['\"]{_POINT}['\"]\s*\)"),
    "type": re.compile(r"type\(\s*content\s*=\s*['\"]([^'\"]*)['\"]\s*\)"),
}


@dataclass(frozen=True)
class Action:
    """One GUI action: ``click`` at (x, y), ``drag`` from (x, y) to (x2, y2), or ``type`` text (digits)."""

    kind: str
    x: float = 0.0
    y: float = 0.0
    x2: float = 0.0
    y2: float = 0.0
    text: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ACTION_KINDS:
            raise fail("kind", self.kind, f"one of {list(ACTION_KINDS)}")
        for name in ("x", "y", "x2", "y2"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
                raise fail(name, value, "a finite pixel coordinate")
            object.__setattr__(self, name, float(value))
        if self.kind == "type" and not (self.text.isdigit() and len(self.text) <= MAX_TEXT):
            raise fail("text", self.text, f"1 to {MAX_TEXT} digits for a type action")

    def points(self) -> list[tuple[float, float]]:
        """The screen points the action touches (none for ``type``)."""
        return {"click": [(self.x, self.y)], "drag": [(self.x, self.y), (self.x2, self.y2)], "type": []}[self.kind]

    def to_string(self) -> str:
        """The UI-TARS form, e.g. ``drag(start_box='(8,30)', end_box='(41,30)')``."""
        if self.kind == "type":
            return f"type(content='{self.text}')"
        box = f"start_box='({self.x:g},{self.y:g})'"
        if self.kind == "click":
            return f"click({box})"
        return f"drag({box}, end_box='({self.x2:g},{self.y2:g})')"


def parse_action(reply: str) -> Action:
    """The last action call in ``reply`` (a model's answer); ValueError naming the reply when there is none."""
    if not isinstance(reply, str):
        raise fail("reply", reply, "a str")
    found = []
    for kind, pattern in _PATTERNS.items():
        for match in pattern.finditer(reply):
            found.append((match.start(), kind, match.groups()))
    if not found:
        raise fail(
            "reply",
            reply,
            "an action click(start_box='(x,y)'), drag(start_box=..., end_box=...) or type(content='...')",
        )
    _, kind, groups = max(found)
    if kind == "type":
        return Action("type", text=groups[0])
    coords = [float(g) for g in groups]
    if kind == "click":
        return Action("click", coords[0], coords[1])
    return Action("drag", *coords)
