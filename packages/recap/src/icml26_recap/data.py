"""The automated data engine: reasoning-action trajectories, curation, self-correction data, mixtures.

1. ``collect``: roll out a policy in the sandbox. The scripted solver reads the generator's privileged
   state and pairs every action with its reasoning trace ("thought"); the weaker policy takes the
   scripted action but, with probability ``mistake_rate`` per step, a typical mistake instead
   (a drag off the goal, wrong item, misread, missed target). Every step also records the scripted action
   for its state, the oracle check used below.
2. ``curate``: keep solved trajectories, drop duplicates, balance the types.
3. ``sft_samples``: one sample per step: (screenshot, instruction, previous action + its status) -> action.
4. ``self_correction_samples`` (paper Section "self-correction data"): for a trajectory with a first wrong
   step k, the context holds the wrong action a_k and its status, the screenshot is o_{k+1} (after the
   mistake), and the target is the reflection (a_k's error category) followed by the oracle action for
   o_{k+1}. The wrong action appears only in the context, never as a target (the paper masks its tokens).
5. ``mixture``: CAPTCHA : self-correction : general GUI samples in a given ratio [INF: 1 : 0.3 : 1].
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
from icml26_shared import check_int, check_number, fail, get_logger

from .actions import ACTION_KINDS, Action
from .env import CaptchaEnv, Observation, Step
from .tasks import STATUSES

log = get_logger("recap")
CONTEXT_STATUSES = ("none", *STATUSES[1:])  # the status shown to the agent: none, wrong, progress, invalid
CONTEXT_DIM = 1 + len(ACTION_KINDS) + 4 + len(CONTEXT_STATUSES) + 1


@dataclass(frozen=True)
class Sample:
    """One training example: inputs (screenshot, instruction, context) and targets (reflection, action)."""

    kind: str
    image: np.ndarray
    instruction: tuple[str, ...]
    context: np.ndarray  # encode_context(previous action, its status, step)
    action: Action
    reflection: str  # the error category of the previous action ("none" when there is nothing to correct)
    thought: str


@dataclass(frozen=True)
class Trajectory:
    """An episode: its steps, the scripted (oracle) action and thought for each step's state, the outcome."""

    kind: str
    steps: tuple[Step, ...]
    oracle: tuple[tuple[Action, str], ...]
    solved: bool


def encode_context(previous: Action | None, status: str, step: int, size: int, t_max: int) -> np.ndarray:
    """The agent's memory of the last step: action kind (one-hot, or 'none'), its points / size, the status
    it got (one-hot over CONTEXT_STATUSES) and step / t_max; (CONTEXT_DIM,) float32."""
    if status not in CONTEXT_STATUSES:
        raise fail("status", status, f"one of {list(CONTEXT_STATUSES)}")
    kind = np.zeros(1 + len(ACTION_KINDS), np.float32)
    points = np.zeros(4, np.float32)
    if previous is None:
        kind[0] = 1
    else:
        kind[1 + ACTION_KINDS.index(previous.kind)] = 1
        points[:] = np.array([previous.x, previous.y, previous.x2, previous.y2]) / size
    flag = np.zeros(len(CONTEXT_STATUSES), np.float32)
    flag[CONTEXT_STATUSES.index(status)] = 1
    return np.concatenate([kind, points, flag, [step / t_max]]).astype(np.float32)


def collect(
    kind: str,
    episodes: int,
    seed: int,
    mistake_rate: float = 0.0,
    size: int = 64,
    t_max: int = 5,
    split: str = "train",
) -> list[Trajectory]:
    """Roll out the scripted solver (``mistake_rate=0``) or the weaker policy in ``episodes`` fresh challenges."""
    check_int("episodes", episodes, 1)
    if not 0 <= check_number("mistake_rate", mistake_rate) <= 1:
        raise fail("mistake_rate", mistake_rate, "a probability in [0, 1]")
    env = CaptchaEnv(kind, seed, size, t_max, split)
    rng = np.random.default_rng([seed, 1])
    out = []
    for _ in range(episodes):
        env.reset()
        steps, oracle = [], []
        while not env.done:
            oracle.append(env.oracle())
            action = env.mistake(rng) if rng.random() < mistake_rate else oracle[-1][0]
            steps.append(env.step(action))
        out.append(Trajectory(kind, tuple(steps), tuple(oracle), env.solved))
    return out


