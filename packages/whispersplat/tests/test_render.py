"""The renderer against an independent numpy computation, its invariants, and its bad inputs."""

import math

import numpy as np
import pytest
import reference
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_whispersplat import (
    Camera,
    Gaussians,
    as_splats,
    covariance_3d,
    look_at,
    procedural_scene,
    project,
    quat_to_rotmat,
    render,
    sh_basis,
    splat,
)
from icml26_whispersplat.render import SH_C0


@pytest.fixture(autouse=True)
def float64():
    """Tight comparisons with the float64 reference (restored after each test)."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


def scene(n=12, size=16, seed=0, degree=2, opacity=(0.3, 0.9), extent=0.6):
    g = procedural_scene(n, np.random.default_rng(seed), degree=degree, extent=extent, opacity_range=opacity)
    g = Gaussians(*(getattr(g, k).double() for k in ("means", "scales", "quats", "opacities", "sh")))
    g = Gaussians(g.means, g.scales * 4, g.quats, g.opacities, g.sh)  # a few pixels wide at 16 px
    cam = look_at((2.5, 1.0, 0.8), fov_deg=40, size=(size, size))
    cam = Camera(cam.R.double(), cam.t.double(), cam.fx, cam.fy, cam.cx, cam.cy, cam.width, cam.height)
    return g, cam


def as_numpy(g: Gaussians, cam: Camera):
    gd = {k: getattr(g, k).detach().numpy() for k in ("means", "scales", "quats", "opacities", "sh")}
    cd = {"R": cam.R.numpy(), "t": cam.t.numpy(), "fx": cam.fx, "fy": cam.fy, "cx": cam.cx, "cy": cam.cy}
    return gd, cd


def test_projected_means_and_covariances_match_the_reference():
    g, cam = scene()
    proj = project(g.means, covariance_3d(g.scales, g.quats), cam)
    gd, cd = as_numpy(g, cam)
    for i in range(len(g)):
        mean2d, cov2d, depth = reference.project_one(gd["means"][i], gd["scales"][i], gd["quats"][i], cd)
        np.testing.assert_allclose(proj.means2d[i].numpy(), mean2d, rtol=1e-9)
        np.testing.assert_allclose(proj.cov2d[i].numpy(), cov2d, rtol=1e-5, atol=1e-6)
        assert proj.depths[i].item() == pytest.approx(depth)


@pytest.mark.parametrize("degree", [0, 1, 2])
def test_pixel_values_match_the_reference(degree):
    g, cam = scene(n=25, degree=degree, opacity=(0.6, 0.99))
    image = render(g, cam)
    gd, cd = as_numpy(g, cam)
    pixels = [(u, v) for v in range(cam.height) for u in range(cam.width)]
    expected = reference.render_pixels(gd, cd, pixels).reshape(cam.height, cam.width, 3)
    assert expected.max() > 0.2  # the scene is on screen
    np.testing.assert_allclose(image.numpy(), expected, atol=1e-9)


def test_sh_colour_matches_the_reference_and_degree_zero_is_view_independent():
    g, cam = scene(n=6)
    dirs = g.means - cam.center
    rgb = torch.clamp_min(
        torch.einsum("nk,nkc->nc", sh_basis(dirs / dirs.norm(dim=-1, keepdim=True), 2), g.sh) + 0.5, 0
    )
    for i in range(6):
        np.testing.assert_allclose(rgb[i].numpy(), reference.sh_colour(g.sh[i].numpy(), dirs[i].numpy()), atol=1e-12)
    basis0 = sh_basis(torch.randn(5, 3), 0)
    assert torch.all(basis0 == SH_C0)


@given(st.integers(0, 10_000))
def test_rotations_are_orthonormal_and_covariances_positive_definite(seed):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(8, 4, generator=gen)
    s = torch.rand(8, 3, generator=gen) + 0.01
    R = quat_to_rotmat(q)
    assert torch.allclose(R @ R.transpose(1, 2), torch.eye(3).expand(8, 3, 3), atol=1e-10)
    assert torch.allclose(torch.det(R), torch.ones(8))
    cov = covariance_3d(s, q)
    assert torch.allclose(cov, R @ torch.diag_embed(s**2) @ R.transpose(1, 2))
    assert torch.all(torch.linalg.eigvalsh(cov) > 0)


@given(st.integers(0, 10_000))
def test_compositing_weights_and_transmittance_sum_to_one(seed):
    g, cam = scene(n=30, seed=seed, size=12, opacity=(0.05, 0.99))
    s = splat(g, cam)
    w = s.weights.to_dense()
    assert torch.all(w >= 0) and torch.all(s.transmittance >= 0)
    assert torch.allclose(w.sum(1) + s.transmittance, torch.ones(cam.height * cam.width), atol=1e-12)
    # white background and white Gaussians render white everywhere
    white = torch.zeros_like(g.sh)
    white[:, 0] = 0.5 / SH_C0
    assert torch.allclose(s.image(white, torch.ones(3)), torch.ones(cam.height, cam.width, 3), atol=1e-12)


def stack(depths, opacity, colours=None):
    """Gaussians on the optical axis of a camera at the origin looking down +z."""
    n = len(depths)
    sh = torch.zeros(n, 1, 3)
    if colours is not None:
        sh[:, 0] = (torch.tensor(colours) - 0.5) / SH_C0
    g = Gaussians(
        torch.tensor([[0.0, 0.0, d] for d in depths]),
        torch.full((n, 3), 0.5),
        torch.tensor([[1.0, 0, 0, 0]] * n),
        torch.full((n,), opacity),
        sh,
    )
    return g, Camera(torch.eye(3), torch.zeros(3), 10.0, 10.0, 4.5, 4.5, 8, 8)  # axis on pixel (4, 4)


def test_alpha_clamp_and_transmittance_cut_off():
    g, cam = stack([1.0], 0.999)
    assert splat(g, cam).weights.to_dense().max().item() == pytest.approx(0.99)  # alpha <= 0.99
    g, cam = stack([1.0 + k for k in range(8)], 0.95)  # T after k: 0.05^k; the 4th would take T below 1e-4
    blended = (splat(g, cam).weights.to_dense()[4 * 8 + 4] > 0).sum().item()
    assert blended == 3


def test_front_to_back_order_follows_depth():
    red, blue = [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]
    g, cam = stack([1.0, 2.0], 0.9, [red, blue])
    assert render(g, cam)[4, 4, 0] > 0.85
    g, cam = stack([2.0, 1.0], 0.9, [red, blue])
    assert render(g, cam)[4, 4, 2] > 0.85


def test_render_is_differentiable_in_every_attribute():
    g, cam = scene(n=5, size=8)
    params = [getattr(g, k).clone().requires_grad_(True) for k in ("means", "scales", "quats", "opacities", "sh")]

    def f(means, scales, quats, opacities, sh):
        return render(Gaussians(means, scales, quats, opacities, sh), cam).sum()

    assert torch.autograd.gradcheck(f, params, eps=1e-7, atol=1e-5)


def test_origin_projects_to_the_image_centre():
    cam = look_at((3.0, -2.0, 1.0), fov_deg=30, size=(20, 30))
    proj = project(torch.zeros(1, 3), torch.eye(3)[None] * 0.01, cam)
    assert torch.allclose(proj.means2d[0], torch.tensor([15.0, 10.0]), atol=1e-5)
    assert proj.depths[0].item() == pytest.approx(math.sqrt(14), rel=1e-6)


# bad inputs ----------------------------------------------------------------------------------------------------


def attrs(**override):
    g, _ = scene(n=3)
    values = {k: getattr(g, k) for k in ("means", "scales", "quats", "opacities", "sh")}
    return values | override


@pytest.mark.parametrize(
    ("override", "name"),
    [
        ({"scales": torch.tensor([[0.1, 0.1, 0.1], [0.1, 0.0, 0.1], [0.1, 0.1, 0.1]])}, "scales"),
        ({"scales": -torch.ones(3, 3)}, "scales"),
        ({"quats": torch.zeros(3, 4)}, "quats"),
        ({"opacities": torch.tensor([0.5, 1.0, 0.5])}, "opacities"),
        ({"opacities": torch.tensor([0.5, 0.0, 0.5])}, "opacities"),
        ({"sh": torch.zeros(3, 5, 3)}, "sh"),
        ({"means": torch.full((3, 3), math.nan)}, "means"),
        ({"means": torch.zeros(3, 2)}, "means"),
        ({"means": np.zeros((3, 3))}, "means"),
    ],
)
def test_gaussians_reject_bad_attributes(override, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Gaussians(**attrs(**override))


def test_project_rejects_non_positive_definite_and_asymmetric_covariances():
    means = torch.zeros(2, 3) + torch.tensor([0.0, 0.0, 3.0])
    cam = Camera(torch.eye(3), torch.zeros(3), 10.0, 10.0, 4.0, 4.0, 8, 8)
    singular = torch.diag(torch.tensor([1.0, 1.0, 0.0]))[None].repeat(2, 1, 1)
    with pytest.raises(ValueError, match="covariances=.*positive-definite"):
        project(means, singular, cam)
    asymmetric = torch.eye(3)[None].repeat(2, 1, 1)
    asymmetric[:, 0, 1] = 0.5
    with pytest.raises(ValueError, match="covariances=.*symmetric"):
        project(means, asymmetric, cam)


def test_camera_looking_away_from_the_scene_is_an_error():
    g, _ = scene(n=4)
    away = look_at((3.0, 0.0, 0.0), target=(6.0, 0.0, 0.0))  # the scene is behind it
    with pytest.raises(ValueError, match="camera=.*in front"):
        render(g, away)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"R": torch.ones(3, 3)}, "R"),
        ({"R": torch.diag(torch.tensor([1.0, 1.0, -1.0]))}, "R"),
        ({"fx": 0.0}, "fx"),
        ({"width": 0}, "width"),
        ({"t": torch.zeros(2)}, "t"),
    ],
)
def test_camera_rejects_bad_values(kwargs, name):
    values = {"R": torch.eye(3), "t": torch.zeros(3), "fx": 10.0, "fy": 10.0, "cx": 4, "cy": 4, "width": 8, "height": 8}
    with pytest.raises(ValueError, match=f"{name}="):
        Camera(**(values | kwargs))


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"fov_deg": 0.0}, "fov_deg"),
        ({"fov_deg": 180.0}, "fov_deg"),
        ({"up": (1.0, 0.0, 0.0)}, "up"),
        ({"eye": (0.0, 0, 0)}, "eye"),
    ],
)
def test_look_at_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        look_at(**({"eye": (3.0, 0.0, 0.0)} | kwargs))


def test_splats_reject_foreign_sh_background_and_views():
    g, cam = scene(n=4)
    s = splat(g, cam)
    with pytest.raises(ValueError, match="sh="):
        s.image(torch.zeros(5, 9, 3))
    with pytest.raises(ValueError, match="background="):
        s.image(g.sh, torch.zeros(4))
    other, _ = scene(n=5)
    with pytest.raises(ValueError, match="view="):
        as_splats(other, s)
