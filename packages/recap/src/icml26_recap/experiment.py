"""Miniature reproduction of ReCAP's headline claims: configs, claims and the measurement.

Per seed: (1) the data engine rolls out the scripted solvers on the seven CAPTCHA types and the three
general GUI tasks (curated, with reasoning traces) and the weaker policy on the CAPTCHA types (its first
mistakes become self-correction samples); (2) the **base agent** is trained on general GUI data only;
(3) from its weights, three agents are fine-tuned on different mixtures: **SFT** (CAPTCHA trajectories +
general, no self-correction), **ReCAP** (CAPTCHA + self-correction + general, 1 : 0.3 : 1) and **ReCAP
without general data**; (4) the **modular pipeline** (type classifier + per-type specialists) is trained
on the same CAPTCHA trajectories (where ``config.pipeline``: medium and paper); (5) all are evaluated on
held-out challenges (test digit pool, new instances) with up to ``t_max`` attempts: success@k, first-attempt
accuracy, recovery rate.
Trained weights are cached through ``icml26_shared.cached`` (keyed by the config, the seed and the code).
"""

from __future__ import annotations

import copy
import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path

import numpy as np
from icml26_shared import (
    Claim,
    DryRun,
    Experiment,
    check_int,
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

VARIANTS = ("base", "sft", "recap", "recap_no_general", "pipeline")
# the CAPTCHA types and general tasks (= tasks.CAPTCHA_TYPES etc.; repeated so listing papers imports no torch)
CAPTCHA_KINDS = ("text", "slider", "rotation", "order_click", "grid_select", "drag_match", "arithmetic")
MULTI_STEP_KINDS = ("slider", "rotation", "order_click", "drag_match")
GENERAL_KINDS = ("click_button", "type_field", "drag_slider")
GENERAL_MARGIN = 0.05  # "within a few points" / "drops", fixed before any run


@dataclass(frozen=True)
class Config(BaseConfig):
    size: int = 64
    t_max: int = 5
    captcha_episodes: int = 80  # scripted-solver episodes per CAPTCHA type
    weak_episodes: int = 50  # weaker-policy episodes per CAPTCHA type (self-correction data)
    general_episodes: int = 300  # scripted episodes per general GUI task
    mistake_rate: float = 0.5
    mixture: tuple[float, float, float] = (1.0, 0.3, 1.0)  # CAPTCHA : self-correction : general
    base_epochs: int = 16
    finetune_epochs: int = 3
    lr: float = 3e-3
    batch_size: int = 32
    width: int = 32
    hidden: int = 128
    eval_episodes: int = 20  # per type and variant
    # float64 on CPU: float32's last-bit differences between kernel paths (AVX512 vs default, or another CPU)
    # grow through training until they move the evaluation (README, "Across machines")
    dtype: str = "float64"
    workers: int = 1  # threads running seeds in parallel in this process (one torch thread each)
    # the modular pipeline arm (type classifier + 7 specialists) and its claim, pipeline_lacks_general; without it
    # that claim is not measured (inconclusive). quick leaves it to medium (README, "Timing")
    pipeline: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("size", self.size, 64)
        if self.size % 64:
            raise fail("size", self.size, "a multiple of 64")
        check_int("t_max", self.t_max, 3)  # the ordered click needs three clicks
        for name in ("captcha_episodes", "weak_episodes", "general_episodes", "base_epochs"):
            check_int(name, getattr(self, name), 1)
        for name in ("finetune_epochs", "batch_size", "width", "hidden", "eval_episodes", "workers"):
            check_int(name, getattr(self, name), 1)
        if not 0 < self.mistake_rate <= 1:
            raise fail("mistake_rate", self.mistake_rate, "a probability in (0, 1]")
        if len(self.mixture) != 3 or self.mixture[0] <= 0 or min(self.mixture) < 0:
            raise fail("mixture", self.mixture, "(captcha > 0, self-correction >= 0, general >= 0)")
        check_positive("lr", self.lr)
        if self.dtype not in ("float32", "float64"):
            raise fail("dtype", self.dtype, "'float32' or 'float64'")
        if not isinstance(self.pipeline, bool):
            raise fail("pipeline", self.pipeline, "True or False")


CONFIGS = {
    "smoke": Config(
        seeds=(0,),
        captcha_episodes=3,
        weak_episodes=3,
        general_episodes=4,
        base_epochs=1,
        finetune_epochs=1,
        width=8,
        hidden=16,
        eval_episodes=1,
        t_max=3,
    ),
    # quick: five of the six claims; the pipeline arm (~29% of a seed's CPU time, measured under load) would take
    # the run past 120 s on 2 cores, so its claim is measured in medium only (issue 28)
    "quick": Config(seeds=(0, 1, 2), workers=3, pipeline=False),
    # The three claims that flipped between runs (0.1.0 -> 0.1.1, and AVX512 vs default kernels in issue 27) sit
    # within a few per-seed standard deviations of their thresholds. Per-seed std s and effect d (distance to the
    # threshold) from the 0.1.0/0.1.1 quick runs and seed 0 on both kernel paths: recap_minus_sft s ~ 0.05,
    # d ~ 0.03; multistep_minus_single_gain s ~ 0.05, d ~ 0.05; general_drop_with_mixing s ~ 0.04, d ~ 0.017.
    # The mean decides a one-standard-error rule without flipping on a one-sem fluctuation when d >= 2 s / sqrt(n),
    # n >= (2 s / d)^2 = 11, 4 and 22. 20 seeds fit the 20-minute budget (float64: ~110 s of CPU per seed, measured
    # under load, so ~18 min on 2 idle cores) and resolve d >= 2 x 0.04 / sqrt(20) = 0.018 for the third.
    # Everything else is quick's pipeline, with the modular pipeline arm (quick has it off since 0.1.3). (Fixed
    # before its first run.)
    "medium": Config(seeds=tuple(range(20)), workers=2),
    "paper": Config(
        seeds=(0, 1, 2, 3, 4),
        size=128,
        captcha_episodes=2000,
        weak_episodes=1000,
        general_episodes=4000,
        base_epochs=20,
        finetune_epochs=10,
        width=64,
        hidden=256,
        eval_episodes=200,
        workers=5,
    ),
}

CLAIMS = [
    Claim(
        "recap_doubles_base",
        "ReCAP training raises CAPTCHA success (solved within t_max attempts, mean over the 7 types) to at least "
        "twice the base agent's: success(ReCAP) - 2 success(base) > 0.",
        "~30% (base agents) -> ~80% (ReCAP) on held-out CAPTCHA test sets (abstract, Section 1)",
        "recap_minus_twice_base",
        ">",
        0.0,
    ),
    Claim(
        "self_correction_beats_sft",
        "Self-corrective training beats SFT on successful trajectories only: success(ReCAP) - success(SFT) > 0.",
        "self-correction data from failed trajectories improve online recovery (ablation; numbers not in our notes)",
        "recap_minus_sft",
        ">",
        0.0,
    ),
    Claim(
        "self_correction_gain_multistep",
        "The gain from self-correction is larger on multi-step types (slider, rotation, ordered click, drag match: "
        "a mistake stays on screen) than on fresh-instance types: gain(multi-step) - gain(single-step) > 0.",
        "CAPTCHA solving needs multi-step interaction and recovery from intermediate mistakes (abstract)",
        "multistep_minus_single_gain",
        ">",
        0.0,
    ),
    Claim(
        "general_kept_with_mixing",
        f"With general data mixed in, general GUI accuracy stays within {GENERAL_MARGIN:.0%} of the base agent's: "
        f"accuracy(base) - accuracy(ReCAP) < {GENERAL_MARGIN}.",
        "strong performance maintained on general GUI-agent benchmarks (abstract)",
        "general_drop_with_mixing",
        "<",
        GENERAL_MARGIN,
    ),
    Claim(
        "general_drops_without_mixing",
        f"Without general data, general GUI accuracy drops by more than {GENERAL_MARGIN:.0%}: "
        f"accuracy(base) - accuracy(ReCAP without general data) > {GENERAL_MARGIN}.",
        "the reason for mixing general GUI data (Section 3 [INF]: no ablation number in our notes)",
        "general_drop_without_mixing",
        ">",
        GENERAL_MARGIN,
    ),
    Claim(
        "pipeline_lacks_general",
        "The modular CAPTCHA pipeline solves CAPTCHAs but not general GUI tasks, where ReCAP is far better: "
        "accuracy(ReCAP) - accuracy(pipeline) on general tasks > 0.2.",
        "specialised CAPTCHA pipelines cannot handle general GUI tasks (abstract)",
        "recap_minus_pipeline_general",
        ">",
        0.2,
    ),
]


@cache
def _data(config: Config, seed: int):
    """(CAPTCHA SFT samples, self-correction samples, general samples) of one seed; built once per process."""
    from .data import collect, curate, self_correction_samples, sft_samples

    def rollouts(kinds, episodes, stream, rate=0.0):
        return [
            t for k in kinds for t in collect(k, episodes, derive(seed, stream, k), rate, config.size, config.t_max)
        ]

    args = (config.size, config.t_max)
    captcha = sft_samples(curate(rollouts(CAPTCHA_KINDS, config.captcha_episodes, "captcha")), *args)
    weak = rollouts(CAPTCHA_KINDS, config.weak_episodes, "weak", config.mistake_rate)
    corrections = self_correction_samples(weak, *args)
    general = sft_samples(curate(rollouts(GENERAL_KINDS, config.general_episodes, "general")), *args)
    return captcha, corrections, general


def weights_key(config: Config, seed: int, variant: str) -> str:
    """The cache key of ``variant``'s weights: the config, the seed and the package's source, so that a
    code change (e.g. another error category, hence another reflection head) never loads stale weights."""
    from icml26_shared.records import source_hash

    return f"recap/{variant}-{fingerprint({'config': config.as_dict(), 'seed': seed, 'code': source_hash(__name__)})}"


def _trained(config: Config, seed: int, variant: str, build):
    """The weights of ``variant`` for this seed from the cache, or ``build()`` them (a state dict)."""
    from icml26_shared import cached

    return cached(weights_key(config, seed, variant), build)


def train_variants(config: Config, seed: int) -> dict:
    """The trained policies of one seed (weights cached): base, SFT, ReCAP, ReCAP without general data and, when
    ``config.pipeline``, the modular pipeline."""

    from .baselines import ModularPipeline, TypeClassifier
    from .data import mixture
    from .method import AgentPolicy, ReCAPAgent, train

    def agent() -> ReCAPAgent:
        return ReCAPAgent(config.size, config.width, config.hidden, config.dtype, derive(seed, "init"))

    kw = {"lr": config.lr, "batch_size": config.batch_size}

    def build_base():
        model = agent()
        train(model, _data(config, seed)[2], config.base_epochs, seed=derive(seed, "base"), **kw)
        return model.state_dict()

    base = agent()
    base.load_state_dict(_trained(config, seed, "base", build_base))
    base.eval()
    policies = {"base": AgentPolicy(base)}
    ratios = {"sft": (config.mixture[0], 0.0, config.mixture[2]), "recap": config.mixture}
    ratios["recap_no_general"] = (config.mixture[0], config.mixture[1], 0.0)
    for variant, ratio in ratios.items():

        def build(ratio=ratio, variant=variant):
            model = copy.deepcopy(base)
            captcha, corrections, general = _data(config, seed)
            samples = mixture(captcha, corrections, general, ratio, np.random.default_rng(derive(seed, "mix", variant)))
            train(model, samples, config.finetune_epochs, seed=derive(seed, "finetune", variant), **kw)
            return model.state_dict()

        model = agent()
        model.load_state_dict(_trained(config, seed, variant, build))
        policies[variant] = AgentPolicy(model.eval())
    if not config.pipeline:
        return policies

    def build_pipeline():
        samples = _data(config, seed)[0]
        fitted = ModularPipeline.fit(
            samples, config.size, config.finetune_epochs * 2, seed=derive(seed, "pipeline"),
            width=config.width, hidden=config.hidden, dtype=config.dtype, **kw,
        )  # fmt: skip
        return fitted.state_dict()

    pipeline = ModularPipeline(TypeClassifier(dtype=config.dtype), {k: agent() for k in CAPTCHA_KINDS})
    policies["pipeline"] = pipeline.load_state_dict(_trained(config, seed, "pipeline", build_pipeline))
    for solver in pipeline.solvers.values():
        solver.eval()
    pipeline.classifier.eval()
    return policies


def measure_seed(config: Config, seed: int) -> dict[str, float]:
    """Every metric of one seed (a pure function of ``config`` and ``seed``)."""
    import torch

    from .evaluation import recovery_rate, run_episodes, success_at

    torch.set_num_threads(1)
    policies = train_variants(config, seed)
    screens: dict = {}  # the agents meet the same challenges: a screenshot they share is rendered once
    out: dict[str, float] = {}
    for variant, policy in policies.items():
        failed_first, recovered = 0, 0
        for kind in CAPTCHA_KINDS + GENERAL_KINDS:
            episodes = run_episodes(
                policy, kind, config.eval_episodes, derive(seed, "eval", kind), config.size, config.t_max, "test",
                screens=screens,
            )  # fmt: skip
            out[f"{variant}_{kind}_success"] = success_at(episodes, config.t_max)
            out[f"{variant}_{kind}_first_attempt"] = success_at(episodes, 1)
            for k in range(1, config.t_max + 1):
                out[f"{variant}_{kind}_success_at{k}"] = success_at(episodes, k)
            if kind in CAPTCHA_KINDS:
                first_wrong = [e for e in episodes if e.statuses[0] in ("wrong", "invalid")]
                failed_first += len(first_wrong)
                recovered += sum(e.solved for e in first_wrong)
                out[f"{variant}_{kind}_recovery"] = recovery_rate(episodes)
        out[f"{variant}_captcha_success"] = float(np.mean([out[f"{variant}_{k}_success"] for k in CAPTCHA_KINDS]))
        out[f"{variant}_general_accuracy"] = float(
            np.mean([out[f"{variant}_{k}_first_attempt"] for k in GENERAL_KINDS])
        )
        out[f"{variant}_recovery"] = recovered / failed_first if failed_first else float("nan")
    out["recap_minus_twice_base"] = out["recap_captcha_success"] - 2 * out["base_captcha_success"]
    out["recap_minus_sft"] = out["recap_captcha_success"] - out["sft_captcha_success"]
    gain = {k: out[f"recap_{k}_success"] - out[f"sft_{k}_success"] for k in CAPTCHA_KINDS}
    single = [k for k in CAPTCHA_KINDS if k not in MULTI_STEP_KINDS]
    out["multistep_minus_single_gain"] = float(
        np.mean([gain[k] for k in MULTI_STEP_KINDS]) - np.mean([gain[k] for k in single])
    )
    out["general_drop_with_mixing"] = out["base_general_accuracy"] - out["recap_general_accuracy"]
    out["general_drop_without_mixing"] = out["base_general_accuracy"] - out["recap_no_general_general_accuracy"]
    out["recap_minus_pipeline_general"] = (
        out["recap_general_accuracy"] - out["pipeline_general_accuracy"] if config.pipeline else math.nan
    )  # without the pipeline arm its claim is not measured (inconclusive)
    return out


def measure(config: Config, out_dir: Path) -> dict[str, list[float]]:
    """Per-seed metrics for the claims and the README tables. The seeds run in ``config.workers`` threads of
    this process: torch ops release the GIL, and a process per seed would pay ~5-15 s of imports each."""
    with ThreadPoolExecutor(config.workers) as pool:
        per_seed = dict(zip(config.seeds, pool.map(partial(measure_seed, config), config.seeds), strict=True))
    out = run_seeds(
        lambda _config, seed: per_seed[seed], config, config.seeds, 1, get_logger("recap"),
        show=lambda k: k.endswith(("captcha_success", "general_accuracy")) and k.count("_") <= 4,
    )  # fmt: skip
    _figure(out, config, out_dir)
    return out


def _figure(out: dict[str, list[float]], config: Config, out_dir: Path) -> None:
    """Success per CAPTCHA type and variant; success@k; general accuracy per variant."""
    fig, axes = new_figure(ncols=3, size=(4.2, 3.2))
    ax = axes.ravel()
    variants = [v for v in VARIANTS if f"{v}_captcha_success" in out]  # the pipeline only where it was trained
    width = 0.8 / len(variants)
    for j, v in enumerate(variants):
        means = [np.mean(out[f"{v}_{k}_success"]) for k in CAPTCHA_KINDS]
        ax[0].bar(np.arange(len(CAPTCHA_KINDS)) + j * width, means, width, label=v)
        curve = [
            np.mean([np.mean(out[f"{v}_{k}_success_at{s}"]) for k in CAPTCHA_KINDS]) for s in range(1, config.t_max + 1)
        ]
        ax[1].plot(range(1, config.t_max + 1), curve, marker="o", label=v)
    ax[0].set_xticks(np.arange(len(CAPTCHA_KINDS)) + 0.4 - width / 2, CAPTCHA_KINDS, rotation=35, fontsize=7)
    ax[0].set(ylabel=f"success within {config.t_max} attempts", title="CAPTCHA success per type")
    ax[0].legend(fontsize=6)
    ax[1].set(xlabel="attempts k", ylabel="success@k (mean of 7 types)", title="multi-attempt success")
    general = [np.mean(out[f"{v}_general_accuracy"]) for v in variants]
    errors = [np.std(out[f"{v}_general_accuracy"]) for v in variants]
    ax[2].bar(range(len(variants)), general, yerr=errors, color="tab:gray")
    ax[2].set_xticks(range(len(variants)), variants, rotation=30, fontsize=7)
    ax[2].set(ylabel="first-attempt accuracy", title="general GUI tasks")
    save_figure(fig, out_dir / "recap_claims.png")


SAMPLES_PER_EPISODE = {"captcha": 1.3, "corrections": 0.6, "general": 0.7}  # curated samples per episode (quick)


def _macs(agent) -> int:
    """Multiply-accumulates of one sample's forward pass through ``agent``'s convolutions and linear layers."""
    import torch
    from torch import nn

    from .data import CONTEXT_DIM
    from .method import MAX_WORDS

    total = 0

    def count(module, inputs, output):
        nonlocal total
        per_output = module.weight[0].numel()  # in_channels x kernel area, or in_features
        total += output.numel() * per_output

    layers = [m for m in agent.modules() if isinstance(m, nn.Conv2d | nn.Linear)]
    hooks = [m.register_forward_hook(count) for m in layers]
    with torch.no_grad():
        image = torch.zeros(1, 3, agent.size, agent.size, dtype=torch.uint8)
        agent.eval()(image, torch.zeros(1, MAX_WORDS, dtype=torch.long), torch.zeros(1, CONTEXT_DIM))
    for hook in hooks:
        hook.remove()
    return total


def build(config: Config) -> DryRun:
    """The dry run: the agent at the config's size; its step is one Adam step (``method.train``, one batch) on
    screenshots the sandbox renders at that size (the data are generated: nothing to download). Estimates: the
    curated samples per episode of the quick run; 3 x a forward's flops per sample and epoch of every training
    (base, three fine-tunes, the specialists); the images held twice as uint8 (samples, stacked batch tensors)."""
    from .data import collect, sft_samples
    from .method import ReCAPAgent, train

    agent = ReCAPAgent(config.size, config.width, config.hidden, config.dtype)
    parameters = sum(p.numel() for p in agent.parameters())
    n = {
        "captcha": SAMPLES_PER_EPISODE["captcha"] * config.captcha_episodes * len(CAPTCHA_KINDS),
        "corrections": SAMPLES_PER_EPISODE["corrections"] * config.weak_episodes * len(CAPTCHA_KINDS),
        "general": SAMPLES_PER_EPISODE["general"] * config.general_episodes * len(GENERAL_KINDS),
    }
    corrections = min(n["corrections"], config.mixture[1] * n["captcha"])
    finetune = 3 * n["captcha"] + 2 * n["general"] + 2 * corrections  # SFT, ReCAP, ReCAP without general data
    sample_steps = n["general"] * config.base_epochs + finetune * config.finetune_epochs
    sample_steps += n["captcha"] * 2 * config.finetune_epochs * config.pipeline  # the pipeline's specialists
    variants = len(VARIANTS) - (not config.pipeline)
    evaluation = variants * (len(CAPTCHA_KINDS) + len(GENERAL_KINDS)) * config.eval_episodes * config.t_max
    agents = 5 + 7 * config.pipeline  # base, three fine-tunes, one being trained, the specialists
    forward = 2.0 * _macs(agent)
    image_bytes = 3 * config.size**2
    bytes_per_value = 8 if config.dtype == "float64" else 4

    def step(device: str) -> None:
        samples = sft_samples(collect("slider", config.batch_size, 0, size=config.size), config.size, config.t_max)
        train(agent, samples[: config.batch_size], 1, config.lr, config.batch_size, seed=0)

    return DryRun(
        summary=f"ReCAP agent ({config.size} px screenshots, width {config.width}, hidden {config.hidden}, "
        f"{config.dtype}); ~{sum(n.values()):,.0f} generated training samples per seed; 4 agents"
        + (" + the pipeline's 7 specialists" if config.pipeline else ""),
        parameters=parameters,
        memory_bytes=2.0 * image_bytes * sum(n.values()) + agents * 4 * bytes_per_value * parameters,
        flops=len(config.seeds) * (3 * forward * sample_steps + forward * evaluation),
        step=step,
        step_memory_bytes=4 * bytes_per_value * parameters + 20 * bytes_per_value * config.batch_size * config.size**2,
        step_cpu_seconds=3 * forward * config.batch_size / 2e9 + 0.05 * config.batch_size,  # + rendering
        devices=("cpu",),  # train() and the evaluation keep their tensors on the CPU
    )


EXPERIMENT = Experiment(name="recap", configs=CONFIGS, claims=CLAIMS, measure=measure, build=build)


def run(config: Config | str = "quick", out_dir: Path | None = None):
    """Run the reproduction under ``config`` (a name or a Config); writes ``results.json`` and the figure."""
    return EXPERIMENT.run(config, out_dir)
