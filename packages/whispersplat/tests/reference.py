"""An independent numpy reference of the 3DGS forward pass, written from the rasterizer's definitions.

Per Gaussian: the 3D covariance from the rotation matrix of the quaternion, the Jacobian of the perspective map
differentiated numerically (central differences of (fx x/z + cx, fy y/z + cy)) rather than by its closed form,
the SH colour from the written-out polynomials; per pixel: a plain loop over the depth-sorted Gaussians with
3DGS's early exits (alpha < 1/255 skipped, stop before T drops below 1e-4), in float64.
"""

from __future__ import annotations

import numpy as np


def rotation(q: np.ndarray) -> np.ndarray:
    w, x, y, z = q / np.linalg.norm(q)
    return np.array(
        [
            [w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z],
        ]
    )


def to_pixels(p: np.ndarray, cam: dict) -> np.ndarray:
    return np.array([cam["fx"] * p[0] / p[2] + cam["cx"], cam["fy"] * p[1] / p[2] + cam["cy"]])


def project_one(mean, scale, quat, cam: dict) -> tuple[np.ndarray, np.ndarray, float]:
    """(mean2d, cov2d with the 0.3 dilation, depth) of one Gaussian; the mean must lie inside the 1.3 tan clamp."""
    p = cam["R"] @ mean + cam["t"]
    Rq = rotation(quat)
    sigma = Rq @ np.diag(scale**2) @ Rq.T
    J = np.zeros((2, 3))
    h = 1e-6
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        J[:, k] = (to_pixels(p + e, cam) - to_pixels(p - e, cam)) / (2 * h)
    cov2d = J @ cam["R"] @ sigma @ cam["R"].T @ J.T + 0.3 * np.eye(2)
    return to_pixels(p, cam), cov2d, p[2]


def sh_colour(sh: np.ndarray, d: np.ndarray) -> np.ndarray:
    x, y, z = d / np.linalg.norm(d)
    Y = [0.28209479177387814, -0.4886025119029199 * y, 0.4886025119029199 * z, -0.4886025119029199 * x]
    Y += [
        1.0925484305920792 * x * y,
        -1.0925484305920792 * y * z,
        0.31539156525252005 * (2 * z * z - x * x - y * y),
        -1.0925484305920792 * x * z,
        0.5462742152960396 * (x * x - y * y),
    ]
    return np.maximum(np.einsum("k,kc->c", np.array(Y[: sh.shape[0]]), sh) + 0.5, 0.0)


def render_pixels(g: dict, cam: dict, pixels) -> np.ndarray:
    """Colours (len(pixels), 3) of integer pixels (u, v), black background."""
    center = -cam["R"].T @ cam["t"]
    items = []
    for i in range(len(g["means"])):
        mean2d, cov2d, depth = project_one(g["means"][i], g["scales"][i], g["quats"][i], cam)
        if depth <= 0.01:
            continue
        a, b, c = cov2d[0, 0], cov2d[0, 1], cov2d[1, 1]
        mid = (a + c) / 2
        radius = np.ceil(3 * np.sqrt(mid + np.sqrt(max(0.1, mid * mid - (a * c - b * b)))))
        colour = sh_colour(g["sh"][i], g["means"][i] - center)
        items.append((depth, mean2d, np.linalg.inv(cov2d), radius, g["opacities"][i], colour))
    items.sort(key=lambda item: item[0])
    out = []
    for u, v in pixels:
        pixel = np.array([u + 0.5, v + 0.5])
        T, C = 1.0, np.zeros(3)
        for _, mean2d, conic, radius, opacity, colour in items:
            d = pixel - mean2d
            if np.abs(d).max() > radius:
                continue
            alpha = min(0.99, opacity * np.exp(-0.5 * d @ conic @ d))
            if alpha < 1 / 255:
                continue
            if T * (1 - alpha) < 1e-4:
                break
            C += colour * alpha * T
            T *= 1 - alpha
        out.append(C)
    return np.array(out)
