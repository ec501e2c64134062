"""Simulated instruction-based image editors with known error modes, and the ground-truth scores.

No image-editing model runs offline here, so the benchmark is answered by a family of simulated editors
[INF]. Each draws, per sample, the latent parameters of what it did (``Edit``): which change it aimed at
(the instructed one, the same change on the wrong object, or the wrong attribute on the right object),
how much of it it applied, how far it misplaced it, and how much it degraded the rest of the image. The
*ground-truth* rubric scores (the stand-in for the human raters the paper validates its judges against)
are a fixed function of these latents, never of pixels; the judges see pixels only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from icml26_shared import check_choice, check_closed_interval, fail

from .data import COLORS, MATERIALS, SHAPES, EditItem, Instruction, apply_instruction, place, render

MODES = ("correct", "wrong_object", "wrong_attribute")


@dataclass(frozen=True)
class Edit:
    """What an editor did to one sample (the latents the ground truth is computed from)."""

    mode: str  # one of MODES
    strength: float  # fraction of the aimed change applied, in [0, 1]
    offset: float  # misplacement of the change, in target radii
    blur: float  # Gaussian blur sigma (px) over the whole image
    noise: float  # standard deviation of additive Gaussian noise

    def __post_init__(self) -> None:
        check_choice("mode", self.mode, MODES)
        check_closed_interval("strength", self.strength, 0.0, 1.0)
        for name in ("offset", "blur", "noise"):
            check_closed_interval(name, getattr(self, name), 0.0, 10.0)


@dataclass(frozen=True)
class Editor:
    """A simulated editor: uniform ranges for its latents and the probabilities of its two wrong modes."""

    name: str
    strength: tuple[float, float] = (0.9, 1.0)
    offset: tuple[float, float] = (0.0, 0.0)
    blur: tuple[float, float] = (0.0, 0.0)
    noise: tuple[float, float] = (0.0, 0.005)
    p_wrong_object: float = 0.0
    p_wrong_attribute: float = 0.0

    def sample(self, rng: np.random.Generator) -> Edit:
        u = rng.random()
        mode = (
            "wrong_object"
            if u < self.p_wrong_object
            else "wrong_attribute"
            if u < self.p_wrong_object + self.p_wrong_attribute
            else "correct"
        )
        s, o, b, n = (float(rng.uniform(*r)) for r in (self.strength, self.offset, self.blur, self.noise))
        return Edit(mode, s, o, b, n)


# Seven editors, one error mode each (ours [INF]); the paper evaluates ten real IIEMs.
EDITORS = (
    Editor("precise"),
    Editor("drifting", strength=(0.85, 1.0), blur=(0.6, 2.0), noise=(0.01, 0.04)),
    Editor("partial", strength=(0.2, 0.8)),
    Editor("misplacing", strength=(0.85, 1.0), offset=(0.2, 0.9)),
    Editor("wrong_object", p_wrong_object=0.7),
    Editor("wrong_attribute", p_wrong_attribute=0.7),
    Editor("timid", strength=(0.0, 0.15), blur=(0.0, 0.6)),
)


def _other(options, *exclude):
    return next(o for o in options if o not in exclude)


def _altered(item: EditItem, index: int, wrong_attribute: bool, rng: np.random.Generator) -> Instruction:
    """The instruction's change applied to object ``index``, or with another attribute (same text)."""
    ins, size = item.instruction, item.source.shape[0]
    obj = item.objects[index] if index >= 0 else ins.after
    after = ins.after
    if ins.type == "add":
        center = place(obj.radius, size, rng, [*item.objects, obj])
        after = (
            replace(obj, shape=_other(SHAPES, obj.shape), color=_other(COLORS, obj.color))
            if wrong_attribute
            else replace(obj, center=center)
        )
        return Instruction("add", -1, after, ins.text)
    if ins.type == "remove":
        if not wrong_attribute:
            return Instruction("remove", index, None, ins.text)
        # a flat blob in the palette colour nearest the background it should have revealed, not a removal
        mean = item.photo[item.region].mean(0)
        blob = min(
            (c for c in COLORS if c != obj.color), key=lambda c: float(np.sum((np.asarray(COLORS[c]) - mean) ** 2))
        )
        return Instruction("color", index, replace(obj, color=blob), ins.text)
    if ins.type == "replace":
        shape = _other(SHAPES, obj.shape, after.shape) if wrong_attribute else after.shape
        after = replace(obj, shape=shape, color=after.color if after.color != obj.color else _other(COLORS, obj.color))
    elif ins.type == "color":
        after = replace(obj, color=_other(COLORS, obj.color, after.color) if wrong_attribute else after.color)
        after = after if after.color != obj.color else replace(obj, color=_other(COLORS, obj.color))
    elif ins.type == "material":
        material = _other(MATERIALS, obj.material, after.material) if wrong_attribute else after.material
        after = replace(obj, material=material if material != obj.material else _other(MATERIALS, obj.material))
    elif ins.type == "move":
        target = item.objects[ins.target]
        dy, dx = after.center[0] - target.center[0], after.center[1] - target.center[1]
        if wrong_attribute:  # the opposite direction
            dy, dx = -dy, -dx
        center = (float(np.clip(obj.center[0] + dy, 0, size)), float(np.clip(obj.center[1] + dx, 0, size)))
        after = replace(obj, center=center)
    elif ins.type == "resize":
        scale = after.radius / item.objects[ins.target].radius
        after = replace(obj, radius=obj.radius / scale if wrong_attribute else obj.radius * scale)
    return Instruction(ins.type, index, after, ins.text)


