"""A dense, tile-free, differentiable 3D Gaussian-splatting renderer in PyTorch (runs on CPU).

It follows the original 3DGS rasterizer (Kerbl et al. 2023, ``diff-gaussian-rasterization``) and gsplat:

* camera: world-to-camera rotation ``R`` and translation ``t`` with OpenCV axes (x right, y down, z forward),
  pinhole intrinsics ``fx, fy, cx, cy``; pixel ``(u, v)`` has its centre at ``(u + 0.5, v + 0.5)`` (gsplat);
* 3D covariance ``Sigma = R_q S S^T R_q^T`` from scales and a unit quaternion (w, x, y, z);
* screen-space covariance by the EWA local affine approximation, ``Sigma' = J W Sigma W^T J^T + 0.3 I``
  (3DGS eq. 5, with the 0.3 low-pass dilation and the 1.3 x tan(fov) clamp of the Jacobian);
* colour from real spherical harmonics up to degree 2 with 3DGS's constants, ``c = max(0, Y(d) f + 0.5)``;
* front-to-back compositing over depth-sorted Gaussians, ``alpha = min(0.99, o exp(-d^T Sigma'^-1 d / 2))``,
  alphas below 1/255 skipped, and a pixel stopped before the Gaussian that would take its transmittance
  below 1e-4.

Dense means every pixel is tested against every Gaussian (memory O(pixels x Gaussians)); a pixel receives a
Gaussian when it lies in the Gaussian's 3-sigma square, the rectangle 3DGS uses to assign tiles. Since the
compositing weights do not depend on colour, ``splat`` returns them once per view (``Splats``) and
``Splats.image(sh)`` renders any set of SH coefficients with them: exactly the render, and cheap when only
colours are optimised, as WhisperSplat's key is.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace

import torch
from icml26_shared import check_int, check_positive, fail
from torch import Tensor

# 3DGS constants (diff-gaussian-rasterization, forward.cu / auxiliary.h)
SH_C0 = 0.28209479177387814
SH_C1 = 0.4886025119029199
SH_C2 = (1.0925484305920792, -1.0925484305920792, 0.31539156525252005, -1.0925484305920792, 0.5462742152960396)
LOW_PASS = 0.3  # added to the diagonal of the 2D covariance (anti-aliasing dilation)
FRUSTUM_CLAMP = 1.3  # the Jacobian is evaluated with x/z, y/z clamped to 1.3 tan(fov / 2)
ALPHA_MAX = 0.99
ALPHA_MIN = 1.0 / 255.0
T_MIN = 1e-4  # transmittance cut-off
NEAR_PLANE = 0.01  # gsplat's default near plane
SIGMA_RADIUS = 3.0  # radius = ceil(3 sqrt(lambda_max))
MAX_DEGREE = 2


def _tensor(name: str, value, shape: tuple) -> Tensor:
    """A finite floating tensor of the given shape (-1 = any size)."""
    if not isinstance(value, Tensor) or not value.is_floating_point():
        raise fail(name, value, "a floating-point torch.Tensor")
    if value.ndim != len(shape) or any(s != -1 and s != v for s, v in zip(shape, value.shape, strict=True)):
        raise fail(name, tuple(value.shape), f"a tensor of shape {shape} (-1: any size)")
    if not torch.isfinite(value).all():
        raise fail(name, tuple(value.shape), "finite values (found NaN or inf)")
    return value


@dataclass(frozen=True)
class Camera:
    """A pinhole camera: ``x_cam = R x_world + t`` (OpenCV axes), intrinsics in pixels."""

    R: Tensor  # (3, 3) world-to-camera rotation
    t: Tensor  # (3,)
    fx: float
    fy: float
    cx: float
    cy: float
    width: int
    height: int

    def __post_init__(self) -> None:
        _tensor("R", self.R, (3, 3))
        _tensor("t", self.t, (3,))
        eye = torch.eye(3, dtype=self.R.dtype)
        if not torch.allclose(self.R @ self.R.T, eye, atol=1e-4) or torch.det(self.R) < 0:
            raise fail("R", self.R.tolist(), "a rotation matrix (orthonormal, det +1)")
        for name in ("fx", "fy"):
            check_positive(name, getattr(self, name))
        check_int("width", self.width, 1)
        check_int("height", self.height, 1)

    @property
    def center(self) -> Tensor:
        """The camera's position in world coordinates, ``-R^T t``."""
        return -self.R.T @ self.t

    @property
    def tan_fov(self) -> tuple[float, float]:
        """tan of the half field of view in x and y (3DGS's ``tan_fovx``, ``tan_fovy``)."""
        return 0.5 * self.width / self.fx, 0.5 * self.height / self.fy


