"""Miniature reproduction of Atlas's headline claims: configs, claims and the measurement.

Per seed: (1) memory capacity, the most random key-value pairs an optimal matrix memory (the Omega
rule's minimiser over the whole context, eq. 9) stores with identity vs degree-2 polynomial features;
(2) one online pass over a stream of pairs with the Omega rule (window c) vs the delta rule (c = 1);
(3) the chunked parallel memory against its token-by-token recursion; (4) the DeepTransformer identity
(eqs. 25-26): a Hebbian memory on exponential-kernel features reproduces unnormalised softmax attention;
(5) multi-query associative recall (MQAR), Atlas vs linear attention, DeltaNet and softmax attention,
each trained from the same initial stream of batches.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from icml26_shared import (
    Claim,
    Experiment,
    check_int,
    check_positive,
    derive,
    fail,
    get_logger,
    new_figure,
    run_seeds,
    save_figure,
)
from icml26_shared import Config as BaseConfig
from icml26_shared.records import DryRun

MQAR_RULES = ("atlas", "omeganet", "deltanet", "linear_attention", "softmax")  # = layers.RULES, without torch


@dataclass(frozen=True)
class Config(BaseConfig):
    capacity_dk: int = 16
    capacity_max_pairs: int = 200
    capacity_step: int = 4
    capacity_tolerance: float = 1e-3  # normalised retrieval MSE below which a pair count is "stored"
    stream_pairs: int = 16
    stream_dk: int = 16
    windows: tuple[int, ...] = (4, 8)
    etas: tuple[float, ...] = (0.1, 0.2, 0.5, 1.0)
    kernel_dk: int = 4
    kernel_degree: int = 6
    mqar_rules: tuple[str, ...] = ("atlas", "deltanet", "linear_attention", "softmax")
    mqar_vocab: int = 64
    mqar_pairs: int = 12
    mqar_steps: int = 300
    mqar_batch: int = 32
    mqar_eval: int = 512
    d_model: int = 32
    heads: int = 2
    head_dim: int = 8
    degree: int = 2
    window: int = 4
    chunk_size: int = 16
    conv_size: int = 1  # a pair arrives at one position, so no shift is needed (ours; the paper uses 4)
    lr: float = 1e-2
    workers: int = 1  # processes running seeds in parallel (one torch thread each)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not set(self.mqar_rules) <= set(MQAR_RULES) or not {"atlas", "linear_attention"} <= set(self.mqar_rules):
            raise fail("mqar_rules", self.mqar_rules, f"names from {MQAR_RULES} including atlas and linear_attention")
        for name in (
            "capacity_dk",
            "capacity_step",
            "stream_pairs",
            "stream_dk",
            "kernel_dk",
            "mqar_steps",
            "mqar_batch",
        ):
            check_int(name, getattr(self, name), 1)
        for name in ("mqar_eval", "d_model", "heads", "head_dim", "degree", "window", "chunk_size", "conv_size"):
            check_int(name, getattr(self, name), 1)
        check_int("workers", self.workers, 1)
        check_int("capacity_max_pairs", self.capacity_max_pairs, 2)
        check_int("kernel_degree", self.kernel_degree, 1, 8)
        check_int("mqar_pairs", self.mqar_pairs, 1, self.mqar_vocab // 2)
        check_positive("capacity_tolerance", self.capacity_tolerance)
        check_positive("lr", self.lr)
        if not self.windows or any(check_int("windows", c, 2) < 2 for c in self.windows):
            raise fail("windows", self.windows, "a non-empty tuple of Omega windows c >= 2")
        if not self.etas or any(check_positive("etas", e) <= 0 for e in self.etas):
            raise fail("etas", self.etas, "a non-empty tuple of learning rates > 0")


CONFIGS = {
    "smoke": Config(
        seeds=(0, 1),
        capacity_dk=6,
        capacity_max_pairs=40,
        capacity_step=2,
        stream_pairs=8,
        stream_dk=8,
        windows=(4,),
        etas=(0.5,),
        kernel_degree=4,
        mqar_rules=("atlas", "linear_attention"),
        mqar_pairs=4,
        mqar_steps=3,
        mqar_batch=4,
        mqar_eval=8,
    ),
    "quick": Config(seeds=(0, 1, 2), workers=3),
    "paper": Config(
        seeds=(0, 1, 2, 3, 4),
        capacity_dk=32,
        capacity_max_pairs=700,
        stream_pairs=64,
        stream_dk=64,
        windows=(2, 4, 8, 16),
        mqar_rules=MQAR_RULES,
        mqar_vocab=8192,
        mqar_pairs=256,
        mqar_steps=20000,
        mqar_batch=64,
        mqar_eval=3000,
        d_model=256,
        heads=4,
        head_dim=64,
        chunk_size=64,
        conv_size=4,
        lr=1e-3,
        workers=5,
    ),
}

CLAIMS = [
    Claim(
        "poly_features_raise_capacity",
        "Degree-2 polynomial features raise the number of random pairs a matrix memory stores from about d_k to "
        "about d_k^2/2: capacity(phi_2) / capacity(identity) >= d_k / 2.",
        "eqs. 4-5: a matrix memory stores O(d_k) pairs, O(d_k^p) with phi_p (no number for d_k = 16)",
        "capacity_ratio_over_half_dk",
        ">=",
        1.0,
    ),
    Claim(
        "omega_beats_delta",
        "After one pass over a stream of d_k random pairs, the Omega rule (best window c, best eta) retrieves "
        "them with lower error than the delta rule (c = 1, best eta): error(Omega) - error(delta) < 0.",
        "eqs. 9-10: optimising over a window of past tokens (Omega) instead of the last one; OmegaNet > DeltaNet in LM",
        "omega_minus_delta_error",
        "<",
        0.0,
    ),
    Claim(
        "chunked_equals_sequential",
        "The chunked parallel computation (chunk 16, window 4, momentum, NS5) equals the token-by-token "
        "recursion: max |y_chunked - y_sequential| < 1e-9 (float64).",
        "eqs. 39-40: chunkwise parallel training computes the same recurrence (no error reported)",
        "chunked_max_abs_error",
        "<",
        1e-9,
    ),
    Claim(
        "deep_transformer_is_softmax",
        "A Hebbian memory on exponential-kernel polynomial features phi* equals unnormalised softmax attention "
        "up to the Taylor remainder: relative error < 1e-3 at degree 6.",
        "eqs. 22, 25-26: softmax attention is a Hebbian linear memory on the exp-kernel features phi*",
        "deep_transformer_relative_error",
        "<",
        1e-3,
    ),
    Claim(
        "atlas_beats_linear_attention_mqar",
        "On multi-query associative recall with more pairs than the key dimension, an Atlas layer recalls more "
        "values than linear attention of the same size: accuracy(Atlas) - accuracy(linear attention) > 0.",
        "recall-intensive tasks: Atlas beats linear-memory recurrent models (abstract; no MQAR number in our notes)",
        "mqar_atlas_minus_linear_attention",
        ">",
        0.0,
    ),
]


def _capacity_grid(config: Config) -> range:
    """Pair counts tried: every ``capacity_step``-th N up to ``capacity_max_pairs``."""
    return range(config.capacity_step, config.capacity_max_pairs + 1, config.capacity_step)


def measure_capacity(config: Config, seed: int) -> dict[str, float]:
    """Largest N on the grid whose pairs are all retrievable (mean normalised MSE < tolerance)."""
    import torch

    from .data import random_pairs
    from .features import PolynomialFeatures
    from .method import omega_least_squares

    keys, values = random_pairs(
        config.capacity_max_pairs,
        config.capacity_dk,
        config.capacity_dk,
        torch.Generator().manual_seed(derive(seed, "capacity")),
    )
    phi = PolynomialFeatures(config.capacity_dk, 2, learnable=False).double()
    maps = {"identity": keys, "poly2": phi(keys).detach()}
    out: dict[str, float] = {}
    for name, features in maps.items():
        errors = []
        for n in _capacity_grid(config):
            M = omega_least_squares(features[:n], values[:n])
            errors.append(
                ((features[:n] @ M.mT - values[:n]).square().sum(-1) / values[:n].square().sum(-1)).mean().item()
            )
        stored = [n for n, e in zip(_capacity_grid(config), errors, strict=True) if e < config.capacity_tolerance]
        out[f"capacity_{name}"] = float(max(stored, default=0))
        out[f"capacity_curve_{name}"] = errors
    out["capacity_ratio_over_half_dk"] = out["capacity_poly2"] / out["capacity_identity"] / (config.capacity_dk / 2)
    return out


def stream_error(keys, values, window: int, eta: float) -> float:
    """Normalised retrieval error of every pair after one online pass of the Omega rule (no momentum,
    no decay, gates 1, exact online updates); window 1 is the delta rule."""
    import torch

    from .method import omega_memory

    k, v = keys[None, None], values[None, None]
    gate = torch.ones(k.shape[:3], dtype=k.dtype)
    _, (M, _) = omega_memory(k, k, v, eta * gate, gate, 0 * gate, gate, window, 1, None)
    error = ((keys @ M[0, 0].mT - values).square().sum(-1) / values.square().sum(-1)).mean().item()
    return error if np.isfinite(error) else float("inf")


def measure_stream(config: Config, seed: int) -> dict[str, float]:
    """Omega (each window in config) vs delta rule over the eta grid; the best eta of each."""
    import torch

    from .data import random_pairs

    keys, values = random_pairs(
        config.stream_pairs, config.stream_dk, config.stream_dk, torch.Generator().manual_seed(derive(seed, "stream"))
    )
    out: dict[str, float] = {}
    for c in (1, *config.windows):
        errors = [stream_error(keys, values, c, eta) for eta in config.etas]
        for eta, error in zip(config.etas, errors, strict=True):
            out[f"stream_c{c}_eta{eta:g}"] = error
        out[f"stream_c{c}_best"] = min(errors)
    best_omega = min(out[f"stream_c{c}_best"] for c in config.windows)
    out["omega_minus_delta_error"] = best_omega - out["stream_c1_best"]
    return out


def measure_identities(config: Config, seed: int) -> dict[str, float]:
    """Chunked vs sequential memory (float64), and the DeepTransformer identity vs softmax attention."""
    import torch

    from .baselines import hebbian_memory, softmax_attention
    from .features import PolynomialFeatures
    from .method import omega_memory, omega_memory_sequential

    g = torch.Generator().manual_seed(derive(seed, "identities"))
    B, H, T, D, V = 2, 2, 64, 6, 4
    q, k = (
        torch.randn(B, H, T, D, generator=g, dtype=torch.float64),
        torch.randn(B, H, T, D, generator=g, dtype=torch.float64),
    )
    v = torch.randn(B, H, T, V, generator=g, dtype=torch.float64)
    eta, alpha, theta, gamma = (torch.rand(B, H, T, generator=g, dtype=torch.float64) for _ in range(4))
    args = (q, k, v, 0.1 * eta, alpha, theta, gamma, config.window, config.chunk_size, 5)
    out = {"chunked_max_abs_error": (omega_memory(*args)[0] - omega_memory_sequential(*args)[0]).abs().max().item()}
    d = config.kernel_dk
    q, k = (
        torch.nn.functional.normalize(torch.randn(1, 1, 32, d, generator=g, dtype=torch.float64), dim=-1)
        for _ in range(2)
    )
    v = torch.randn(1, 1, 32, 3, generator=g, dtype=torch.float64)
    exact = softmax_attention(q, k, v, normalise=False)  # eq. (26)
    for p in range(1, config.kernel_degree + 1):
        phi = PolynomialFeatures(d, p, learnable=False).double()
        approx = hebbian_memory(phi(q).detach(), phi(k).detach(), v)  # eq. (25): Hebbian memory on phi*
        out[f"deep_transformer_error_p{p}"] = ((approx - exact).norm() / exact.norm()).item()
    out["deep_transformer_relative_error"] = out[f"deep_transformer_error_p{config.kernel_degree}"]
    return out


def measure_mqar(config: Config, seed: int) -> dict[str, float]:
    """Train one recall model per rule (same init seed, same batches) and score fresh sequences."""
    import torch

    from .layers import RecallModel
    from .training import recall_accuracy, train_recall

    out: dict[str, float] = {}
    for rule in config.mqar_rules:
        torch.manual_seed(derive(seed, "init"))
        model = RecallModel(
            config.mqar_vocab, config.d_model, 1, heads=config.heads, head_dim=config.head_dim, rule=rule,
            degree=config.degree, window=config.window, chunk_size=config.chunk_size, conv_size=config.conv_size,
        )  # fmt: skip
        losses = train_recall(
            model, config.mqar_steps, config.mqar_batch, config.mqar_pairs, derive(seed, "train"), config.lr
        )
        out[f"mqar_{rule}_final_loss"] = float(np.mean(losses[-max(1, len(losses) // 20) :]))
        out[f"mqar_{rule}_acc"] = recall_accuracy(model, config.mqar_eval, config.mqar_pairs, derive(seed, "test"))
    out["mqar_atlas_minus_linear_attention"] = out["mqar_atlas_acc"] - out["mqar_linear_attention_acc"]
    return out


def measure_seed(config: Config, seed: int) -> dict[str, float | list[float]]:
    """Every measurement of one seed (a pure function of ``config`` and ``seed``)."""
    import torch

    torch.set_num_threads(1)
    out: dict[str, float | list[float]] = {}
    for part in (measure_capacity, measure_stream, measure_identities, measure_mqar):
        out.update(part(config, seed))
    return out


def measure(config: Config, out_dir: Path) -> dict[str, list[float]]:
    """Per-seed metrics for the claims and the README tables; seeds run in ``config.workers`` processes."""
    log = get_logger("atlas")
    out = run_seeds(
        measure_seed, config, config.seeds, config.workers, log, show=lambda k: k.endswith(("_acc", "_best"))
    )
    _figure(out, config, out_dir)
    return {name: values for name, values in out.items() if not name.startswith("capacity_curve")}


def _figure(out: dict[str, list], config: Config, out_dir: Path) -> None:
    """Capacity curves, Omega vs delta over eta, the phi* Taylor error and the MQAR accuracies."""
    fig, axes = new_figure(ncols=4, size=(3.6, 3.0))
    ax = axes.ravel()
    n = np.array(_capacity_grid(config))
    for name, color in (("identity", "tab:gray"), ("poly2", "tab:blue")):
        curve = np.mean(out[f"capacity_curve_{name}"], axis=0)
        ax[0].semilogy(n, np.maximum(curve, 1e-16), color=color, label=name)
    ax[0].axvline(config.capacity_dk**2 / 2, color="k", ls=":", lw=0.8)
    ax[0].set(xlabel="stored pairs N", ylabel="retrieval MSE / ||v||^2", title=f"capacity, d_k={config.capacity_dk}")
    ax[0].legend(fontsize=8)
    for c in (1, *config.windows):
        errors = [np.mean(out[f"stream_c{c}_eta{eta:g}"]) for eta in config.etas]
        ax[1].plot(config.etas, errors, marker="o", label="delta (c=1)" if c == 1 else f"Omega c={c}")
    ax[1].set(xscale="log", yscale="log", xlabel="eta", ylabel="retrieval error", title="one pass over the stream")
    ax[1].legend(fontsize=8)
    degrees = np.arange(1, config.kernel_degree + 1)
    ax[2].semilogy(degrees, [np.mean(out[f"deep_transformer_error_p{p}"]) for p in degrees], marker="o")
    ax[2].set(xlabel="degree p", ylabel="rel. error vs exp attention", title="Hebbian memory on phi*_p")
    accs = np.array([out[f"mqar_{r}_acc"] for r in config.mqar_rules])
    ax[3].bar(range(len(config.mqar_rules)), accs.mean(1), yerr=accs.std(1), color="tab:blue")
    ax[3].set_xticks(range(len(config.mqar_rules)), config.mqar_rules, rotation=30, fontsize=7)
    ax[3].set(ylabel="recall accuracy", title=f"MQAR, {config.mqar_pairs} pairs")
    save_figure(fig, out_dir / "atlas_claims.png")


def build(config: Config) -> DryRun:
    """The dry run: the Atlas recall model at full size; the step is one AdamW step on an MQAR batch on the
    device (the capacity, stream and identity measurements are small closed forms). Estimates: 6 flops per
    parameter and token (an upper bound: the embedding is a lookup) plus the Omega-rule memory update over
    the window (6 head_dim^2 per head, token and window position); activations ~20 floats per token, channel
    and head [INF]."""
    import torch

    from .data import mqar_batch
    from .layers import RecallModel
    from .training import recall_loss

    torch.manual_seed(0)
    model = RecallModel(
        config.mqar_vocab, config.d_model, 1, heads=config.heads, head_dim=config.head_dim, rule="atlas",
        degree=config.degree, window=config.window, chunk_size=config.chunk_size, conv_size=config.conv_size,
    )  # fmt: skip
    parameters = sum(p.numel() for p in model.parameters())
    tokens = config.mqar_batch * 2 * config.mqar_pairs
    per_step = 6.0 * parameters * tokens + 6.0 * tokens * config.heads * config.head_dim**2 * config.window
    activations = 4.0 * 20 * tokens * config.d_model * config.heads

    def step(device: str) -> None:
        net = model.to(device)
        optimizer = torch.optim.AdamW(net.parameters(), lr=config.lr)
        inputs, targets = mqar_batch(config.mqar_batch, config.mqar_pairs, config.mqar_vocab, torch.Generator())
        recall_loss(net, inputs.to(device), targets.to(device)).backward()
        optimizer.step()

    return DryRun(
        summary=f"Atlas recall model: vocab {config.mqar_vocab}, d_model {config.d_model}, {config.heads} heads, "
        f"window {config.window}; MQAR {config.mqar_pairs} pairs, batch {config.mqar_batch}, "
        f"{config.mqar_steps} steps x {len(config.mqar_rules)} rules",
        parameters=parameters,
        memory_bytes=16.0 * parameters + activations,
        flops=per_step * config.mqar_steps * len(config.mqar_rules) * len(config.seeds),
        step=step,
        step_memory_bytes=16.0 * parameters + activations,
        step_cpu_seconds=per_step / 1e9,
    )


EXPERIMENT = Experiment(name="atlas", configs=CONFIGS, claims=CLAIMS, measure=measure, build=build)


def run(config: Config | str = "quick", out_dir: Path | None = None):
    """Run the reproduction under ``config`` (a name or a Config); writes ``results.json`` and the figure."""
    return EXPERIMENT.run(config, out_dir)
