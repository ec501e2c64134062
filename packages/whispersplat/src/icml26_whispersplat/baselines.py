"""A weight-modifying hiding method, the family WhisperSplat is compared against (GS-Hider, KeySS).

GS-Hider and KeySS retrain the 3DGS model's own parameters together with a message decoder, so that the
decoder recovers the hidden image from the secret view while the scene should still render like the original.
``hide_in_weights`` is a small member of that family [INF]: it fine-tunes the SH features ``f`` of the model
(the attributes WhisperSplat's key touches) jointly with a small convolutional decoder D,

    L = L_rec(D(R_v*(f')), I_h) + gamma mean_{v in V} L1(R_v(f'), R_v(f)),   V = the cover views incl. v*,

and releases the modified model ``f'``: every view, the secret one included, must look like the cover, and the
hidden image is only readable through D. Whatever the hidden image costs is paid by the released model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from icml26_shared import check_int, check_positive
from torch import Tensor, nn

from .method import LAMBDA_SSIM, OTHER_WEIGHT, check_hidden, reconstruction_loss
from .render import Camera, Gaussians, Splats, as_splats, render

DECODER_CHANNELS = 32  # [INF] "lightweight" decoder, 3 conv layers
DECODER_LR = 1e-3


class Decoder(nn.Module):
    """A residual three-layer CNN from a render (H, W, 3) to the hidden image (H, W, 3)."""

    def __init__(self, channels: int = DECODER_CHANNELS) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, channels, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(channels, 3, 3, padding=1),
        )

    def forward(self, image: Tensor) -> Tensor:
        x = image.permute(2, 0, 1)[None]
        return (x + self.net(x))[0].permute(1, 2, 0)


@dataclass(frozen=True)
class WeightHiding:
    """The released (modified) model and the decoder that reads the hidden image from its secret view."""

    model: Gaussians
    decoder: Decoder
    secret_view: Camera

    def reveal(self) -> Tensor:
        with torch.no_grad():
            return self.decoder(render(self.model, self.secret_view))


def hide_in_weights(
    cover: Gaussians,
    secret_view: Camera | Splats,
    hidden: Tensor,
    cover_views: Sequence[Camera | Splats] = (),
    steps: int = 400,
    lr: float = 0.025,
    decoder_lr: float = DECODER_LR,
    cover_weight: float = OTHER_WEIGHT,
    seed: int = 0,
) -> WeightHiding:
    """Fine-tune the SH of ``cover`` and a decoder to hide ``hidden`` at ``secret_view``; returns the modified
    model (a new object: ``cover`` itself is left as it was, so the damage can be measured against it). Views
    are cameras or their ``Splats`` of ``cover``."""
    secret = as_splats(cover, secret_view)
    check_hidden(hidden, secret.camera)
    check_int("steps", steps, 1)
    check_positive("lr", lr)
    check_positive("decoder_lr", decoder_lr)
    check_positive("cover_weight", cover_weight)
    f = cover.sh.detach()
    views = [secret] + [as_splats(cover, v) for v in cover_views]
    with torch.no_grad():
        clean = [s.image(f) for s in views]
    torch.manual_seed(seed)
    decoder = Decoder()
    sh = f.clone().requires_grad_(True)  # f', the model's own features
    optimiser = torch.optim.Adam([{"params": [sh], "lr": lr}, {"params": decoder.parameters(), "lr": decoder_lr}])
    for _ in range(steps):
        loss = reconstruction_loss(decoder(secret.image(sh)), hidden, LAMBDA_SSIM)
        fidelity = sum(torch.mean(torch.abs(s.image(sh) - c)) for s, c in zip(views, clean, strict=True))
        loss = loss + cover_weight * fidelity / len(views)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    return WeightHiding(cover.with_sh(sh.detach()), decoder.eval(), secret.camera)