def look_at(eye, target=(0.0, 0.0, 0.0), up=(0.0, 0.0, 1.0), fov_deg: float = 30.0, size=(64, 64)) -> Camera:
    """A camera at ``eye`` looking at ``target`` with horizontal field of view ``fov_deg`` and ``size`` (H, W)."""
    eye, target, up = (torch.as_tensor(v, dtype=torch.float32) for v in (eye, target, up))
    fov = check_positive("fov_deg", fov_deg)
    if fov >= 180:
        raise fail("fov_deg", fov_deg, "a field of view in (0, 180) degrees")
    forward = target - eye
    if forward.norm() == 0:
        raise fail("eye", eye.tolist(), f"a position different from target={target.tolist()}")
    forward = forward / forward.norm()
    right = torch.linalg.cross(forward, up)
    if right.norm() < 1e-6:
        raise fail("up", up.tolist(), "a direction not parallel to the viewing direction")
    right = right / right.norm()
    down = torch.linalg.cross(forward, right)
    R = torch.stack([right, down, forward])
    height, width = size
    focal = 0.5 * width / math.tan(math.radians(fov) / 2)
    return Camera(R, -R @ eye, focal, focal, width / 2, height / 2, width, height)


@dataclass(frozen=True)
class Gaussians:
    """A 3DGS model with activated parameters (3DGS stores log-scales and opacity logits; we store both
    activated, so that every value can be checked)."""

    means: Tensor  # (N, 3)
    scales: Tensor  # (N, 3), > 0
    quats: Tensor  # (N, 4), (w, x, y, z), normalised when used
    opacities: Tensor  # (N,), in (0, 1)
    sh: Tensor  # (N, K, 3), K = (degree + 1)^2

    def __post_init__(self) -> None:
        n = _tensor("means", self.means, (-1, 3)).shape[0]
        if n == 0:
            raise fail("means", (0, 3), "at least one Gaussian")
        _tensor("scales", self.scales, (n, 3))
        if (self.scales <= 0).any():
            raise fail("scales", float(self.scales.min()), "scales > 0 (a positive-definite covariance)")
        if (_tensor("quats", self.quats, (n, 4)).norm(dim=-1) < 1e-12).any():
            raise fail("quats", "a zero quaternion", "quaternions of non-zero norm")
        o = _tensor("opacities", self.opacities, (n,))
        if ((o <= 0) | (o >= 1)).any():
            raise fail("opacities", (float(o.min()), float(o.max())), "opacities in the open interval (0, 1)")
        check_sh(self.sh, n)

    def __len__(self) -> int:
        return self.means.shape[0]

    @property
    def degree(self) -> int:
        return math.isqrt(self.sh.shape[1]) - 1

    def with_sh(self, sh: Tensor) -> Gaussians:
        """The same Gaussians with other SH coefficients (a new object; this one is unchanged)."""
        return replace(self, sh=sh)


def check_sh(sh: Tensor, n: int) -> Tensor:
    """SH coefficients of shape (n, K, 3) with K = (degree + 1)^2 for degree 0, 1 or 2."""
    _tensor("sh", sh, (n, -1, 3))
    if sh.shape[1] not in {(d + 1) ** 2 for d in range(MAX_DEGREE + 1)}:
        raise fail("sh", tuple(sh.shape), f"K = 1, 4 or 9 coefficients (SH degree <= {MAX_DEGREE}) per colour")
    return sh


def quat_to_rotmat(quats: Tensor) -> Tensor:
    """(N, 4) quaternions (w, x, y, z), normalised here, -> (N, 3, 3) rotation matrices."""
    w, x, y, z = (quats / quats.norm(dim=-1, keepdim=True)).unbind(-1)
    return torch.stack(
        [
            1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
            2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
            2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y),
        ],
        dim=-1,
    ).reshape(-1, 3, 3)  # fmt: skip


def covariance_3d(scales: Tensor, quats: Tensor) -> Tensor:
    """3DGS eq. (6): Sigma = R S S^T R^T, (N, 3, 3)."""
    M = quat_to_rotmat(quats) * scales[:, None, :]  # R S
    return M @ M.transpose(1, 2)


def sh_basis(dirs: Tensor, degree: int) -> Tensor:
    """Real SH basis at unit directions (N, 3) up to ``degree`` (<= 2), (N, (degree + 1)^2), 3DGS's signs."""
    check_int("degree", degree, 0, MAX_DEGREE)
    x, y, z = dirs.unbind(-1)
    basis = [torch.full_like(x, SH_C0)]
    if degree >= 1:
        basis += [-SH_C1 * y, SH_C1 * z, -SH_C1 * x]
    if degree >= 2:
        xx, yy, zz = x * x, y * y, z * z
        basis += [
            SH_C2[0] * x * y,
            SH_C2[1] * y * z,
            SH_C2[2] * (2 * zz - xx - yy),
            SH_C2[3] * x * z,
            SH_C2[4] * (xx - yy),
        ]
    return torch.stack(basis, dim=-1)


