"""Our projection and SH colour against gsplat's own pure-PyTorch reference implementation (on CPU).

gsplat installs here (a pure-Python wheel), but its rasterizer needs its CUDA extension: ``gsplat.rasterization``
fails on a CPU-only machine, so pixel values are checked against ``reference.py`` instead. Its torch helpers for
the projection (``_fully_fused_projection``) and the SH colour (``_spherical_harmonics``) run on CPU.
"""

import numpy as np
import pytest
import torch
from icml26_whispersplat import covariance_3d, procedural_scene, project, ring_cameras, sh_basis, sh_to_rgb

torch_impl = pytest.importorskip("gsplat.cuda._torch_impl")


def setup():
    g = procedural_scene(40, np.random.default_rng(3), extent=0.8)
    cam = ring_cameras(3, size=48)[1]
    viewmat = torch.eye(4)
    viewmat[:3, :3], viewmat[:3, 3] = cam.R, cam.t
    K = torch.tensor([[cam.fx, 0.0, cam.cx], [0.0, cam.fy, cam.cy], [0.0, 0.0, 1.0]])
    return g, cam, viewmat, K


def test_projection_matches_gsplat():
    g, cam, viewmat, K = setup()
    cov = covariance_3d(g.scales, g.quats)
    ours = project(g.means, cov, cam)
    assert ours.visible.all()  # every mean on screen: gsplat's and 3DGS's Jacobian clamps coincide there
    _, means2d, depths, conics, _ = torch_impl._fully_fused_projection(
        g.means, cov, viewmat[None], K[None], cam.width, cam.height, eps2d=0.3
    )
    inverse = torch.linalg.inv(ours.cov2d)
    torch.testing.assert_close(ours.means2d, means2d[0], rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(ours.depths, depths[0], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(inverse[:, 0, 0], conics[0, :, 0], rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(inverse[:, 0, 1], conics[0, :, 1], rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(inverse[:, 1, 1], conics[0, :, 2], rtol=1e-4, atol=1e-6)


def test_sh_colour_matches_gsplat():
    g, cam, _, _ = setup()
    dirs = g.means - cam.center
    ours = sh_to_rgb(sh_basis(dirs / dirs.norm(dim=-1, keepdim=True), 2), g.sh)
    theirs = torch.clamp_min(torch_impl._spherical_harmonics(2, dirs, g.sh) + 0.5, 0.0)  # as gsplat.rasterization
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)