def _key(t: Trajectory) -> str:
    digest = hashlib.sha256(t.steps[0].observation.image.tobytes())
    digest.update("|".join(s.action.to_string() for s in t.steps).encode())
    return t.kind + digest.hexdigest()


def curate(trajectories: list[Trajectory], per_type: int | None = None) -> list[Trajectory]:
    """Keep solved trajectories, drop duplicates (same first screenshot and actions), and balance the types
    by keeping at most ``per_type`` of each (default: all)."""
    kept: dict[str, list[Trajectory]] = {}
    seen = set()
    for t in trajectories:
        if t.solved and _key(t) not in seen:
            seen.add(_key(t))
            kept.setdefault(t.kind, []).append(t)
    n = None if per_type is None else check_int("per_type", per_type, 1)
    return [t for group in kept.values() for t in group[:n]]


def sft_samples(trajectories: list[Trajectory], size: int = 64, t_max: int = 5) -> list[Sample]:
    """One sample per step of each trajectory: its context is the previous step's action and status."""
    out = []
    for t in trajectories:
        previous, status = None, "none"
        for i, (step, (action, thought)) in enumerate(zip(t.steps, t.oracle, strict=True)):
            context = encode_context(previous, status, i, size, t_max)
            out.append(
                Sample(t.kind, step.observation.image, step.observation.instruction, context, action, "none", thought)
            )
            previous, status = step.action, step.status
    return out


def self_correction_samples(trajectories: list[Trajectory], size: int = 64, t_max: int = 5) -> list[Sample]:
    """Self-correction samples from the first wrong (or invalid) step k of each trajectory that has a step
    k + 1: context = (a_k, its status), screenshot = o_{k+1}, target = reflection(a_k) + oracle action for o_{k+1}.
    Trajectories without a mistake give nothing; an empty result is logged, not an error."""
    out = []
    for t in trajectories:
        k = next((i for i, s in enumerate(t.steps) if s.status in ("wrong", "invalid")), None)
        if k is None or k + 1 >= len(t.steps):
            continue
        wrong, (action, thought) = t.steps[k], t.oracle[k + 1]
        context = encode_context(wrong.action, wrong.status, k + 1, size, t_max)
        reflection = wrong.error
        obs: Observation = wrong.next_observation
        out.append(
            Sample(
                t.kind, obs.image, obs.instruction, context, action, reflection, f"Reflection: {reflection}. {thought}"
            )
        )
    if not out:
        log.warning("self_correction_samples: none of %d trajectories has a mistake to correct", len(trajectories))
    return out


def mixture(
    captcha: list[Sample],
    corrections: list[Sample],
    general: list[Sample],
    ratio: tuple[float, float, float],
    rng: np.random.Generator,
) -> list[Sample]:
    """``captcha`` plus up to ratio[1] / ratio[0] as many self-correction and ratio[2] / ratio[0] as many
    general samples (drawn without replacement), shuffled."""
    if len(ratio) != 3 or any(check_number("ratio", r) < 0 for r in ratio) or ratio[0] <= 0:
        raise fail("ratio", ratio, "(captcha > 0, self-correction >= 0, general >= 0)")
    parts = list(captcha)
    for pool, r in ((corrections, ratio[1]), (general, ratio[2])):
        n = min(len(pool), round(float(len(captcha) * r / ratio[0])))
        parts += [pool[i] for i in rng.choice(len(pool), n, replace=False)] if n else []
    return [parts[i] for i in rng.permutation(len(parts))]
