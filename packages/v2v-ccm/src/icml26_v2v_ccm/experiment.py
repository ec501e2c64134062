"""Miniature reproduction: V2V-CCM vs pruning baselines at equal budget, on generated V2V-QA-like scenes.

Per seed: generate training and test worlds (ego + 2 CAVs, buildings, ray-cast LiDAR), train the tiny V2V MLLM
(dense + token-drop augmentation, with the QSM head distilled from its attention; cached through
``icml26_shared.cached``), then answer every test question with each CAV's tokens chosen by CCM, its two
single-module ablations (QSM only, SCM only), random, FastV-style and diversity pruning at keep ratios rho,
and with dense cooperation and the ego alone. Accuracy per question type, bytes per transmission.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from icml26_shared import (
    Claim,
    DryRun,
    Experiment,
    check_int,
    check_number,
    check_positive,
    derive,
    fail,
    fingerprint,
    get_logger,
    new_figure,
    run_seeds,
    save_figure,
)
from icml26_shared import Config as BaseConfig

QUESTION_TYPES = ("grounding", "occluded", "notable", "planning")  # as in data.QUESTION_TYPES (no torch here)
METHODS = ("ccm", "qsm_only", "scm_only", "random", "fastv", "diversity")
BASELINES = ("random", "fastv", "diversity")


@dataclass(frozen=True)
class Config(BaseConfig):
    grid: int = 16  # cells a side (1 m cells) [INF, spec: 32; 16 to fit the CPU budget]
    patch: int = 4  # cells per token a side -> (grid / patch)^2 tokens per agent
    n_agents: int = 3  # ego + 2 CAVs
    lidar_range: float = 10.0  # cells
    train_scenes: int = 2000
    test_scenes: int = 300  # x 4 question types
    d: int = 32
    heads: int = 4
    layers: int = 2
    d_m: int = 16  # QSM width
    steps: int = 500
    batch_size: int = 64
    lr: float = 3e-3
    keep_ratios: tuple[float, ...] = (0.125, 0.25, 0.5)
    lam: float = 1.0  # CCM redundancy weight, fixed before any run [INF]
    fastv_layer: int = 1  # FastV's K = 2 (1-based) -> attention of our second layer
    workers: int = 3  # processes running seeds in parallel (one torch thread each)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("grid", self.grid, 4)
        check_int("patch", self.patch, 1)
        if self.grid % self.patch:
            raise fail("patch", self.patch, f"a divisor of grid={self.grid}")
        check_int("n_agents", self.n_agents, 2)
        for name in ("train_scenes", "test_scenes", "d_m", "steps", "batch_size", "workers", "layers", "heads"):
            check_int(name, getattr(self, name), 1)
        check_int("d", self.d, 4)
        if self.d % 4:
            raise fail("d", self.d, "a multiple of 4 (the 2-D sinusoidal code)")
        if self.d % self.heads:
            raise fail("heads", self.heads, f"a divisor of d={self.d}")
        check_int("fastv_layer", self.fastv_layer, 0, self.layers - 1)
        check_positive("lidar_range", self.lidar_range)
        check_positive("lr", self.lr)
        check_number("lam", self.lam)
        if 0.25 not in self.keep_ratios or 0.5 not in self.keep_ratios:
            raise fail("keep_ratios", self.keep_ratios, "ratios in (0, 1] including 0.25 and 0.5 (the claims)")
        for rho in self.keep_ratios:
            if not (isinstance(rho, float) and 0 < rho <= 1):
                raise fail("keep_ratios", self.keep_ratios, "floats in (0, 1]")


CONFIGS = {
    "smoke": Config(seeds=(0, 1), train_scenes=48, test_scenes=8, steps=4, batch_size=16, workers=1),
    "quick": Config(),
    # The budget the README names as missing: the spec's 32 x 32 world (halved in quick to fit the CPU budget;
    # 64 tokens per agent, so keeping 0.25 leaves room for the SCM term to matter) with the paper config's LiDAR
    # range, 4x the training worlds and 4x the Adam steps for the 4x larger token sets. Both failing claims are
    # decided at 3 seeds (-0.0089 +- 0.0048 and -0.0089 +- 0.0011), so the seeds stay. Cost: quick is ~42 CPU s
    # per seed; a training step at grid 32 costs 2.1x grid 16's and world generation 2.2x (measured under load),
    # so ~2.1 x 4 = 8.4x -> ~350 CPU s per seed, ~18 CPU min for 3 seeds: ~9-10 min wall on 2 idle cores
    # (3 worker processes, one torch thread each).
    "medium": Config(grid=32, lidar_range=16.0, train_scenes=8000, steps=2000),
    "paper": Config(
        seeds=(0, 1, 2, 3, 4),
        grid=32,
        lidar_range=16.0,
        train_scenes=20000,
        test_scenes=2000,
        d=128,
        heads=8,
        layers=4,
        d_m=32,
        steps=20000,
        lr=1e-3,
        fastv_layer=1,
        workers=5,
    ),
}

CLAIMS = [
    Claim(
        "ccm_beats_baselines_occluded",
        "At keep ratio 0.25, CCM answers occluded-object questions more accurately than every baseline at equal "
        "budget: acc(CCM) - max(acc(random), acc(FastV), acc(diversity)) > 0.",
        "V2V-CCM consistently outperforms existing pruning methods on V2V-QA / V2V-GoT-QA (abstract)",
        "ccm_minus_best_baseline_occluded_0.25",
        ">",
        0.0,
    ),
    Claim(
        "ccm_beats_qsm_only",
        "Ablation at keep ratio 0.25, occluded-object questions: acc(CCM) - acc(QSM only) > 0.",
        "both request messages matter (abstract: QSM keeps question-relevant, SCM removes redundant tokens)",
        "ccm_minus_qsm_only_occluded_0.25",
        ">",
        0.0,
    ),
    Claim(
        "ccm_beats_scm_only",
        "Ablation at keep ratio 0.25, occluded-object questions: acc(CCM) - acc(SCM only) > 0.",
        "both request messages matter (abstract)",
        "ccm_minus_scm_only_occluded_0.25",
        ">",
        0.0,
    ),
    Claim(
        "payload_scales_with_keep_ratio",
        "CCM's token payload (bytes sent minus the request) is rho x the dense bytes within 5% at every rho: "
        "max over rho of abs(payload / (rho dense) - 1) <= 0.05.",
        "communication cost falls with the kept tokens (abstract: substantially reduces communication)",
        "payload_scaling_error",
        "<=",
        0.05,
    ),
    Claim(
        "request_overhead_under_5pct",
        "The request broadcast (QSM + SCM) costs under 5% of a dense transmission: request / dense < 0.05.",
        "request messages are small (spec; no number public)",
        "request_overhead",
        "<",
        0.05,
    ),
    Claim(
        "cooperation_beats_ego_only",
        "Dense cooperation answers occluded-object questions better than the ego alone: acc(dense) - acc(ego) > 0.",
        "cooperation is what V2V-MLLMs are for (V2V-LLM; sanity check)",
        "dense_minus_ego_occluded",
        ">",
        0.0,
    ),
    Claim(
        "ccm_half_within_2_points_of_dense",
        "At keep ratio 0.5, CCM's accuracy over all questions is within 2 points of dense cooperation: "
        "acc(dense) - acc(CCM) <= 0.02.",
        "pruning keeps performance while cutting cost (abstract)",
        "dense_minus_ccm_all_0.5",
        "<=",
        0.02,
    ),
]


def _train_model(config: Config, seed: int, train_data):
    """The trained model of this seed, from the cache when it was trained before (same config and seed)."""
    import torch
    from icml26_shared import cached

    from .model import CooperativeQA
    from .training import train

    def build() -> dict:
        torch.manual_seed(derive(seed, "init"))
        model = CooperativeQA(
            train_data.tokens.shape[-1], config.grid, config.d, config.heads, config.layers, d_m=config.d_m
        )
        losses = train(model, train_data, config.steps, config.batch_size, config.lr, derive(seed, "batches"))
        return {**model.state_dict(), "losses": torch.tensor(losses)}

    keys = ("grid", "patch", "n_agents", "lidar_range", "train_scenes", "d", "heads", "layers", "d_m", "steps")
    key = fingerprint({k: getattr(config, k) for k in (*keys, "batch_size", "lr")} | {"seed": seed})
    state = cached(f"v2v-ccm/model-{key}", build)
    losses = state.pop("losses")
    model = CooperativeQA(
        train_data.tokens.shape[-1], config.grid, config.d, config.heads, config.layers, d_m=config.d_m
    )
    model.load_state_dict(state)
    return model.eval(), losses.numpy()


def _selector(method: str, rho: float, model, config: Config, seed: int):
    """select(inputs, coverage, start) -> keep mask (b, a-1, n) of the CAV tokens for ``method`` at ``rho``."""
    import torch

    from .baselines import diversity_select, fastv_scores, random_select
    from .method import ccm_scores, scm_coverage, scm_message, select_tokens

    def select(inputs, coverage, start):
        senders = inputs.visual[:, 1:]
        shape = senders.shape[:3]
        generator = torch.Generator().manual_seed(derive(seed, method, str(rho), start))
        c = scm_coverage(scm_message(coverage[:, 0]))[:, None].expand(shape)  # SCM, read at every CAV
        if method in ("ccm", "qsm_only"):
            r = model.relevance(model.qsm(inputs.question), senders)  # QSM relevance at every CAV
            return select_tokens(ccm_scores(r, c, config.lam) if method == "ccm" else r, rho)
        if method == "scm_only":  # fewest-covered first; ties (equal coverage) in random order
            return select_tokens(-c + 1e-3 * torch.rand(shape, generator=generator), rho)
        if method == "random":
            return random_select(shape, rho, generator)
        if method == "fastv":
            _, attentions = model(inputs, torch.ones(inputs.visual.shape[:3], dtype=torch.bool))
            return select_tokens(fastv_scores(attentions, config.fastv_layer, inputs.visual.shape[1])[:, 1:], rho)
        return diversity_select(senders, rho)

    return select


def measure_seed(config: Config, seed: int) -> dict[str, float]:
    """Every measurement of one seed (a pure function of ``config`` and ``seed``)."""
    import torch

    from .data import make_dataset
    from .method import dense_bytes, keep_count, message_bytes, request_bytes
    from .training import evaluate

    torch.set_num_threads(1)
    world = {"grid": config.grid, "patch": config.patch, "n_agents": config.n_agents, "lidar_range": config.lidar_range}
    train_data = make_dataset(config.train_scenes, derive(seed, "train"), **world)
    test_data = make_dataset(config.test_scenes, derive(seed, "test"), **world)
    model, losses = _train_model(config, seed, train_data)
    n = test_data.tokens.shape[2]
    cavs = config.n_agents - 1
    out: dict[str, float] = {"final_loss": float(losses[-max(1, len(losses) // 10) :].mean())}

    def record(name: str, select) -> None:
        correct, qtype, kept = evaluate(model, test_data, select)
        for t, q in enumerate(QUESTION_TYPES):
            out[f"acc_{name}_{q}"] = float(correct[qtype == t].mean())
        out[f"acc_{name}_all"] = float(correct.mean())
        out[f"tokens_{name}"] = float(n + kept.mean())  # visual tokens entering the model (ego + received)

    record("dense", lambda inputs, coverage, start: torch.ones(inputs.visual[:, 1:].shape[:3], dtype=torch.bool))
    record("ego", lambda inputs, coverage, start: torch.zeros(inputs.visual[:, 1:].shape[:3], dtype=torch.bool))
    dense = cavs * dense_bytes(n, config.d)
    request = cavs * request_bytes(config.d_m, n)
    out["bytes_dense"] = float(dense)
    out["request_overhead"] = request / dense
    scaling = []
    for rho in config.keep_ratios:
        for method in METHODS:
            record(f"{method}_{rho}", _selector(method, rho, model, config, seed))
        payload = cavs * message_bytes(keep_count(rho, n), n, config.d)
        out[f"bytes_ccm_{rho}"] = float(payload + request)
        scaling.append(abs(payload / (rho * dense) - 1))
    out["payload_scaling_error"] = max(scaling)
    occ = "occluded"
    best = max(out[f"acc_{b}_0.25_{occ}"] for b in BASELINES)
    out["ccm_minus_best_baseline_occluded_0.25"] = out[f"acc_ccm_0.25_{occ}"] - best
    out["ccm_minus_qsm_only_occluded_0.25"] = out[f"acc_ccm_0.25_{occ}"] - out[f"acc_qsm_only_0.25_{occ}"]
    out["ccm_minus_scm_only_occluded_0.25"] = out[f"acc_ccm_0.25_{occ}"] - out[f"acc_scm_only_0.25_{occ}"]
    out["dense_minus_ego_occluded"] = out[f"acc_dense_{occ}"] - out[f"acc_ego_{occ}"]
    out["dense_minus_ccm_all_0.5"] = out["acc_dense_all"] - out["acc_ccm_0.5_all"]
    return out


def measure(config: Config, out_dir: Path) -> dict[str, list[float]]:
    """Per-seed metrics for the claims and the README tables; seeds run in ``config.workers`` processes."""
    log = get_logger("v2v-ccm")
    out = run_seeds(measure_seed, config, config.seeds, config.workers, log, show=lambda k: "_minus_" in k)
    _figure(out, config, out_dir)
    return out


def _figure(out: dict[str, list[float]], config: Config, out_dir: Path) -> None:
    """Occluded-object accuracy and all-question accuracy vs keep ratio for every selector."""
    fig, axes = new_figure(ncols=2, size=(4.2, 3.2))
    axes = axes.ravel()
    rhos = list(config.keep_ratios)
    for ax, q in zip(axes, ("occluded", "all"), strict=True):
        for method in METHODS:
            ax.plot(rhos, [np.mean(out[f"acc_{method}_{r}_{q}"]) for r in rhos], marker="o", label=method)
        for ref, style in (("dense", "--"), ("ego", ":")):
            ax.axhline(np.mean(out[f"acc_{ref}_{q}"]), color="k", linestyle=style, label=ref)
        ax.set(
            xscale="log", xticks=rhos, xticklabels=[str(r) for r in rhos], xlabel="keep ratio rho", ylabel="accuracy"
        )
        ax.set_title(f"{q} questions")
    axes[0].legend(fontsize=7)
    save_figure(fig, out_dir / "v2v_ccm_accuracy.png")


QUESTION_TOKENS = 2  # [INF] for the estimates: the question's tokens beside the agents' tokens
DRY_RUN_SCENES = 8  # the step's batch: the paper's 64 take ~3 CPU s and ~20 s wall on a loaded 2-core machine


def build(config: Config) -> DryRun:
    """The dry run: the V2V MLLM at the config's width and depth on generated worlds of the config's size (no data
    to download); the step is one Adam step of ``training.train`` on ``DRY_RUN_SCENES`` generated scenes (the
    paper-size model, a smaller batch by design; one torch thread, as ``measure`` runs). Estimates: 6 flops per
    weight and token plus the attention's 2 n^2 d per layer (x 3 for backward) for training; every test question
    answered at 3 keep ratios x 6 methods + 2."""
    import torch

    from .data import make_dataset
    from .model import CooperativeQA
    from .training import train

    world = {"grid": config.grid, "patch": config.patch, "n_agents": config.n_agents, "lidar_range": config.lidar_range}
    tokens_per_agent = (config.grid // config.patch) ** 2
    n = config.n_agents * tokens_per_agent + QUESTION_TOKENS

    def make_model(width: int) -> CooperativeQA:
        return CooperativeQA(width, config.grid, config.d, config.heads, config.layers, d_m=config.d_m)

    sample = make_dataset(1, 0, **world)
    features = sample.tokens.shape[-1]
    parameters = sum(p.numel() for p in make_model(features).parameters())
    per_example = 2.0 * parameters * n + 2.0 * n * n * config.d * config.layers  # one forward
    answers = config.test_scenes * len(QUESTION_TYPES) * (len(config.keep_ratios) * len(METHODS) + 2)
    flops = 3 * per_example * config.batch_size * config.steps + per_example * answers
    step_memory = 16.0 * parameters + 4.0 * config.batch_size * n * config.d * config.layers * 12  # + activations
    # (the memory of a full paper batch; the dry run's step holds DRY_RUN_SCENES of them)

    def step(device: str) -> None:
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            data = make_dataset(DRY_RUN_SCENES, 0, **world)
            train(make_model(features), data, 1, DRY_RUN_SCENES, config.lr, 0)
        finally:
            torch.set_num_threads(threads)

    return DryRun(
        summary=f"V2V MLLM (d={config.d}, {config.heads} heads, {config.layers} layers, QSM d_m={config.d_m}) on "
        f"{config.grid}x{config.grid} worlds, {config.n_agents} agents x {tokens_per_agent} tokens; "
        f"{config.train_scenes} train / {config.test_scenes} test scenes, {config.steps} steps",
        parameters=parameters,
        # the generated scenes' uint8 tokens and the model with Adam, per worker
        memory_bytes=(sample.tokens.nbytes * (config.train_scenes + config.test_scenes) + step_memory)
        * min(config.workers, len(config.seeds)),
        flops=flops * len(config.seeds),
        step=step,
        step_memory_bytes=step_memory,
        step_cpu_seconds=3 * per_example * DRY_RUN_SCENES / 1e9 + 0.01 * DRY_RUN_SCENES,  # + ray casting
        devices=("cpu",),  # training.train builds its batches on the CPU
    )


EXPERIMENT = Experiment(name="v2v-ccm", configs=CONFIGS, claims=CLAIMS, measure=measure, build=build)


def run(config: Config | str = "quick", out_dir: Path | None = None):
    """Run the reproduction under ``config`` (a name or a Config); writes ``results.json`` and the figure."""
    return EXPERIMENT.run(config, out_dir)
