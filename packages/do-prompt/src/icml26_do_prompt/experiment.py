"""Miniature reproduction of Do-Prompt's headline claims on the real all-MiniLM-L6-v2 text tower.

A small CNN image tower is pretrained (once, cached) to align with MiniLM's embeddings of captions that name the
class and the background, on environment-balanced digits. Per seed: a 16-shot training set of the five base
classes from the source domain (background texture = class texture with probability rho, faint foregrounds);
zero-shot CLIP, CoOp, MaPLe, MaPLe + bottleneck only, MaPLe + interventions only and Do-Prompt (MaPLe + both)
are trained and scored on base classes in the source and the shifted (reversed-correlation) domain, on the
novel classes (base-to-novel, harmonic mean), and by a linear probe recovering the background from their
logits on environment-balanced images.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from icml26_shared import (
    Claim,
    DryRun,
    Experiment,
    check_choice,
    check_closed_interval,
    check_int,
    check_positive,
    derive,
    fashion_mnist_missing,
    get_logger,
    new_figure,
    save_figure,
)
from icml26_shared import Config as BaseConfig

log = get_logger("do-prompt")
METHODS = ("zero_shot", "coop", "maple", "vib_only", "do_only", "do_prompt")


@dataclass(frozen=True)
class Config(BaseConfig):
    dataset: str = "digits"
    n_pretrain: int = 900  # images that pretrain the image tower (the rest is the downstream pool)
    tower_epochs: int = 10
    contrast: float = 0.4  # foreground opacity of the downstream images (pretraining: 1.0)
    rho: float = 0.9  # texture-class correlation of the source domain (issue: 90-95%)
    shots: int = 16  # K-shot per base class (CoOp / MaPLe protocol)
    n_base: int = 5  # classes 0..n_base-1 are base, the rest novel
    n_ctx: int = 4  # "a photo of a"
    depth: int = 2  # MaPLe prompt depth (both towers)
    m_env: int = 2  # environment tokens per depth [INF]
    beta: float = 1e-3  # bottleneck weight (spec default)
    lam: float = 1.0  # consistency weight (spec default)
    tau: float = 1.0
    sigma0: float = 0.05  # prior scale, about the std of MiniLM's word embeddings (0.056) [INF]
    intervention: str = "prior"
    steps: int = 40  # full-batch prompt-learning steps
    lr: float = 2e-3
    workers: int = 1  # processes that measure seeds (each on one torch thread); the numbers do not depend on it

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice("dataset", self.dataset, ("digits", "fashion"))
        check_int("n_pretrain", self.n_pretrain, 10)
        check_int("tower_epochs", self.tower_epochs, 1)
        check_closed_interval("contrast", self.contrast, 0.01, 1.0)
        check_closed_interval("rho", self.rho, 0.0, 1.0)
        check_int("shots", self.shots, 1)
        check_int("n_base", self.n_base, 2, 8)
        check_int("n_ctx", self.n_ctx, 1)
        check_int("depth", self.depth, 1, 2)
        check_int("m_env", self.m_env, 1, self.n_ctx - 1)
        for name in ("beta", "lam"):
            check_closed_interval(name, getattr(self, name), 0.0, 1e6)
        for name in ("tau", "sigma0", "lr"):
            check_positive(name, getattr(self, name))
        check_choice("intervention", self.intervention, ("prior", "resample", "noise"))
        check_int("steps", self.steps, 1)
        check_int("workers", self.workers, 1)


CONFIGS = {
    "smoke": Config(seeds=(0,), n_pretrain=1500, tower_epochs=1, shots=2, steps=2),
    "quick": Config(),
    # medium: quick with 36 seeds on 2 processes. Seeds from the 0.1.1 quick per-seed spread: a claim is decided
    # when sem = std / sqrt(n) < |mean|, i.e. n > (std / mean)^2: beats_maple_shifted (0.054 / 0.009)^2 = 36,
    # both_terms_beat_bottleneck_only (0.023 / 0.008)^2 = 8; beats_coop_shifted (100), both_terms_beat_
    # interventions_only (61) and harmonic_mean_at_least_baselines (62) would need more than 20 min on 2 cores.
    "medium": Config(seeds=tuple(range(36)), workers=2),
    "paper": Config(  # Fashion-MNIST, longer schedules, 5 seeds (the paper: 16 shots, 11 datasets, ViT-B/16) [INF]
        seeds=(0, 1, 2, 3, 4), dataset="fashion", n_pretrain=4000, tower_epochs=40, steps=200
    ),
}


def gain(a: str, b: str, metric: str = "base_shifted") -> str:
    return f"{a}_minus_{b}_{metric}"


CLAIMS = [
    Claim(
        "zero_shot_works",
        "Before prompt learning the miniature CLIP classifies the base classes zero-shot well above chance "
        "(hand prompt 'a photo of a {c}.', source domain; chance 0.2).",
        "Premise of prompt learning on CLIP (Radford et al. 2021)",
        "zero_shot_base_source",
        ">",
        0.5,
    ),
    Claim(
        "beats_coop_shifted",
        "Do-Prompt beats CoOp on shifted-domain base accuracy (metric: paired difference > 0).",
        "Abstract / base-to-novel and distribution-shift tables: gains on texture-biased data",
        gain("do_prompt", "coop"),
        ">",
        0.0,
    ),
    Claim(
        "beats_maple_shifted",
        "Do-Prompt beats its host MaPLe on shifted-domain base accuracy (metric: paired difference > 0).",
        "Abstract: 'consistent performance gains' over multi-modal prompt tuning",
        gain("do_prompt", "maple"),
        ">",
        0.0,
    ),
    Claim(
        "harmonic_mean_at_least_baselines",
        "Do-Prompt's base-to-novel harmonic mean is at least the better of CoOp's and MaPLe's "
        "(metric: HM(Do-Prompt) - max(HM(CoOp), HM(MaPLe)) >= 0).",
        "Abstract: base-to-novel generalisation",
        "do_prompt_minus_best_baseline_hm",
        ">=",
        0.0,
    ),
    Claim(
        "probe_recovers_less_nuisance",
        "A linear probe recovers the background less well from Do-Prompt's prompt-conditioned logits than "
        "from MaPLe's (metric: probe accuracy of MaPLe minus Do-Prompt > 0).",
        "Abstract: the bottleneck mitigates prompts memorising nuisance cues",
        "maple_minus_do_prompt_probe",
        ">",
        0.0,
    ),
    Claim(
        "both_terms_beat_bottleneck_only",
        "Bottleneck and interventions together beat the bottleneck alone on shifted-domain base accuracy.",
        "Abstract: 'synergistic integration' (ablation)",
        gain("do_prompt", "vib_only"),
        ">",
        0.0,
    ),
    Claim(
        "both_terms_beat_interventions_only",
        "Bottleneck and interventions together beat the interventions alone on shifted-domain base accuracy.",
        "Abstract: 'synergistic integration' (ablation)",
        gain("do_prompt", "do_only"),
        ">",
        0.0,
    ),
]


def learners(clip, config: Config) -> dict:
    """The six learners, fresh, in METHODS order."""
    from .baselines import CoOp, MaPLe, ZeroShot
    from .method import DoPrompt

    def do_prompt(**kw):
        host = MaPLe(clip, config.n_ctx, config.depth)
        common = {"tau": config.tau, "sigma0": config.sigma0, "m_env": config.m_env}
        return DoPrompt(host, intervention=config.intervention, **common, **kw)

    return {
        "zero_shot": lambda: ZeroShot(),
        "coop": lambda: CoOp(clip, config.n_ctx),
        "maple": lambda: MaPLe(clip, config.n_ctx, config.depth),
        "vib_only": lambda: do_prompt(beta=config.beta, lam=0.0),
        "do_only": lambda: do_prompt(beta=0.0, lam=config.lam, variational=False),
        "do_prompt": lambda: do_prompt(beta=config.beta, lam=config.lam),
    }


def measure_seed(clip, config: Config, seed: int) -> dict[str, float]:
    """One seed: draw the few-shot set and the test domains, train the six learners, score them."""
    import torch

    from .data import CLASS_NAMES, environments, few_shot, load_foregrounds, render
    from .training import accuracy, harmonic_mean, nuisance_probe, train_prompt

    X, y = load_foregrounds(config.dataset)
    X, y = X[config.n_pretrain :], y[config.n_pretrain :]
    names = CLASS_NAMES[config.dataset]
    base = tuple(range(config.n_base))
    novel = tuple(range(config.n_base, len(names)))
    rng = np.random.default_rng(derive(seed, "data"))
    shots = few_shot(y, base, config.shots, rng)
    rest = np.setdiff1d(np.arange(len(y)), shots)
    test_base, test_novel = rest[np.isin(y[rest], base)], rest[np.isin(y[rest], novel)]

    def tokens(idx: np.ndarray, domain: str):
        env = environments(y[idx], domain, config.rho, base, rng)
        with torch.no_grad():  # the stem is frozen and prompt-free: computed once per image
            return clip.image.tokens(render(X[idx], env, config.contrast)), env

    train_tokens, _ = tokens(shots, "source")
    source, _ = tokens(test_base, "source")
    shifted, _ = tokens(test_base, "shifted")
    novel_tokens, _ = tokens(test_novel, "source")
    balanced, balanced_env = tokens(test_base, "balanced")
    base_names, novel_names = [names[c] for c in base], [names[c] for c in novel]
    out: dict[str, float] = {}
    for k, (method, make) in enumerate(learners(clip, config).items()):
        torch.manual_seed(derive(seed, "init", k))
        learner = make()
        train_prompt(
            learner,
            clip,
            train_tokens,
            torch.as_tensor(y[shots]),
            base_names,
            config.steps,
            config.lr,
            derive(seed, "train", k),
        )
        learner.eval()
        out[f"{method}_base_source"] = accuracy(learner, clip, source, y[test_base], base_names)
        out[f"{method}_base_shifted"] = accuracy(learner, clip, shifted, y[test_base], base_names)
        out[f"{method}_novel"] = accuracy(learner, clip, novel_tokens, y[test_novel] - config.n_base, novel_names)
        out[f"{method}_hm"] = harmonic_mean(out[f"{method}_base_source"], out[f"{method}_novel"])
        out[f"{method}_probe"] = nuisance_probe(learner, clip, balanced, balanced_env, names, seed)
    for other in ("coop", "maple", "vib_only", "do_only"):
        out[gain("do_prompt", other)] = out["do_prompt_base_shifted"] - out[f"{other}_base_shifted"]
    out["do_prompt_minus_best_baseline_hm"] = out["do_prompt_hm"] - max(out["coop_hm"], out["maple_hm"])
    out["maple_minus_do_prompt_probe"] = out["maple_probe"] - out["do_prompt_probe"]
    return out


@cache
def frozen_clip(dataset: str, n_pretrain: int, epochs: int):
    """The frozen CLIP, built once per process (the image tower comes from the cache after the first build)."""
    import torch

    from .training import build_clip

    torch.set_num_threads(1)
    return build_clip(dataset, n_pretrain, epochs)


def measure_in_process(config: Config, seed: int) -> dict[str, float]:
    """One seed in this process or a spawned worker (picklable), on one torch thread."""
    return measure_seed(frozen_clip(config.dataset, config.n_pretrain, config.tower_epochs), config, seed)


def measure(config: Config, out_dir: Path) -> dict[str, list[float]]:
    """Build the frozen CLIP (image tower cached), then measure every seed in ``config.workers`` processes, each
    on one torch thread (the small matrices gain little from a second thread, and spinning threads waste a
    shared CPU)."""
    from icml26_shared import run_seeds

    frozen_clip(config.dataset, config.n_pretrain, config.tower_epochs)  # pretrained and cached before workers start
    metrics = run_seeds(
        measure_in_process,
        config,
        config.seeds,
        workers=config.workers,
        logger=log,
        show=lambda k: k.endswith("_base_shifted"),
    )
    _figure(metrics, out_dir)
    return metrics


def _figure(metrics: dict[str, list[float]], out_dir: Path) -> None:
    fig, ax = new_figure(size=(7.5, 3.2))
    parts = (("base_source", "base, source"), ("base_shifted", "base, shifted"), ("novel", "novel"))
    width = 0.27
    for j, (part, label) in enumerate(parts):
        means = [np.mean(metrics[f"{m}_{part}"]) for m in METHODS]
        sems = [
            np.std(metrics[f"{m}_{part}"], ddof=1) / np.sqrt(len(metrics[f"{m}_{part}"]))
            if len(metrics[f"{m}_{part}"]) > 1
            else 0.0
            for m in METHODS
        ]
        ax.bar(np.arange(len(METHODS)) + (j - 1) * width, means, width, yerr=sems, label=label)
    ax.set_xticks(range(len(METHODS)), METHODS, fontsize=8)
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, 1.15)
    ax.legend(fontsize=8, loc="upper center", ncols=3)
    ax.set_title("Prompt learning, texture-biased digits, MiniLM text tower (mean ± sem)", fontsize=10)
    save_figure(fig, out_dir / "accuracy.png")


def build(config: Config) -> DryRun:
    """The dry run: the frozen MiniLM text tower and a fresh image tower (float64, as the run builds them), the
    config's few-shot set (stand-in foregrounds of the real shape where Fashion-MNIST is missing) and one
    Do-Prompt training step on it (MaPLe host; clean and intervened prompt sets in one text-tower pass).

    Estimates [INF]: a forward pass costs about 2 x parameters x tokens flops (the text tower without its
    embedding table), a training step 3 times that; the run is the image tower's pretraining, then per seed
    six learners' training and their scoring on four test sets. Memory: float64 weights, Adam's two moments
    for the image tower, the stored stem tokens of every test image."""
    import torch

    from .data import CLASS_NAMES, environments, few_shot, load_foregrounds, render
    from .towers import FrozenCLIP, ImageTower, TextTower
    from .training import train_prompt

    missing = fashion_mnist_missing() if config.dataset == "fashion" else ()
    text = TextTower()
    clip = FrozenCLIP(text, ImageTower(embed_dim=text.width, dtype=text.dtype))
    names = CLASS_NAMES[config.dataset]
    base = tuple(range(config.n_base))
    rng = np.random.default_rng(0)
    if missing:
        n_pool = 6000 - config.n_pretrain  # the run's pool: the first 6000 training images minus pretraining
        y = np.repeat(np.arange(len(names)), config.shots)
        X = rng.random((len(y), clip.image.size, clip.image.size)).astype(np.float32)
    else:
        X, y = load_foregrounds(config.dataset)
        X, y = X[config.n_pretrain :], y[config.n_pretrain :]
        n_pool = len(y)
    shots = few_shot(y, base, config.shots, rng)
    images = render(X[shots], environments(y[shots], "source", config.rho, base, rng), config.contrast)
    learner = learners(clip, config)["do_prompt"]()

    def step(device: str) -> None:
        with torch.no_grad():
            tokens = clip.image.tokens(images)
        labels = torch.as_tensor(y[shots])
        train_prompt(learner, clip, tokens, labels, [names[c] for c in base], 1, config.lr, 0)

    image_params = sum(p.numel() for p in clip.image.parameters())
    prompt_params = sum(p.numel() for p in learner.parameters() if p.requires_grad)
    text_params = sum(p.numel() for p in text.bert.encoder.parameters())
    image_tokens = (clip.image.size // 4) ** 2 + 1 + config.n_ctx
    text_pass = 2 * text_params * (config.n_ctx + 6)  # one prompt: [CLS] ctx <name> . [SEP]
    image_pass = 2 * image_params * image_tokens
    shots_pass = 2 * config.n_base * text_pass + len(shots) * image_pass  # clean + intervened prompt sets
    per_seed = len(METHODS) * (3 * config.steps * shots_pass + 4 * n_pool * image_pass)
    pretraining = 3 * config.tower_epochs * config.n_pretrain * image_pass + 100 * text_pass
    return DryRun(
        summary=f"all-MiniLM-L6-v2 text tower + {clip.image.layers}-layer image tower (float64) on "
        f"{config.dataset}: tower pretrained {config.tower_epochs} epochs on {config.n_pretrain} images; "
        f"{config.shots}-shot x {config.n_base} base classes, {config.steps} prompt steps, {len(config.seeds)} seeds; "
        f"image tower {image_params:,} + Do-Prompt {prompt_params:,} trained parameters",
        parameters=image_params + prompt_params,
        memory_bytes=8.0 * (sum(p.numel() for p in text.parameters()) + 4 * image_params)
        + 8.0 * 5 * n_pool * image_tokens * clip.image.width,
        flops=float(pretraining + len(config.seeds) * per_seed),
        step=step,
        step_memory_bytes=8.0 * 2 * sum(p.numel() for p in text.parameters()),
        step_cpu_seconds=3 * shots_pass / 1e9,  # ~1 GFLOP/s on one core in float64
        missing=missing,
        devices=("cpu",),  # the pipeline keeps every tensor on the CPU
    )


EXPERIMENT = Experiment(name="do-prompt", configs=CONFIGS, claims=CLAIMS, measure=measure, build=build)
