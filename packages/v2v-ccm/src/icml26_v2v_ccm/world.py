"""The BEV world: a G x G grid (cell = 1 m) with building occluders, objects and agents, and per-agent LiDAR
visibility by ray casting.

All agents share the map (= ego) frame [INF]: V2V4Real gives every CAV's pose, and we place the rasterised
features in the ego frame before tokenisation, so no pose is carried per token.

Visibility (our LiDAR stand-in): cell c is visible to an agent at p iff ``|centre(c) - p| <= R`` and the segment
p -> centre(c) crosses the interior of no building cell other than c itself (a building's facade is seen, its
inside is not). Only buildings occlude [INF]; objects do not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icml26_shared import check_array, check_int, check_positive, fail

CLASSES = ("car", "truck", "pedestrian")  # object classes; answer 0 means "none"
CHANNELS = ("visible", "building", *CLASSES)  # per-cell BEV channels of one agent's "LiDAR" raster


@dataclass(frozen=True)
class Scene:
    """One world: ``occluders`` (K, 4) rectangles [x0, y0, x1, y1) in cells, ``objects`` (M, 3) rows
    (x, y, class 1..3) in cells, ``agents`` (A, 2) continuous positions (row 0 = ego), map size ``grid``."""

    grid: int
    occluders: np.ndarray
    objects: np.ndarray
    agents: np.ndarray

    def building_mask(self) -> np.ndarray:
        """(G, G) bool, indexed [x, y]: cells covered by a building."""
        mask = np.zeros((self.grid, self.grid), dtype=bool)
        for x0, y0, x1, y1 in self.occluders.astype(int):
            mask[x0:x1, y0:y1] = True
        return mask

    def object_map(self) -> np.ndarray:
        """(G, G) int, indexed [x, y]: the class 1..3 of the object in each cell, 0 where empty."""
        out = np.zeros((self.grid, self.grid), dtype=np.int64)
        for x, y, c in self.objects.astype(int):
            out[x, y] = c
        return out


def check_agents(agents, grid: int, buildings: np.ndarray | None = None) -> np.ndarray:
    """Agent positions (A, 2) strictly inside the map [0, grid)^2 and, if given, not inside a building."""
    agents = check_array("agents", agents, ndim=2, dtype=float)
    if agents.shape[1] != 2:
        raise fail("agents", agents, "shape (A, 2) of x, y positions")
    outside = ~((agents >= 0) & (agents < grid)).all(axis=1)
    if outside.any():
        raise fail("agents", agents[outside].tolist(), f"positions inside the map [0, {grid})^2")
    if buildings is not None:
        inside = buildings[agents[:, 0].astype(int), agents[:, 1].astype(int)]
        if inside.any():
            raise fail("agents", agents[inside].tolist(), "positions outside every building")
    return agents


def _slab(p: np.ndarray, d: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Entry/exit parameters t of the lines p + t d (rows of d) through the boxes [lo, hi] (Kay-Kajiya slabs).

    ``d``: (N, 2); ``lo``, ``hi``: broadcastable to (N, K, 2) -> t0, t1 of shape (N, K) (t0 >= t1: a miss)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / d[:, None, :]  # (N, 1, 2); +-inf along an axis-parallel ray
        ta = (lo - p) * inv
        tb = (hi - p) * inv
    near, far = np.minimum(ta, tb), np.maximum(ta, tb)
    # an axis-parallel ray inside a slab gives (-inf, inf); outside it gives nan (0 * inf): a miss
    near = np.where(np.isnan(near), np.inf, near)
    far = np.where(np.isnan(far), -np.inf, far)
    return near.max(axis=-1), far.min(axis=-1)


def visibility(scene: Scene, agent: int, lidar_range: float) -> np.ndarray:
    """(G, G) bool, indexed [x, y]: the cells agent ``agent`` sees (ray cast against the building rectangles)."""
    check_int("agent", agent, 0, len(scene.agents) - 1)
    check_positive("lidar_range", lidar_range)
    check_agents(scene.agents, scene.grid, scene.building_mask())
    G = scene.grid
    p = scene.agents[agent].astype(float)
    xs, ys = np.meshgrid(np.arange(G), np.arange(G), indexing="ij")
    cells = np.stack([xs.ravel(), ys.ravel()], 1).astype(float)  # (N, 2) lower corners
    d = cells + 0.5 - p  # segment p -> centre, t in [0, 1]
    visible = np.hypot(d[:, 0], d[:, 1]) <= lidar_range
    if len(scene.occluders):
        rects = scene.occluders.astype(float)
        t0, t1 = _slab(p, d, rects[None, :, :2], rects[None, :, 2:])  # (N, K)
        hits = np.maximum(t0, 0.0) < np.minimum(t1, 1.0)  # the segment crosses the rectangle's interior
        # inside its own building, the segment only counts until it enters the target cell
        enter, _ = _slab(p, d, cells[:, None], cells[:, None] + 1.0)  # (N, 1): where each segment enters its cell
        own = (rects[None, :, :2] <= cells[:, None]) & (cells[:, None] + 1 <= rects[None, :, 2:])
        own = own.all(-1)  # (N, K): the target cell lies in rectangle k
        hits = np.where(own, np.maximum(t0, 0.0) < enter, hits)
        visible &= ~hits.any(axis=1)
    return visible.reshape(G, G)


def bev_features(scene: Scene, visible: np.ndarray) -> np.ndarray:
    """(C, G, G) uint8 raster of one agent: visibility, visible building cells (facades) and the one-hot class
    of each *visible* object."""
    objects = scene.object_map()
    out = np.zeros((len(CHANNELS), scene.grid, scene.grid), dtype=np.uint8)
    out[0] = visible
    out[1] = visible & scene.building_mask()
    for c in range(1, len(CLASSES) + 1):
        out[1 + c] = visible & (objects == c)
    return out


def random_scene(
    rng: np.random.Generator,
    grid: int = 32,
    patch: int = 4,
    n_objects: tuple[int, int] = (5, 12),
    n_occluders: tuple[int, int] = (2, 4),
    n_agents: int = 3,
) -> Scene:
    """A random world: 2-4 buildings of 2-6 cells a side, 5-12 single-cell objects (at most one per patch, so a
    patch-level question has one answer [INF]) and ``n_agents`` agents on free cells (continuous positions)."""
    check_int("grid", grid, 4)
    check_int("patch", patch, 1)
    if grid % patch:
        raise fail("patch", patch, f"a divisor of grid={grid}")
    check_int("n_agents", n_agents, 1)
    k = int(rng.integers(n_occluders[0], n_occluders[1] + 1))
    size = rng.integers(2, 7, size=(k, 2))
    corner = rng.integers(0, grid - size + 1)
    occluders = np.concatenate([corner, corner + size], 1)
    scene = Scene(grid, occluders, np.zeros((0, 3), dtype=np.int64), np.zeros((0, 2)))
    free = ~scene.building_mask()
    m = int(rng.integers(n_objects[0], n_objects[1] + 1))
    objects, used = [], set()
    for cell in rng.permutation(np.argwhere(free)):
        key = (cell[0] // patch, cell[1] // patch)
        if key in used:
            continue
        used.add(key)
        objects.append([cell[0], cell[1], int(rng.integers(1, len(CLASSES) + 1))])
        if len(objects) == m:
            break
    taken = free.copy()
    for x, y, _ in objects:
        taken[x, y] = False
    starts = np.argwhere(taken)[rng.choice(int(taken.sum()), size=n_agents, replace=False)]
    agents = starts + rng.uniform(0.05, 0.95, size=(n_agents, 2))
    return Scene(grid, occluders, np.array(objects, dtype=np.int64).reshape(-1, 3), agents)
