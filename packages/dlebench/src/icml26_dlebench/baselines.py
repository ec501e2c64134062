"""What DLEBench compares its dual-mode protocol against.

* The plain whole-image judge (LMM-as-a-judge without tools or oracle): in the offline judge, global
  metrics on the whole source/edited pair at the judge's view resolution.
* Classic edit metrics of earlier benchmarks: whole-image L1, PSNR and SSIM between source and edited,
  and the same restricted to the background (outside the edit region), used as scores with the sign
  that makes larger better.
"""

from __future__ import annotations

import numpy as np

from .data import EditItem
from .imaging import check_image, ssim, ssim_map, zoom


def whole_image_evidence(source: np.ndarray, edited: np.ndarray, view_size: int, kappa: float) -> tuple[float, float]:
    """(q_IF, q_VC) of the whole-image judge: both images seen whole at ``view_size`` px; IF evidence
    ``1 - exp(-d / kappa)`` from the mean absolute change ``d`` over the whole view (the judge cannot
    tell where the change is), VC evidence the whole-image SSIM of the view (``imaging.ssim``: skimage's,
    over the windows inside the view)."""
    a, b = zoom(source, None, view_size), zoom(edited, None, view_size)
    change = float(np.abs(b - a).mean())
    return 1.0 - float(np.exp(-change / kappa)), ssim(a, b)


def classic_metrics(item: EditItem, edited: np.ndarray) -> dict[str, float]:
    """Whole-image and background L1 (negated), PSNR and SSIM between the source and the edit.

    Whole-image PSNR and SSIM are scikit-image's (the field's); background SSIM is the mean of the local
    SSIM map (``imaging.ssim_map``) over the pixels outside the edit region."""
    from skimage.metrics import peak_signal_noise_ratio

    edited = check_image("edited", edited, item.source.shape[:2])
    background = ~item.region
    error = np.abs(edited - item.source).mean(axis=-1)
    mse = float(((edited - item.source) ** 2)[background].mean())
    local = ssim_map(item.source, edited)
    return {
        "neg_l1_whole": -float(error.mean()),
        "psnr_whole": float(peak_signal_noise_ratio(item.source, edited, data_range=1.0)),
        "ssim_whole": ssim(item.source, edited),
        "neg_l1_background": -float(error[background].mean()),
        "psnr_background": float(10 * np.log10(1.0 / max(mse, 1e-12))),
        "ssim_background": float(local[background].mean()),
    }