def sh_to_rgb(basis: Tensor, sh: Tensor) -> Tensor:
    """Colour per Gaussian, c = max(0, sum_k Y_k(d) f_k + 0.5) (3DGS computeColorFromSH), (N, 3)."""
    return torch.clamp_min(torch.einsum("nk,nkc->nc", basis, sh) + 0.5, 0.0)


@dataclass(frozen=True)
class Projection:
    """Gaussians in screen space for one camera."""

    means2d: Tensor  # (N, 2) pixel coordinates (x, y)
    cov2d: Tensor  # (N, 2, 2), low-pass dilation included
    depths: Tensor  # (N,) camera z
    radii: Tensor  # (N,) ceil(3 sqrt(lambda_max)) pixels
    visible: Tensor  # (N,) bool: in front of the near plane and touching the image


def project(means: Tensor, covariances: Tensor, camera: Camera) -> Projection:
    """Project 3D Gaussians (means (N, 3), covariances (N, 3, 3), symmetric positive definite) into ``camera``.

    Raises ValueError when no Gaussian lies in front of the camera's near plane (it looks away from the scene).
    """
    n = _tensor("means", means, (-1, 3)).shape[0]
    _tensor("covariances", covariances, (n, 3, 3))
    if not torch.allclose(covariances, covariances.transpose(1, 2), atol=1e-6):
        raise fail("covariances", tuple(covariances.shape), "symmetric 3x3 matrices")
    if torch.linalg.cholesky_ex(covariances.detach()).info.any():
        raise fail("covariances", tuple(covariances.shape), "positive-definite matrices")
    R, t = camera.R.to(means), camera.t.to(means)
    t_cam = means @ R.T + t  # W mu + t
    cov_cam = R @ covariances @ R.T  # W Sigma W^T
    tz = t_cam[:, 2]
    front = tz > NEAR_PLANE
    if not front.any():
        raise fail("camera", f"center={camera.center.tolist()}", "a camera with Gaussians in front of it")
    tz = torch.where(front, tz, torch.ones_like(tz))  # placeholders behind the camera, never rendered
    tan_x, tan_y = camera.tan_fov
    # EWA Jacobian of the perspective map at the (clamped) mean, J = [[fx/z, 0, -fx x/z^2], [0, fy/z, -fy y/z^2]]
    tx = torch.clamp(t_cam[:, 0] / tz, -FRUSTUM_CLAMP * tan_x, FRUSTUM_CLAMP * tan_x) * tz
    ty = torch.clamp(t_cam[:, 1] / tz, -FRUSTUM_CLAMP * tan_y, FRUSTUM_CLAMP * tan_y) * tz
    zero = torch.zeros_like(tz)
    J = torch.stack(
        [camera.fx / tz, zero, -camera.fx * tx / tz**2, zero, camera.fy / tz, -camera.fy * ty / tz**2], dim=-1
    ).reshape(n, 2, 3)
    cov2d = J @ cov_cam @ J.transpose(1, 2) + LOW_PASS * torch.eye(2, dtype=means.dtype)  # 3DGS eq. (5)
    means2d = torch.stack([camera.fx * t_cam[:, 0] / tz + camera.cx, camera.fy * t_cam[:, 1] / tz + camera.cy], dim=-1)
    a, b, c = cov2d[:, 0, 0], cov2d[:, 0, 1], cov2d[:, 1, 1]
    mid = 0.5 * (a + c)
    lambda_max = mid + torch.sqrt(torch.clamp_min(mid * mid - (a * c - b * b), 0.1))  # as 3DGS
    radii = torch.ceil(SIGMA_RADIUS * torch.sqrt(lambda_max)).detach()
    x, y = means2d.detach().unbind(-1)
    on_image = (x + radii > 0) & (x - radii < camera.width) & (y + radii > 0) & (y - radii < camera.height)
    return Projection(means2d, cov2d, t_cam[:, 2], radii, front & on_image)


