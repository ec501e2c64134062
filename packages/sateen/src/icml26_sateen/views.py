"""Structure-disrupted views x' of a test batch (SaTeen's intra-sample alignment, DeYO's PLPD).

The disruption destroys the object's shape while keeping its local statistics, so a model that relies on
"stable dominant features" (the paper's assumption) should change its prediction on x'. Every function is
pure: the randomness comes from the ``torch.Generator`` passed in, never from global or clock-seeded state.

Axis letters: b batch, c channels, h/w height/width, g = patch_len (patches per row/column).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from icml26_shared import check_choice, check_int, fail

DISRUPTIONS = ("patch", "pixel", "occ", "random", "random+patch")
PATCH_LEN = 4  # patches per row/column (official default --patch_len 4)


def _check_images(x: torch.Tensor) -> torch.Tensor:
    if not isinstance(x, torch.Tensor) or x.ndim != 4:
        shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise fail("x", shape, "a 4-D image tensor (b, c, h, w)")
    if x.shape[0] == 0:
        raise fail("x", tuple(x.shape), "a non-empty batch")
    return x


def patch_shuffle(
    x: torch.Tensor, patch_len: int = PATCH_LEN, generator: torch.Generator | None = None
) -> torch.Tensor:
    """Cut every image into a ``patch_len x patch_len`` grid and permute the patches, independently per sample.

    Images whose side is not a multiple of ``patch_len`` are resized (bilinear) to the nearest smaller
    multiple, shuffled and resized back, as the official code does with torchvision's Resize.
    """
    x = _check_images(x)
    b, c, h, w = x.shape
    check_int("patch_len", patch_len, 1, min(h, w))
    size = (h // patch_len * patch_len, w // patch_len * patch_len)
    y = x if size == (h, w) else F.interpolate(x, size=size, mode="bilinear", align_corners=False, antialias=True)
    g = patch_len
    ph, pw = size[0] // g, size[1] // g
    patches = y.reshape(b, c, g, ph, g, pw).permute(0, 2, 4, 1, 3, 5).reshape(b, g * g, c, ph, pw)
    order = torch.argsort(torch.rand(b, g * g, generator=generator), dim=1)  # one permutation per sample
    patches = patches[torch.arange(b).unsqueeze(1), order]
    y = patches.reshape(b, g, g, c, ph, pw).permute(0, 3, 1, 4, 2, 5).reshape(b, c, size[0], size[1])
    return y if size == (h, w) else F.interpolate(y, size=(h, w), mode="bilinear", align_corners=False, antialias=True)


def pixel_shuffle(x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """Permute the pixel positions (one permutation for the whole batch, as in the official code)."""
    x = _check_images(x)
    b, c, h, w = x.shape
    order = torch.randperm(h * w, generator=generator)
    return x.reshape(b, c, h * w)[:, :, order].reshape(b, c, h, w)


def occlude(
    x: torch.Tensor, size: int | None = None, row: int | None = None, column: int | None = None
) -> torch.Tensor:
    """Replace a ``size x size`` window at (row, column) by each image's per-channel mean.

    Defaults scale the official 112-pixel window at (56, 56) of a 224-pixel image: half the side, centred.
    """
    x = _check_images(x)
    h, w = x.shape[-2:]
    size = min(h, w) // 2 if size is None else check_int("size", size, 1, min(h, w))
    row = (h - size) // 2 if row is None else check_int("row", row, 0, h - size)
    column = (w - size) // 2 if column is None else check_int("column", column, 0, w - size)
    y = x.clone()
    y[:, :, row : row + size, column : column + size] = x.mean(dim=(2, 3), keepdim=True)
    return y


def random_swap(x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """Replace each image by a random image of the batch (drawn with replacement, as the official code)."""
    x = _check_images(x)
    return x[torch.randint(0, x.shape[0], (x.shape[0],), generator=generator)]


def disrupt(
    x: torch.Tensor, kind: str = "patch", patch_len: int = PATCH_LEN, generator: torch.Generator | None = None
) -> torch.Tensor:
    """The structure-disrupted view x' of ``x`` (b, c, h, w) by ``kind`` in ``DISRUPTIONS`` (no gradient)."""
    check_choice("kind", kind, DISRUPTIONS)
    x = _check_images(x).detach()
    if kind == "patch":
        return patch_shuffle(x, patch_len, generator)
    if kind == "pixel":
        return pixel_shuffle(x, generator)
    if kind == "occ":
        return occlude(x)
    if kind == "random":
        return random_swap(x, generator)
    return occlude(random_swap(x, generator))  # "random+patch": the official code occludes the swapped batch
