"""Generated V2V-QA-like data: per-agent visual tokens of random BEV worlds and templated questions.

A generated stand-in for V2V-QA / V2V-GoT-QA (V2V4Real LiDAR is not available offline). Every scene has one
question of each type [INF, patch-level templates modelled on V2V-QA's]:

* ``grounding``: "which object is in patch (x, y)?" -> none / car / truck / pedestrian;
* ``occluded``: the same for a patch within the ego's range that the ego does not see (< 25% of its cells);
* ``notable``: "which patch on the planned path (3 patches from the ego in one direction) holds the first
  object?" -> none / 1 / 2 / 3;
* ``planning``: "next move towards goal patch (x, y)?" among stay / +x / -x / +y / -y: the free neighbour
  patch (no object, under half building) closest to the goal, staying if none is closer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icml26_shared import check_int, check_positive, fail

from .world import CHANNELS, Scene, bev_features, random_scene, visibility

QUESTION_TYPES = ("grounding", "occluded", "notable", "planning")
N_ANSWERS = 5
MOVES = np.array([[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]])  # planning options, in patches


def patch_tokens(raster: np.ndarray, patch: int) -> np.ndarray:
    """(C, G, G) raster -> (N, C * patch * patch) tokens, N = (G / patch)^2 in row-major patch order [x, y]."""
    C, G, _ = raster.shape
    P = G // patch
    t = raster.reshape(C, P, patch, P, patch).transpose(1, 3, 0, 2, 4)
    return t.reshape(P * P, C * patch * patch)


def patch_centres(grid: int, patch: int) -> np.ndarray:
    """(N, 2) centres of the patches, in cells, in the order of ``patch_tokens``."""
    P = grid // patch
    ix, iy = np.meshgrid(np.arange(P), np.arange(P), indexing="ij")
    return (np.stack([ix.ravel(), iy.ravel()], 1) + 0.5) * patch


@dataclass(frozen=True)
class QAData:
    """Scenes as arrays. ``tokens`` (S, A, N, D) uint8 (agent 0 = ego), ``coverage`` (S, A, N) fraction of
    each patch every agent sees, ``qtype`` (S, Q), ``ref`` (S, Q, 2) referenced point in cells, ``ego`` (S, 2)
    ego position, ``answer`` (S, Q); Q = 4 question types."""

    tokens: np.ndarray
    coverage: np.ndarray
    qtype: np.ndarray
    ref: np.ndarray
    ego: np.ndarray
    answer: np.ndarray
    grid: int
    patch: int

    def __len__(self) -> int:
        return len(self.tokens)


def _questions(scene: Scene, ego_cov: np.ndarray, patch: int, lidar_range: float, rng: np.random.Generator):
    """(ref (4, 2), answer (4,)) of one scene, in QUESTION_TYPES order."""
    P = scene.grid // patch
    objects = scene.object_map().reshape(P, patch, P, patch).max(axis=(1, 3)).ravel()  # class per patch
    buildings = scene.building_mask().reshape(P, patch, P, patch).mean(axis=(1, 3)).ravel()
    centres = patch_centres(scene.grid, patch)
    ego = scene.agents[0]

    def pick(candidates: np.ndarray) -> int:
        """Half of the time a candidate patch holding an object (when there is one), else any candidate."""
        with_object = candidates[objects[candidates] > 0]
        pool = with_object if len(with_object) and rng.random() < 0.5 else candidates
        return int(rng.choice(pool))

    refs, answers = [], []
    g = pick(np.arange(P * P))
    refs.append(centres[g]), answers.append(objects[g])
    near = np.hypot(*(centres - ego).T) <= lidar_range - patch / 2
    hidden = np.flatnonzero((ego_cov < 0.25) & near & (buildings < 1))
    o = pick(hidden if len(hidden) else np.flatnonzero(ego_cov < 0.25) if (ego_cov < 0.25).any() else np.arange(P * P))
    refs.append(centres[o]), answers.append(objects[o])
    here = (ego // patch).astype(int)
    directions = [m for m in MOVES[1:] if 0 <= here[0] + m[0] < P and 0 <= here[1] + m[1] < P]
    step = directions[int(rng.integers(len(directions)))]
    path = [here + k * step for k in range(1, 4) if ((here + k * step >= 0) & (here + k * step < P)).all()]
    first = next((k + 1 for k, c in enumerate(path) if objects[c[0] * P + c[1]] > 0), 0)
    refs.append((path[-1] + 0.5) * patch), answers.append(first)
    goal = rng.integers(0, P, size=2)
    best, best_dist = 0, np.hypot(*(here - goal))
    for option, m in enumerate(MOVES[1:], start=1):
        c = here + m
        if not ((c >= 0) & (c < P)).all() or objects[c[0] * P + c[1]] > 0 or buildings[c[0] * P + c[1]] >= 0.5:
            continue
        dist = np.hypot(*(c - goal))
        if dist < best_dist:
            best, best_dist = option, dist
    refs.append((goal + 0.5) * patch), answers.append(best)
    return np.array(refs, dtype=np.float32), np.array(answers, dtype=np.int64)


def make_dataset(
    n_scenes: int, seed: int, grid: int = 32, patch: int = 4, n_agents: int = 3, lidar_range: float = 16.0
) -> QAData:
    """``n_scenes`` random worlds with ``n_agents`` agents each, their tokens and one question of each type."""
    check_int("n_scenes", n_scenes, 1)
    check_int("n_agents", n_agents, 2)
    check_positive("lidar_range", lidar_range)
    if grid % patch:
        raise fail("patch", patch, f"a divisor of grid={grid}")
    rng = np.random.default_rng(seed)
    N, D = (grid // patch) ** 2, len(CHANNELS) * patch * patch
    tokens = np.zeros((n_scenes, n_agents, N, D), dtype=np.uint8)
    coverage = np.zeros((n_scenes, n_agents, N), dtype=np.float32)
    ref = np.zeros((n_scenes, len(QUESTION_TYPES), 2), dtype=np.float32)
    answer = np.zeros((n_scenes, len(QUESTION_TYPES)), dtype=np.int64)
    ego = np.zeros((n_scenes, 2), dtype=np.float32)
    for s in range(n_scenes):
        scene = random_scene(rng, grid, patch, n_agents=n_agents)
        for a in range(n_agents):
            vis = visibility(scene, a, lidar_range)
            tokens[s, a] = patch_tokens(bev_features(scene, vis), patch)
            coverage[s, a] = patch_tokens(vis[None].astype(np.float32), patch).mean(1)
        ref[s], answer[s] = _questions(scene, coverage[s, 0], patch, lidar_range, rng)
        ego[s] = scene.agents[0]
    qtype = np.broadcast_to(np.arange(len(QUESTION_TYPES)), answer.shape).copy()
    return QAData(tokens, coverage, qtype, ref, ego, answer, grid, patch)
