"""An LMM as the agent: any ``icml26_shared.chat.ChatModel`` (an OpenAI-compatible endpoint, a scripted fake).

The prompt carries the instruction, the screen size, the previous action and its status as text, then the
screenshot as an OpenAI ``image_url`` content part (a PNG data URL, the shared ``image_part``), which the
shared ``ChatCompletionsClient`` sends to a vision endpoint as it is. The reply is read
with ``parse_action``; a reply that does not parse becomes an invalid attempt (``None``), recorded by the
environment as a step, and a ``Reflection: <category>`` line, when present, is kept as the reflection.
Transport failures (unreachable or slow endpoint, malformed JSON) raise ``ChatError`` from the client.
"""

from __future__ import annotations

import io
import re
from typing import Any

import numpy as np
from icml26_shared import ChatModel, fail, image_part
from PIL import Image

from .actions import ACTION_KINDS, Action, parse_action
from .data import CONTEXT_STATUSES
from .env import Observation
from .tasks import ERRORS

SYSTEM_PROMPT = (
    "You are a GUI agent. Answer with an optional 'Reflection: <category>' line "
    f"(one of {', '.join(ERRORS)}) and then exactly one action: click(start_box='(x,y)'), "
    "drag(start_box='(x1,y1)', end_box='(x2,y2)') or type(content='digits'). Coordinates are screenshot pixels."
)
_REFLECTION = re.compile(r"Reflection:\s*([a-z_]+)")


def png_bytes(image: np.ndarray) -> bytes:
    """The screenshot (H, W, 3) uint8 as a PNG file."""
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="PNG")
    return buffer.getvalue()


def describe_context(context: np.ndarray, size: int) -> str:
    """The previous action and its status in words, from an ``encode_context`` vector."""
    n = 1 + len(ACTION_KINDS)
    kind = int(np.argmax(context[:n]))
    if kind == 0:
        return "This is the first attempt."
    x, y, x2, y2 = (float(v) * size for v in context[n : n + 4])
    status = CONTEXT_STATUSES[int(np.argmax(context[n + 4 : n + 4 + len(CONTEXT_STATUSES)]))]
    what = {1: f"click at ({x:.0f},{y:.0f})", 2: f"drag from ({x:.0f},{y:.0f}) to ({x2:.0f},{y2:.0f})", 3: "type"}[kind]
    return f"The previous action was a {what}; the challenge answered: {status}."


class ChatPolicy:
    """A chat model as a (sequential) policy for ``run_episodes``."""

    def __init__(self, model: ChatModel, system_prompt: str = SYSTEM_PROMPT) -> None:
        if not isinstance(model, ChatModel):
            raise fail("model", type(model).__name__, "an object with chat(messages) -> str (icml26_shared.ChatModel)")
        self.model, self.system_prompt = model, system_prompt

    def messages(self, observation: Observation, context: np.ndarray) -> list[dict[str, Any]]:
        """The system prompt, then the task in words followed by the screenshot as an image part."""
        size = observation.image.shape[0]
        text = (
            f"Task: {' '.join(observation.instruction)}.\nScreenshot: {size}x{size} px.\n"
            f"{describe_context(context, size)}"
        )
        user = [{"type": "text", "text": text}, image_part(png_bytes(observation.image))]
        return [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": user}]

    def act(self, observations: list[Observation], contexts: np.ndarray) -> tuple[list[Action | None], list[str]]:
        actions: list[Action | None] = []
        reflections = []
        for observation, context in zip(observations, contexts, strict=True):
            reply = self.model.chat(self.messages(observation, context))
            try:
                actions.append(parse_action(reply))
            except ValueError:
                actions.append(None)
            found = _REFLECTION.search(reply)
            reflections.append(found.group(1) if found and found.group(1) in ERRORS else "none")
        return actions, reflections