@dataclass(frozen=True)
class Splats:
    """The colour-independent part of a render: per-pixel compositing weights of every Gaussian.

    ``image = weights @ colours + transmittance * background`` (3DGS eq. 3 with the final transmittance).
    """

    weights: Tensor  # (H W, N): alpha_i prod_{j < i} (1 - alpha_j), 0 where not blended; sparse CSR when constant
    transmittance: Tensor  # (H W,): what is left for the background
    basis: Tensor  # (N, K): SH basis at each Gaussian's viewing direction
    camera: Camera
    weights_t: Tensor | None = None  # the transpose of sparse weights, for the backward pass

    def image(self, sh: Tensor, background: Tensor | None = None) -> Tensor:
        """Render the SH coefficients ``sh`` (N, K, 3) with these weights: an (H, W, 3) image."""
        check_sh(sh, self.weights.shape[1])
        if sh.shape[1] > self.basis.shape[1]:
            raise fail("sh", tuple(sh.shape), f"at most K={self.basis.shape[1]} coefficients (the splat's degree)")
        rgb = sh_to_rgb(self.basis[:, : sh.shape[1]], sh)
        image = (
            self.weights @ rgb if self.weights_t is None else _ConstantProduct.apply(self.weights, self.weights_t, rgb)
        )
        if background is not None:
            image = image + self.transmittance[:, None] * _tensor("background", background, (3,))
        return image.reshape(self.camera.height, self.camera.width, 3)


def splat(gaussians: Gaussians, camera: Camera) -> Splats:
    """Project, sort by depth and composite front to back: the weights of every Gaussian at every pixel."""
    proj = project(gaussians.means, covariance_3d(gaussians.scales, gaussians.quats), camera)
    ids = torch.nonzero(proj.visible).squeeze(1)
    ids = ids[torch.argsort(proj.depths[ids].detach(), stable=True)]  # front to back
    v, u = torch.meshgrid(torch.arange(camera.height), torch.arange(camera.width), indexing="ij")
    pixels = torch.stack([u, v], dim=-1).reshape(-1, 2).to(gaussians.means) + 0.5
    d = pixels[:, None, :] - proj.means2d[ids][None]  # (P, M, 2)
    conic = torch.linalg.inv(proj.cov2d[ids])  # Sigma'^-1
    power = (
        -0.5 * (conic[:, 0, 0] * d[..., 0] ** 2 + conic[:, 1, 1] * d[..., 1] ** 2)
        - conic[:, 0, 1] * d[..., 0] * d[..., 1]
    )
    alpha = torch.clamp_max(gaussians.opacities[ids] * torch.exp(power), ALPHA_MAX)
    in_box = (d.detach().abs() <= proj.radii[ids][None, :, None]).all(-1)
    alpha = torch.where(in_box & (power <= 0) & (alpha >= ALPHA_MIN), alpha, torch.zeros_like(alpha))
    # a pixel stops before the Gaussian that would take T below T_MIN; T only decreases, so this is a prefix
    blended = torch.cumprod(1 - alpha.detach(), dim=1) >= T_MIN
    alpha = torch.where(blended, alpha, torch.zeros_like(alpha))
    T = torch.cumprod(1 - alpha, dim=1)  # transmittance after each Gaussian
    T_before = torch.cat([torch.ones_like(T[:, :1]), T[:, :-1]], dim=1)
    weights = torch.zeros(pixels.shape[0], len(gaussians), dtype=alpha.dtype)
    weights = weights.index_copy(1, ids, alpha * T_before)
    dirs = gaussians.means - camera.center.to(gaussians.means)
    basis = sh_basis(dirs / dirs.norm(dim=-1, keepdim=True), gaussians.degree)
    transmittance = T[:, -1] if len(ids) else torch.ones(pixels.shape[0], dtype=alpha.dtype)
    if weights.requires_grad:
        return Splats(weights, transmittance, basis, camera)
    with warnings.catch_warnings():  # frozen geometry: a few dozen Gaussians per pixel, sparse products are faster
        warnings.filterwarnings("ignore", "Sparse CSR tensor support is in beta", UserWarning)
        return Splats(weights.to_sparse_csr(), transmittance, basis, camera, weights.T.contiguous().to_sparse_csr())


class _ConstantProduct(torch.autograd.Function):
    """``W x`` for a constant sparse ``W``; the backward pass multiplies by the stored transpose (CSR x dense)."""

    @staticmethod
    def forward(ctx, weights: Tensor, weights_t: Tensor, x: Tensor) -> Tensor:
        ctx.weights_t = weights_t
        return weights @ x

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[None, None, Tensor]:
        return None, None, ctx.weights_t @ grad


def as_splats(gaussians: Gaussians, view: Camera | Splats) -> Splats:
    """A view given as a camera or as the ``Splats`` of ``gaussians`` already computed for it (no gradient)."""
    if isinstance(view, Camera):
        with torch.no_grad():
            return splat(gaussians, view)
    if not isinstance(view, Splats) or view.weights.shape[1] != len(gaussians):
        raise fail("view", type(view).__name__, f"a Camera or the Splats of these {len(gaussians)} Gaussians")
    return view


def render(gaussians: Gaussians, camera: Camera, sh: Tensor | None = None, background: Tensor | None = None) -> Tensor:
    """The (H, W, 3) image of ``gaussians`` seen by ``camera``, with other SH coefficients ``sh`` if given."""
    return splat(gaussians, camera).image(gaussians.sh if sh is None else sh, background)