def aimed_image(item: EditItem, mode: str, rng: np.random.Generator) -> np.ndarray:
    """(H, W, C): the image the editor aims at: the reference edit, or the change on a wrong object
    (another object of the scene, or another place for ``add``), or a wrong attribute on the target."""
    check_choice("mode", mode, MODES)
    if mode == "correct":
        return item.reference
    if mode == "wrong_object":
        index = -1 if item.instruction.type == "add" else 1 + int(rng.integers(len(item.objects) - 1))
        variant = _altered(item, index, False, rng)
    else:
        variant = _altered(item, item.instruction.target, True, rng)
    return render(item.photo, apply_instruction(item.objects, variant))


def target_radius(item: EditItem) -> float:
    ins = item.instruction
    return ins.after.radius if ins.target < 0 else item.objects[ins.target].radius


def apply_edit(item: EditItem, edit: Edit, rng: np.random.Generator) -> np.ndarray:
    """The edited image: source + strength * (aimed - source), shifted by ``offset`` target radii in a
    random direction, then blurred and noised over the whole image (clipped to [0, 1])."""
    from scipy.ndimage import shift
    from skimage.filters import gaussian

    delta = aimed_image(item, edit.mode, rng) - item.source
    if edit.offset > 0:
        angle = rng.uniform(0, 2 * np.pi)
        step = edit.offset * target_radius(item)
        delta = shift(delta, (step * np.sin(angle), step * np.cos(angle), 0), order=1, cval=0.0)
    edited = item.source + edit.strength * delta
    if edit.blur > 0:
        edited = gaussian(edited, sigma=edit.blur, channel_axis=-1)
    if edit.noise > 0:
        edited = edited + rng.normal(0.0, edit.noise, edited.shape)
    return np.clip(edited, 0.0, 1.0)


def _level(value: float, thresholds: tuple[float, ...]) -> int:
    """1 + the number of ``thresholds`` that ``value`` reaches (rubric levels 1..5)."""
    return 1 + sum(value >= t for t in thresholds)


def ground_truth(edit: Edit) -> tuple[int, int]:
    """The "human" rubric scores (instruction following, visual consistency), each 1..5 [INF].

    Instruction following: a wrong object or a wrong attribute is level 2 ("an edit, but not the one
    asked"); otherwise the completeness ``c = strength * (1 - offset)`` sets the level (thresholds 0.1,
    0.35, 0.65, 0.85). Visual consistency: the degradation ``g = blur / 1 px + noise / 0.03 + offset
    + 1.5 [another object changed]`` sets it (5 below 0.25, 4 below 1, 3 below 2, 2 below 3.5, else 1).
    """
    if not isinstance(edit, Edit):
        raise fail("edit", edit, "an Edit")
    if edit.mode != "correct":
        instruction_following = 2
    else:
        instruction_following = _level(edit.strength * max(0.0, 1.0 - edit.offset), (0.1, 0.35, 0.65, 0.85))
    g = edit.blur + edit.noise / 0.03 + edit.offset + 1.5 * (edit.mode == "wrong_object")
    visual_consistency = 6 - _level(g, (0.25, 1.0, 2.0, 3.5))
    return instruction_following, visual_consistency
