"""Ray-cast visibility against a brute-force per-cell line check, the rasters, and the world's bad inputs."""

import numpy as np
import pytest
from icml26_v2v_ccm import CHANNELS, Scene, bev_features, check_agents, random_scene, visibility


def _cross(o, a, b):
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _segments_cross(p, q, a, b):
    """Proper crossing of segments pq and ab (orientation tests; touching cases are measure zero here)."""
    return _cross(p, q, a) * _cross(p, q, b) < 0 and _cross(a, b, p) * _cross(a, b, q) < 0


def _segment_hits_cell(p, q, cell):
    """Does segment pq cross the open unit square at ``cell``? (an endpoint inside, or an edge crossed)"""
    x, y = cell
    inside = [x < e[0] < x + 1 and y < e[1] < y + 1 for e in (p, q)]
    corners = [(x, y), (x + 1, y), (x + 1, y + 1), (x, y + 1)]
    return any(inside) or any(_segments_cross(p, q, corners[i], corners[(i + 1) % 4]) for i in range(4))


def _brute_visibility(scene, agent, lidar_range):
    """Per cell: in range, and the line to its centre crosses no building cell other than the target."""
    p = tuple(scene.agents[agent])
    buildings = [tuple(c) for c in np.argwhere(scene.building_mask())]
    out = np.zeros((scene.grid, scene.grid), dtype=bool)
    for x in range(scene.grid):
        for y in range(scene.grid):
            q = (x + 0.5, y + 0.5)
            if np.hypot(q[0] - p[0], q[1] - p[1]) > lidar_range:
                continue
            out[x, y] = not any(_segment_hits_cell(p, q, c) for c in buildings if c != (x, y))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_visibility_equals_brute_force_line_check(seed):
    rng = np.random.default_rng(seed)
    scene = random_scene(rng, grid=16, patch=4, n_objects=(2, 4), n_occluders=(2, 4), n_agents=2)
    for agent in range(2):
        np.testing.assert_array_equal(visibility(scene, agent, 9.0), _brute_visibility(scene, agent, 9.0))


def test_wall_hides_what_is_behind_it_and_its_facade_is_seen():
    # a wall x in [5, 6), y in [0, 10); agent at (2.3, 4.7) on its left
    scene = Scene(10, np.array([[5, 0, 6, 10]]), np.zeros((0, 3), dtype=int), np.array([[2.3, 4.7]]))
    vis = visibility(scene, 0, 100.0)
    assert not vis[6:].any()  # everything behind the wall
    assert vis[:5].all()  # everything in front of it
    assert vis[5, 4] and not vis[5, 0]  # the facade cell facing the agent; a steep one is hidden by its neighbour


def test_range_limits_visibility():
    scene = Scene(20, np.zeros((0, 4), dtype=int), np.zeros((0, 3), dtype=int), np.array([[10.2, 10.3]]))
    vis = visibility(scene, 0, 5.0)
    xs, ys = np.meshgrid(np.arange(20) + 0.5, np.arange(20) + 0.5, indexing="ij")
    np.testing.assert_array_equal(vis, np.hypot(xs - 10.2, ys - 10.3) <= 5.0)


def test_bev_features_show_only_visible_objects():
    scene = Scene(8, np.array([[4, 0, 5, 8]]), np.array([[1, 1, 1], [6, 6, 3]]), np.array([[2.5, 2.5]]))
    raster = bev_features(scene, visibility(scene, 0, 50.0))
    assert raster.shape == (len(CHANNELS), 8, 8)
    assert raster[2, 1, 1] == 1 and raster[4, 6, 6] == 0  # the car is seen, the pedestrian behind the wall is not
    assert raster[1].sum() > 0 and raster[1, 5:].sum() == 0  # facades of the wall, nothing beyond it


@pytest.mark.parametrize("agents", [[[-0.5, 3.0]], [[3.0, 8.0]], [[2.0, 99.0]]])
def test_agents_outside_the_map_are_rejected(agents):
    with pytest.raises(ValueError, match=r"agents=.*inside the map \[0, 8\)"):
        check_agents(np.array(agents), 8)


def test_agents_inside_a_building_are_rejected():
    buildings = np.zeros((8, 8), dtype=bool)
    buildings[4, 4] = True
    with pytest.raises(ValueError, match=r"agents=\[\[4.5, 4.5\]\].*outside every building"):
        check_agents(np.array([[1.0, 1.0], [4.5, 4.5]]), 8, buildings)


def test_agents_with_wrong_shape_are_rejected():
    with pytest.raises(ValueError, match="agents=.*shape"):
        check_agents(np.array([[1.0, 2.0, 3.0]]), 8)


def test_visibility_rejects_bad_arguments():
    scene = random_scene(np.random.default_rng(0), grid=8, patch=4, n_agents=1)
    with pytest.raises(ValueError, match="agent=3"):
        visibility(scene, 3, 5.0)
    with pytest.raises(ValueError, match="lidar_range=0"):
        visibility(scene, 0, 0.0)


def test_random_scene_rejects_patch_not_dividing_grid():
    with pytest.raises(ValueError, match="patch=5"):
        random_scene(np.random.default_rng(0), grid=32, patch=5)
