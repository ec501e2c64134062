"""LMM judges: the protocol's rubric and views sent to a multimodal model behind a chat endpoint.

The judge talks to any ``icml26_shared.ChatModel``; images travel inside the messages as OpenAI content
parts (``user_message``: the text, then each image as a PNG ``image_url`` part built by the shared
``image_part``), so the shared ``ChatCompletionsClient`` (settings, environment variables, timeouts,
retries, ``ChatError``) sends them as they are. What a judge sends, per mode: the system prompt with both
rubrics and the answer format; the instruction; the source and edited images at full resolution; in
``tool`` mode the annotated region's box and a zoom tool the model calls with
``{"tool": "zoom", "box": [y0, x0, y1, x1]}`` (answered with both images cropped to the box and enlarged
to ``view_size``); in ``oracle`` mode also the reference edit and the three images zoomed on the edit
region. The SmolLM2 backend does not apply: it reads no images (``LocalChatModel`` refuses image parts).

``evaluate`` runs a judge over many edits and appends each result to a JSON-lines file as it goes, so
a long run loses nothing it collected and resumes where it stopped; a failed call is a recorded attempt.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from icml26_shared import ChatError, ChatModel, check_choice, check_int, fail, image_part

from .data import EditItem
from .imaging import check_image, zoom
from .method import CRITERIA, LEVELS, MODES, RUBRICS, Judge, Scores, bounding_box

JSON_OBJECT = re.compile(r"\{.*\}", re.S)


def png_bytes(image: np.ndarray) -> bytes:
    """The PNG file of an RGB image (float in [0, 1] or uint8)."""
    from PIL import Image

    pixels = np.round(check_image("image", image) * 255).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def user_message(text: str, images: Sequence[np.ndarray] = ()) -> dict[str, Any]:
    """A user turn: plain ``text``, or the text then one PNG ``image_url`` part per image."""
    if not images:
        return {"role": "user", "content": text}
    return {"role": "user", "content": [{"type": "text", "text": text}, *(image_part(png_bytes(i)) for i in images)]}


def system_prompt() -> str:
    """The judge's instructions: the two refined rubrics and the answer format."""
    lines = ["You judge an instruction-based image edit of a small object. Score two criteria with these rubrics."]
    for criterion in CRITERIA:
        lines.append(f"{criterion}:")
        lines += [f"  {k}: {RUBRICS[criterion][k]}" for k in sorted(RUBRICS[criterion], reverse=True)]
    lines.append('Answer with JSON only: {"instruction_following": <1-5>, "visual_consistency": <1-5>}.')
    return "\n".join(lines)


def parse_reply(reply: str) -> Scores | tuple[int, int, int, int]:
    """A reply's scores, or the box of a zoom call ``{"tool": "zoom", "box": [y0, x0, y1, x1]}``.

    ValueError naming the reply when it holds no JSON object, or one that is neither."""
    if not isinstance(reply, str):
        raise fail("reply", reply, "the model's reply text")
    match = JSON_OBJECT.search(reply)
    try:
        data = json.loads(match.group(0)) if match else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        raise fail("reply", reply, 'a JSON object with the scores, e.g. {"instruction_following": 4, ...}')
    if data.get("tool") == "zoom":
        box = data.get("box")
        if not isinstance(box, list) or len(box) != 4 or not all(isinstance(v, int) for v in box):
            raise fail("reply", reply, 'a zoom call {"tool": "zoom", "box": [y0, x0, y1, x1]} with integer pixels')
        return tuple(box)
    if not all(isinstance(data.get(c), int) and data.get(c) in LEVELS for c in CRITERIA):
        raise fail("reply", reply, f"integer {' and '.join(CRITERIA)} scores in {list(LEVELS)}")
    return Scores(data["instruction_following"], data["visual_consistency"])


def check_box(box: Sequence[int], shape: tuple[int, int]) -> tuple[int, int, int, int]:
    """A box (y0, x0, y1, x1) with 0 <= y0 < y1 <= H and 0 <= x0 < x1 <= W."""
    y0, x0, y1, x1 = box
    if not (0 <= y0 < y1 <= shape[0] and 0 <= x0 < x1 <= shape[1]):
        raise fail("box", list(box), f"[y0, x0, y1, x1] inside the {shape[0]} x {shape[1]} image with y0 < y1, x0 < x1")
    return y0, x0, y1, x1


