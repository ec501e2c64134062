"""Scenes, cameras and hidden images."""

import numpy as np
import pytest
import torch
from icml26_whispersplat import HIDDEN_IMAGES, hidden_image, orbit_camera, procedural_scene, project, ring_cameras


@pytest.mark.parametrize("name", HIDDEN_IMAGES)
def test_hidden_images_are_real_photographs_resized(name):
    image = hidden_image(name, 24)
    assert image.shape == (24, 24, 3) and image.dtype == torch.float32
    assert 0 <= image.min() and image.max() <= 1 and image.std() > 0.05  # not blank


def test_procedural_scene_shapes_and_ranges():
    g = procedural_scene(50, np.random.default_rng(0), degree=1, extent=0.5)
    assert g.sh.shape == (50, 4, 3) and g.degree == 1
    assert g.means.abs().max() <= 0.5 and (g.scales > 0).all()
    assert ((g.opacities > 0) & (g.opacities < 1)).all()


def test_ring_cameras_look_at_the_origin_from_their_circle():
    for cam in ring_cameras(5, distance=3.0, size=20):
        assert cam.center.norm().item() == pytest.approx(3.0, rel=1e-5)
        proj = project(torch.zeros(1, 3), 0.01 * torch.eye(3)[None], cam)
        assert torch.allclose(proj.means2d[0], torch.tensor([10.0, 10.0]), atol=1e-4)
    assert orbit_camera(0.0, 70.0).center[2].item() == pytest.approx(4.0 * np.sin(np.radians(70)), rel=1e-5)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: hidden_image("lena", 16), "name"),
        (lambda: hidden_image("astronaut", 2), "size"),
        (lambda: procedural_scene(0, np.random.default_rng(0)), "n"),
        (lambda: procedural_scene(5, np.random.default_rng(0), degree=3), "degree"),
        (lambda: procedural_scene(5, np.random.default_rng(0), scale_range=(0.0, 0.1)), "scale_range"),
        (lambda: procedural_scene(5, np.random.default_rng(0), opacity_range=(0.5, 1.0)), "opacity_range"),
        (lambda: ring_cameras(0), "n_views"),
        (lambda: orbit_camera(0.0, 90.0), "elevation_deg"),
        (lambda: orbit_camera(0.0, 10.0, distance=0.0), "distance"),
    ],
)
def test_data_rejects_bad_values(call, name):
    with pytest.raises(ValueError, match=f"{name}="):
        call()
