"""Multi-attempt evaluation: episodes in lockstep, success@k, first-attempt accuracy and recovery rate.

A policy is anything with ``act(observations, contexts) -> (actions, reflections)`` over a batch; an
action may be ``None`` (a model answer that did not parse), which the environment records as an invalid
attempt. Each finished episode can be appended to a JSON-lines log as it ends, so a long run never
loses what it already collected.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
from icml26_shared import check_int, fail

from .actions import Action
from .data import encode_context
from .env import CaptchaEnv, Observation


class Policy(Protocol):
    def act(self, observations: list[Observation], contexts: np.ndarray) -> tuple[list[Action | None], list[str]]: ...


@dataclass(frozen=True)
class Episode:
    """One evaluated episode: the actions (UI-TARS strings, '' for unparsed), statuses, reflections."""

    kind: str
    actions: list[str]
    statuses: list[str]
    reflections: list[str]
    solved: bool


def run_episodes(
    policy: Policy,
    kind: str,
    episodes: int,
    seed: int,
    size: int = 64,
    t_max: int = 5,
    split: str = "test",
    log_path: str | os.PathLike | None = None,
    screens: dict | None = None,
) -> list[Episode]:
    """``episodes`` fresh challenges of ``kind`` (one environment each, seeds derived from ``seed``),
    stepped together: one batched ``policy.act`` per step for the unfinished episodes. ``screens``: a
    screenshot memo the environments share (``CaptchaEnv``), e.g. across the agents evaluated on these seeds."""
    check_int("episodes", episodes, 1)
    envs = [CaptchaEnv(kind, seed * 100_003 + i, size, t_max, split, screens) for i in range(episodes)]
    observations = [env.reset() for env in envs]
    contexts = [encode_context(None, "none", 0, size, t_max) for _ in envs]
    history: list[list[tuple[str, str, str]]] = [[] for _ in envs]
    done = [False] * episodes
    out: list[Episode | None] = [None] * episodes
    while not all(done):
        live = [i for i in range(episodes) if not done[i]]
        actions, reflections = policy.act([observations[i] for i in live], np.stack([contexts[i] for i in live]))
        if len(actions) != len(live):
            raise fail("policy.act", f"{len(actions)} actions", f"one action per observation ({len(live)})")
        for i, action, reflection in zip(live, actions, reflections, strict=True):
            step = envs[i].step(action)
            history[i].append(("" if action is None else action.to_string(), step.status, reflection))
            observations[i] = step.next_observation
            if not envs[i].done:
                contexts[i] = encode_context(action, step.status, envs[i].steps, size, t_max)
            else:
                done[i] = True
                acts, statuses, refl = (list(v) for v in zip(*history[i], strict=True))
                out[i] = Episode(kind, acts, statuses, refl, envs[i].solved)
                if log_path is not None:
                    append_jsonl(log_path, asdict(out[i]))
    return [e for e in out if e is not None]


def append_jsonl(path: str | os.PathLike, record: dict) -> None:
    """Append one JSON line and flush it to disk."""
    with open(Path(path), "a") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()
        os.fsync(f.fileno())


def success_at(episodes: list[Episode], k: int) -> float:
    """Fraction of episodes solved within ``k`` steps."""
    check_int("k", k, 1)
    if not episodes:
        raise fail("episodes", episodes, "a non-empty list of episodes")
    return float(np.mean([e.solved and len(e.statuses) <= k for e in episodes]))


def recovery_rate(episodes: list[Episode]) -> float:
    """P(solved | the first attempt was wrong or invalid); nan when no first attempt failed."""
    failed = [e for e in episodes if e.statuses[0] in ("wrong", "invalid")]
    return float(np.mean([e.solved for e in failed])) if failed else float("nan")
