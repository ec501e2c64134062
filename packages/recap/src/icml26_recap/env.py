"""The dynamic CAPTCHA system as an episodic environment: fresh instances, screenshots, verified feedback.

``CaptchaEnv(kind).reset()`` draws a fresh challenge; ``step(action)`` verifies the action against the
generator's state and answers ``solved`` / ``progress`` / ``wrong`` / ``invalid`` (a wrong action kind,
e.g. typing on a slider; it counts as a step). An episode ends when solved or after ``t_max`` steps.
The privileged ``state`` and ``error`` category are for the data engine's scripted solvers and
self-correction builder; an agent sees only the screenshot, the instruction and the status.

This is a closed sandbox: nothing here (or anywhere in the package) talks to a live website. Solvers for
real CAPTCHA services would be a tool for abuse; the paper's point, an agent that keeps its general GUI
ability while learning to solve interactive challenges, is measurable without one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icml26_shared import check_choice, check_int, fail

from .actions import Action
from .render import CANVAS, SPLITS, to_array
from .tasks import ERRORS, STATUSES, TASKS, State, render


@dataclass(frozen=True)
class Observation:
    """What the agent sees: the screenshot (H, W, 3) uint8, the instruction words, the last status."""

    image: np.ndarray
    instruction: tuple[str, ...]
    status: str = "none"


@dataclass(frozen=True)
class Step:
    """One transition: the action, the feedback status and the privileged error category."""

    observation: Observation
    action: Action | None
    status: str
    error: str
    next_observation: Observation


class CaptchaEnv:
    """One CAPTCHA type (or general GUI task) as an episodic environment.

    ``kind``: a name in ``TASKS``; ``seed``: the stream of fresh instances; ``size``: screenshot side in px,
    a multiple of the 64-px layout grid; ``t_max``: steps per episode; ``split``: ``train`` or ``test``
    handwritten-digit pool; ``screens``: a memo of screenshots by state (kind, size and the state's items) that
    environments may share, so that a state any of them rendered before is not drawn again (evaluation shares one
    among the agents it compares: they meet the same challenges; ``render`` is a function of the state alone).
    """

    def __init__(
        self,
        kind: str,
        seed: int = 0,
        size: int = CANVAS,
        t_max: int = 5,
        split: str = "train",
        screens: dict | None = None,
    ) -> None:
        self.task = TASKS[check_choice("kind", kind, list(TASKS))]
        self.kind = kind
        check_int("size", size, CANVAS)
        if size % CANVAS:
            raise fail("size", size, f"a multiple of {CANVAS} px (the layouts need at least {CANVAS})")
        self.size, self.scale = size, size // CANVAS
        self.t_max = check_int("t_max", t_max, 1)
        self.split = check_choice("split", split, SPLITS)
        self.rng = np.random.default_rng(check_int("seed", seed, 0))
        if screens is not None and not isinstance(screens, dict):
            raise fail("screens", type(screens).__name__, "a dict (a memo of screenshots) or None")
        self.screens = screens
        self.state: State | None = None
        self.observation: Observation | None = None  # the screenshot of ``state``, rendered once
        self.steps = 0
        self.solved = False

    @property
    def done(self) -> bool:
        return self.solved or self.steps >= self.t_max

    def _render(self) -> Observation:
        if self.screens is None:
            image = to_array(render(self.task, self.state), self.scale)
        else:
            key = (self.kind, self.size, repr(sorted(self.state.items())))
            image = self.screens.get(key)
            if image is None:
                image = to_array(render(self.task, self.state), self.scale)
                image.flags.writeable = False  # shared by every environment that meets this state
                self.screens[key] = image
        self.observation = Observation(image, self.task.instruction(self.state), self.state["status"])
        return self.observation

    def reset(self) -> Observation:
        """A fresh challenge."""
        self.state = self.task.new(self.rng, self.split)
        self.steps, self.solved = 0, False
        return self._render()

    def check_action(self, action: Action) -> Action:
        """``action`` if it is an Action whose points lie on the screen; else ValueError naming it."""
        if not isinstance(action, Action):
            raise fail("action", action, "an Action")
        for x, y in action.points():
            if not (0 <= x < self.size and 0 <= y < self.size):
                raise fail("action", action.to_string(), f"points inside the {self.size}x{self.size} screenshot")
        return action

    def to_canvas(self, action: Action) -> Action:
        """The action in 64-px layout coordinates."""
        s = self.scale
        return Action(action.kind, action.x / s, action.y / s, action.x2 / s, action.y2 / s, action.text)

    def from_canvas(self, action: Action) -> Action:
        """A layout-coordinate action (the oracle's) in screenshot pixels, at pixel centres."""
        s, c = self.scale, (self.scale - 1) / 2
        if action.kind == "type":
            return action
        return Action(action.kind, action.x * s + c, action.y * s + c, action.x2 * s + c, action.y2 * s + c)

    def step(self, action: Action | None) -> Step:
        """Apply ``action``; a wrong answer on a fresh-instance type loads a new challenge. ``None`` stands for
        a model answer that did not parse into an action: an invalid attempt that counts as a step."""
        if self.state is None or self.done:
            raise RuntimeError("the episode is over (or not started): call reset()")
        before = self.observation
        if action is None:
            state, status, error = self.state, "invalid", "wrong_action"
        else:
            state, status, error = self.task.apply(self.state, self.to_canvas(self.check_action(action)))
        assert status in STATUSES and error in ERRORS
        if status == "wrong" and not self.task.keeps_state:
            state = self.task.new(self.rng, self.split)
        self.state = {**state, "status": status}
        self.steps += 1
        self.solved = status == "solved"
        return Step(before, action, status, error, self._render())

    def oracle(self) -> tuple[Action, str]:
        """The scripted solver's action for the current state (screen pixels) and its reasoning trace."""
        action, thought = self.task.oracle(self.state)
        return self.from_canvas(action), thought

    def mistake(self, rng: np.random.Generator) -> Action:
        """A weaker policy's typical wrong action for the current state (screen pixels)."""
        return self.from_canvas(self.task.mistake(self.state, rng))