class LMMJudge:
    """DLEBench's judge modes with an LMM: ``score(item, edited, mode)`` through a ``ChatModel`` that reads images.

    ``view_size``: the side of zoomed views (px); ``max_tool_calls``: zoom calls allowed in ``tool`` mode.
    """

    def __init__(self, chat: ChatModel, view_size: int = 512, max_tool_calls: int = 3) -> None:
        if not isinstance(chat, ChatModel):
            raise fail("chat", type(chat).__name__, "a ChatModel (chat(messages) -> str) that reads image parts")
        self.chat = chat
        self.view_size = check_int("view_size", view_size, 16)
        self.max_tool_calls = check_int("max_tool_calls", max_tool_calls, 0)

    def prompt(self, item: EditItem, edited: np.ndarray, mode: str) -> list[dict[str, Any]]:
        """The first messages for ``mode``: the system prompt, then the instruction with its images."""
        H, W = item.source.shape[:2]
        text = f"Instruction: {item.instruction.text}\nImage 1 is the source, image 2 the edited result ({H} x {W})."
        images = [item.source, edited]
        box = bounding_box(item.region)
        if mode == "tool":
            text += (
                f"\nThe instruction's target lies in the box [y0, x0, y1, x1] = {list(box)}. To inspect a region, "
                'reply {"tool": "zoom", "box": [y0, x0, y1, x1]} and you will get both images cropped and enlarged.'
            )
        elif mode == "oracle":
            text += (
                "\nImage 3 is the reference edit, a correct result. Images 4-6 are source, edited and reference "
                f"zoomed on the edit region {list(box)}."
            )
            images += [item.reference] + [zoom(im, box, self.view_size) for im in (item.source, edited, item.reference)]
        return [{"role": "system", "content": system_prompt()}, user_message(text, images)]

    def score(self, item: EditItem, edited: np.ndarray, mode: str) -> Scores:
        check_choice("mode", mode, MODES)
        edited = check_image("edited", edited, item.source.shape[:2])
        messages = self.prompt(item, edited, mode)
        for _ in range(self.max_tool_calls + 1):
            reply = self.chat.chat(messages)
            parsed = parse_reply(reply)
            if isinstance(parsed, Scores):
                return parsed
            if mode != "tool":
                raise fail("reply", reply, f"scores (the zoom tool exists in tool mode only, not {mode!r})")
            box = check_box(parsed, item.source.shape[:2])
            zoomed = [zoom(item.source, box, self.view_size), zoom(edited, box, self.view_size)]
            messages += [
                {"role": "assistant", "content": reply},
                user_message(f"Zoom on {list(box)}: source, then edited.", zoomed),
            ]
        raise fail("reply", reply, f"scores after at most {self.max_tool_calls} zoom calls")


def _done(path: Path) -> dict[str, Scores]:
    """The scores already in a results file (lines that do not parse, e.g. a cut last line, are skipped)."""
    done: dict[str, Scores] = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
                done[row["id"]] = Scores(row["instruction_following"], row["visual_consistency"])
            except (ValueError, KeyError, TypeError):
                continue
    return done


def evaluate(
    judge: Judge, edits: Iterable[tuple[str, EditItem, np.ndarray]], mode: str, path: str | os.PathLike
) -> dict[str, Scores]:
    """Score every ``(id, item, edited)`` in ``mode``; each outcome is appended to ``path`` (JSON lines)
    and flushed before the next call. Ids already scored in ``path`` are skipped; a ``ChatError`` or a
    reply that does not parse is written as ``{"id", "mode", "error"}`` and the run goes on.
    Returns {id: Scores} of every scored edit, earlier runs included."""
    if not isinstance(judge, Judge):
        raise fail("judge", type(judge).__name__, "a Judge (score(item, edited, mode) -> Scores)")
    check_choice("mode", mode, MODES)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    done = _done(path)
    with open(path, "a") as out:
        for edit_id, item, edited in edits:
            if edit_id in done:
                continue
            try:
                scores = judge.score(item, edited, mode)
                row = {"id": edit_id, "mode": mode, **{c: int(getattr(scores, c)) for c in CRITERIA}}
                done[edit_id] = scores
            except (ChatError, ValueError) as err:
                row = {"id": edit_id, "mode": mode, "error": f"{type(err).__name__}: {err}"}
            out.write(json.dumps(row) + "\n")
            out.flush()
            os.fsync(out.fileno())
    return done
