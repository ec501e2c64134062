"""DLEBench's evaluation protocol: refined rubrics, the three judge modes and agreement with humans.

The paper scores every edit on two criteria, Instruction Following (IF) and Visual Consistency (VC),
with refined rubrics, and judges in two modes besides the plain whole-image LMM-as-a-judge:

* Tool-driven: the judge crops and zooms on the edit region before judging, so a small object fills
  its view instead of a few pixels;
* Oracle-guided: the judge is also shown the reference edit, so it compares against the intended result
  instead of guessing it from the instruction.

``MetricJudge`` is an offline judge built from image metrics that follows the same protocol, so the
quick reproduction runs without an LMM [INF]: it looks at the images through a fixed view resolution
(``view_size`` px, the stand-in for an LMM's input resolution), turns metric evidence ``q`` in [0, 1] into
rubric levels 1..5, and differs between modes only in what it is shown. ``LMMJudge`` (lmm.py) sends the
same rubric and views to a real LMM.

Axis letters: H, W image height and width; C = 3 colour channels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
from icml26_shared import check_choice, check_int, check_positive, fail

from .baselines import whole_image_evidence
from .data import EditItem
from .imaging import SSIM_WINDOW, check_image, ssim_map, zoom

MODES = ("whole", "tool", "oracle")  # whole-image (the baseline), Tool-driven, Oracle-guided
LEVELS = (1, 2, 3, 4, 5)
CRITERIA = ("instruction_following", "visual_consistency")
# The refined rubrics [INF: the paper's wording is not public; levels and anchors are ours]
RUBRICS = {
    "instruction_following": {
        5: "the instructed change is fully made on the right object, with the requested attribute, place and size",
        4: "the instructed change is made on the right object with a minor deviation (slightly off colour, place, "
        "or size)",
        3: "the change is only partly made (faint, incomplete, or only part of the object)",
        2: "a change is made, but to the wrong object or with the wrong attribute",
        1: "no visible change towards the instruction",
    },
    "visual_consistency": {
        5: "everything outside the edited object is unchanged",
        4: "slight changes outside the object, visible only on close inspection",
        3: "noticeable changes outside the object (blur, noise, or remnants around it)",
        2: "clear changes to other objects or large parts of the background",
        1: "the image outside the object is largely altered",
    },
}
Q_THRESHOLDS = (0.2, 0.4, 0.6, 0.8)  # evidence q in [0, 1] -> level: equal bins


@dataclass(frozen=True)
class Scores:
    """The two rubric scores of one edit, each an integer level 1..5."""

    instruction_following: int
    visual_consistency: int

    def __post_init__(self) -> None:
        for name in CRITERIA:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value not in LEVELS:
                raise fail(name, value, f"a rubric level in {list(LEVELS)}")

    @property
    def overall(self) -> float:
        """The mean of the two criteria (our aggregate [INF])."""
        return (self.instruction_following + self.visual_consistency) / 2


@runtime_checkable
class Judge(Protocol):
    """Anything that scores an edited image of a benchmark item in one of ``MODES``."""

    def score(self, item: EditItem, edited: np.ndarray, mode: str) -> Scores: ...


def level(q: float) -> int:
    """Rubric level 1..5 of evidence ``q`` (below 0.2 -> 1, ..., at least 0.8 -> 5; q may leave [0, 1])."""
    return 1 + sum(float(q) >= t for t in Q_THRESHOLDS)


def bounding_box(mask: np.ndarray, margin: float = 0.25, min_side: int = 16) -> tuple[int, int, int, int]:
    """(y0, x0, y1, x1): the square box around ``mask`` grown by ``margin`` of its side (at least
    ``min_side`` px), kept inside the image: the crop a zoom-in tool takes."""
    mask = np.asarray(mask, dtype=bool)
    if mask.ndim != 2 or not mask.any():
        raise fail("mask", mask, "a 2-d boolean mask with at least one pixel set")
    rows, cols = np.nonzero(mask)
    H, W = mask.shape
    side = max(rows.max() - rows.min() + 1, cols.max() - cols.min() + 1)
    side = int(min(max(H, W), max(min_side, np.ceil(side * (1 + 2 * margin)))))
    cy, cx = (rows.min() + rows.max() + 1) / 2, (cols.min() + cols.max() + 1) / 2
    y0 = int(np.clip(round(cy - side / 2), 0, H - min(side, H)))
    x0 = int(np.clip(round(cx - side / 2), 0, W - min(side, W)))
    return y0, x0, min(H, y0 + side), min(W, x0 + side)


class MetricJudge:
    """The offline judge from image metrics [INF]; one ``score`` for the three modes.

    * ``whole`` (the LMM-as-a-judge baseline, see ``baselines.whole_image_evidence``): global metrics on
      the source/edited pair seen whole at ``view_size``.
    * ``tool``: the zoom tool crops the annotated edit region (``bounding_box``) of source and edited to
      ``view_size``; IF evidence ``q = 1 - exp(-d / kappa)`` with ``d`` the mean absolute change inside the
      region; VC evidence is the mean local SSIM outside the region (grown by the SSIM window's
      half-width), the tool scanning the rest of the image at full resolution.
    * ``oracle``: as ``tool``, but IF evidence is the fraction of the required change achieved,
      ``q = 1 - |edited - reference|_R / |source - reference|_R`` inside the region R; VC as in ``tool``
      (outside the region the reference is the source).

    ``kappa``: the mean absolute change (intensity, [0, 1] scale) that counts as a clear edit (0.1);
    ``area_scale``: the typical target area fraction the whole-image baseline expects (default 0.055,
    the middle of DLEBench's 1-10%).
    """

    def __init__(self, view_size: int = 32, kappa: float = 0.1, area_scale: float = 0.055) -> None:
        self.view_size = check_int("view_size", view_size, 8)
        self.kappa = check_positive("kappa", kappa)
        self.area_scale = check_positive("area_scale", area_scale)

    def evidence(self, item: EditItem, edited: np.ndarray) -> dict[str, tuple[float, float]]:
        """{mode: (q_IF, q_VC)}: the metric evidence of every mode before the rubric levels (the modes share
        their full-resolution SSIM map, so one call serves all three)."""
        from scipy.ndimage import binary_dilation

        edited = check_image("edited", edited, item.source.shape[:2])
        out = {"whole": whole_image_evidence(item.source, edited, self.view_size, self.kappa * self.area_scale)}
        box = bounding_box(item.region)  # the zoom tool's crop
        region = zoom(item.region, box, self.view_size) > 0.5
        source, after = zoom(item.source, box, self.view_size), zoom(edited, box, self.view_size)
        reference = zoom(item.reference, box, self.view_size)
        change = np.abs(after - source).mean(axis=-1)[region].mean()
        needed = np.abs(source - reference).mean(axis=-1)[region].mean()
        if needed == 0:
            raise fail("item.reference", "equal to item.source in the edit region", "a reference that edits")
        missing = np.abs(after - reference).mean(axis=-1)[region].mean()
        # outside the region grown by the SSIM window's half-width: where no window sees the intended edit
        outside = ~binary_dilation(item.region, np.ones((3, 3), bool), iterations=SSIM_WINDOW // 2)
        q_vc = float(ssim_map(item.source, edited)[outside].mean())
        out["tool"] = (float(1.0 - np.exp(-change / self.kappa)), q_vc)
        out["oracle"] = (float(1.0 - missing / needed), q_vc)
        return out

    def score_modes(self, item: EditItem, edited: np.ndarray) -> dict[str, Scores]:
        """{mode: Scores} for the three modes at once."""
        return {mode: Scores(level(q_if), level(q_vc)) for mode, (q_if, q_vc) in self.evidence(item, edited).items()}

    def score(self, item: EditItem, edited: np.ndarray, mode: str) -> Scores:
        check_choice("mode", mode, MODES)
        return self.score_modes(item, edited)[mode]


def agreement(judge_scores, human_scores) -> float:
    """Spearman's rank correlation between a judge's scores and the human (ground-truth) scores.

    A judge that gives every item the same score carries no ranking information: 0. Human scores that
    are all equal leave the correlation undefined: ValueError.
    """
    from scipy.stats import spearmanr

    a = np.asarray(judge_scores, dtype=float)
    b = np.asarray(human_scores, dtype=float)
    if a.ndim != 1 or a.shape != b.shape or a.size < 3:
        raise fail("judge_scores", a, f"a 1-d array of the same length ({b.size}) as human_scores, at least 3")
    if np.ptp(b) == 0:
        raise fail("human_scores", b, "scores that are not all equal (Spearman is undefined)")
    if np.ptp(a) == 0:
        return 0.0
    return float(spearmanr(a, b).statistic)
