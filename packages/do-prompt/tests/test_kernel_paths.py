"""The image tower's pretraining gives the same tower on torch's default (scalar) CPU kernels as on the
vectorised ones (issue 27).

In float32 the two paths' towers already differ at initialisation (the vectorised normal fill of the position
embeddings) and after the quick config's 150 pretraining steps they were other models (parameters 5-15% apart),
so two machines cached different towers, every seed shared the difference and verdicts flipped. In float64 the
differences stay at rounding level.
"""

import torch
import torch.nn.functional as F
from icml26_do_prompt.data import load_foregrounds
from icml26_do_prompt.towers import pretrain_image_tower
from icml26_shared.testing import on_default_kernels


def pretrained() -> dict[str, torch.Tensor]:
    """Two pretraining steps of the image tower on 128 digits against seeded float64 caption features."""
    X, y = load_foregrounds("digits")
    captions = F.normalize(torch.randn(100, 384, generator=torch.Generator().manual_seed(0), dtype=torch.float64))
    return pretrain_image_tower(X[:128], y[:128], captions, epochs=1, seed=0)


def test_pretraining_is_the_same_on_the_default_kernel_path(tmp_path):
    other = on_default_kernels(__file__, "pretrained()", tmp_path)
    # The 0.1.1 code (float32, float32 captions) differed by 2.5e-8 before the first step, 6.6e-4 after three; float64
    # agrees to ~1e-15, also in the attention key bias (a zero gradient up to rounding, which Adam's
    # normalisation turns into steps that differ between the paths: 6e-10 after the quick config's 150 steps).
    for name, value in pretrained().items():
        assert value.dtype == torch.float64, name
        assert torch.allclose(value, other[name], rtol=0, atol=1e-10), name
