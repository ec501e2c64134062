"""Miniature reproduction of ATR's headline claims: configs, claims and the measurement.

One tiny VLM is pre-trained on a balanced, label-free task (image rotation, on Fashion-MNIST images that the
long-tailed set never uses) and cached. Per seed: draw a long-tailed Fashion-MNIST training set (imbalance
ratio 100, CIFAR-10-LT profile), fine-tune a copy of the backbone with each method on the same batches, and
score the balanced test set overall and per many/medium/few-shot bin, along fine-tuning too.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from icml26_shared import (
    DEVICES,
    Claim,
    Experiment,
    cached,
    check_choice,
    check_int,
    check_number,
    check_positive,
    derive,
    fail,
    fingerprint,
    get_logger,
    new_figure,
    resolve_device,
    run_units,
    save_figure,
)
from icml26_shared import Config as BaseConfig
from icml26_shared.records import DryRun, fashion_mnist_missing

from .data import DATASETS, SHOTS
from .settings import METHODS, ATRSettings

CURVE_METHODS = ("ce", "atr")  # evaluated along fine-tuning: the early-stage claims and the figure
DTYPES = ("float32", "float64")


@dataclass(frozen=True)
class Config(BaseConfig):
    dataset: str = "fashion"
    n_max: int = 300  # head-class samples
    imbalance_ratio: float = 100.0  # n_max / n_min, as CIFAR-10-LT
    test_per_class: int = 50
    many_shot: int = 100  # bins: many > 100 samples, few < 20 (ImageNet-LT)
    few_shot: int = 20
    patch_size: int = 7
    d_model: int = 64
    heads: int = 4
    vision_layers: int = 1
    lm_layers: int = 2
    n_pretrain: int = 4000  # label-free images for the balanced pre-training task
    pretrain_steps: int = 400
    pretrain_batch: int = 64
    pretrain_lr: float = 2e-3
    pretrain_seed: int = 0  # one public backbone for every seed, as one LVLM checkpoint in practice
    # medium: each seed pre-trains its own backbone (pretrain_seed = seed), so that the spread over seeds also
    # holds the backbone's draw, which moves the claims' metrics more than the fine-tuning seed (README)
    backbone_per_seed: bool = False
    epochs: int = 12
    batch_size: int = 64
    lr: float = 3e-3  # post-hoc: 1e-3 in the first quick run (README)
    eval_every: int = 3
    focal_gamma: float = 2.0
    la_tau: float = 1.0
    atr: ATRSettings = field(default_factory=ATRSettings)
    device: str = "cpu"  # "cuda", or "auto" = cuda when available
    # float64 on CPU: a float32 run's last-bit differences between CPUs and kernel paths grow through training
    # until they move test predictions (README, "Across machines"); float32 at paper scale on a GPU
    dtype: str = "float64"
    workers: int = 1  # processes running seeds in parallel (one torch thread each)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice("dataset", self.dataset, DATASETS)
        check_choice("device", self.device, DEVICES)
        check_choice("dtype", self.dtype, DTYPES)
        if check_number("imbalance_ratio", self.imbalance_ratio) < 1:
            raise fail("imbalance_ratio", self.imbalance_ratio, "a ratio n_max / n_min >= 1")
        for name in ("n_max", "test_per_class", "few_shot", "patch_size", "d_model", "heads", "vision_layers"):
            check_int(name, getattr(self, name), 1)
        for name in ("lm_layers", "n_pretrain", "pretrain_steps", "pretrain_batch", "epochs", "batch_size"):
            check_int(name, getattr(self, name), 1)
        check_int("many_shot", self.many_shot, self.few_shot)
        check_int("eval_every", self.eval_every, 1, self.epochs)
        check_int("pretrain_seed", self.pretrain_seed, 0)
        check_int("workers", self.workers, 1)
        if not isinstance(self.backbone_per_seed, bool):
            raise fail("backbone_per_seed", self.backbone_per_seed, "True or False")
        for name in ("pretrain_lr", "lr", "la_tau"):
            check_positive(name, getattr(self, name))
        if check_number("focal_gamma", self.focal_gamma) < 0:
            raise fail("focal_gamma", self.focal_gamma, "a number >= 0")
        if not isinstance(self.atr, ATRSettings):
            raise fail("atr", self.atr, "an ATRSettings")

    @property
    def image_size(self) -> int:
        return 28 if self.dataset == "fashion" else 8

    @property
    def early_epoch(self) -> int:
        """The first evaluated epoch at or after a quarter of fine-tuning (the 'early stage')."""
        quarter = self.epochs / 4
        return min(e for e in range(self.eval_every, self.epochs + 1, self.eval_every) if e >= quarter)


CONFIGS = {
    "smoke": Config(
        seeds=(0, 1),
        dataset="digits",
        n_max=40,
        imbalance_ratio=10.0,
        test_per_class=10,
        many_shot=20,
        few_shot=8,
        patch_size=2,
        d_model=16,
        heads=2,
        lm_layers=1,
        n_pretrain=200,
        pretrain_steps=10,
        pretrain_batch=32,
        epochs=2,
        batch_size=32,
        eval_every=1,
    ),
    "quick": Config(seeds=(0, 1, 2), workers=2),
    # 24 seeds resolve a paired few-shot gain of 0.03 (6 of 200 test images) at two standard errors for a
    # per-seed std of 0.075 (few(ATR) - few(CE) of seed 0 over five backbones, README "Across machines")
    "medium": Config(seeds=tuple(range(24)), workers=2, backbone_per_seed=True),
    "paper": Config(
        seeds=(0, 1, 2, 3, 4),
        n_max=4800,  # the rarest class has 4800+ images among Fashion-MNIST's first 50000
        test_per_class=1000,
        d_model=256,
        heads=8,
        vision_layers=4,
        lm_layers=6,
        n_pretrain=10000,
        pretrain_steps=20000,
        pretrain_batch=256,
        pretrain_lr=5e-4,
        epochs=60,
        batch_size=128,
        lr=2e-4,
        eval_every=5,
        device="auto",
        dtype="float32",
        workers=1,
    ),
}

CLAIMS = [
    Claim(
        "atr_raises_few_shot",
        "ATR raises few-shot (tail) test accuracy over plain cross-entropy fine-tuning: few(ATR) - few(CE) > 0, "
        "paired per seed.",
        "ATR 'consistently enhances performance' under long-tailed LVLM fine-tuning, where tail data gain least "
        "(abstract; no table in our notes)",
        "atr_minus_ce_few",
        ">",
        0.0,
    ),
    Claim(
        "atr_keeps_balanced",
        "ATR keeps the balanced (all-class) test accuracy at least at CE's, within half a point: "
        "acc(ATR) - acc(CE) >= -0.005, paired per seed.",
        "ATR improves performance overall (abstract); the spec asks balanced(ATR) >= balanced(CE) - 0.5 pt",
        "atr_minus_ce_acc",
        ">=",
        -0.005,
    ),
    Claim(
        "ce_learns_head_first",
        "Under CE fine-tuning the head is fit early: at a quarter of fine-tuning, many-shot accuracy has reached a "
        "larger share of its final value than few-shot accuracy: share(many) - share(few) > 0.",
        "'LVLMs tend to rapidly overfit the head data at an early fine-tuning stage' (abstract)",
        "ce_early_share_many_minus_few",
        ">",
        0.0,
    ),
    Claim(
        "atr_narrows_early_gap",
        "ATR mitigates early head overfitting: its head-tail gap (many - few accuracy) at a quarter of "
        "fine-tuning is smaller than CE's: gap(ATR) - gap(CE) < 0, paired per seed.",
        "the bounded adaptive loss 'mitigates overfitting on head data' (abstract)",
        "atr_minus_ce_early_gap",
        "<",
        0.0,
    ),
    Claim(
        "both_beat_loss_only",
        "The visual token mask adds to the bounded adaptive loss: few(ATR) - few(ATR loss only) > 0.",
        "ATR consists of two token-level operations (abstract; ablation not in our notes)",
        "atr_minus_bal_few",
        ">",
        0.0,
    ),
    Claim(
        "both_beat_mask_only",
        "The bounded adaptive loss adds to the visual token mask: few(ATR) - few(ATR mask only) > 0.",
        "ATR consists of two token-level operations (abstract; ablation not in our notes)",
        "atr_minus_vtm_few",
        ">",
        0.0,
    ),
]


def make_model(config: Config, vocab_size: int, seed: int = 0):
    """The config's TinyVLM, its parameters drawn by numpy's generator seeded ``seed``, kept in ``config.dtype``."""
    import torch

    from .model import TinyVLM

    return TinyVLM(
        vocab_size,
        image_size=config.image_size,
        patch_size=config.patch_size,
        d_model=config.d_model,
        heads=config.heads,
        vision_layers=config.vision_layers,
        lm_layers=config.lm_layers,
        dtype=getattr(torch, config.dtype),
        seed=seed,
    )


def pretrained_backbone(config: Config) -> dict:
    """The pre-trained VLM's state dict (rotation task), trained once per key through the safetensors cache."""
    import torch

    from .data import default_vocabulary, pretraining_images
    from .training import pretrain

    vocab = default_vocabulary()
    key = {
        "dataset": config.dataset,
        "model": [config.patch_size, config.d_model, config.heads, config.vision_layers, config.lm_layers],
        "pretrain": [config.n_pretrain, config.pretrain_steps, config.pretrain_batch, config.pretrain_lr],
        "seed": config.pretrain_seed,
        "vocab": vocab.words,
        "dtype": config.dtype,
        # 2: position embeddings N(0, 1); 3: dtype, trained on one torch thread; 4: numpy-drawn, portable ops
        "version": 4,
    }

    def build() -> dict:
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # as the seeds' workers: a fixed thread count, whatever the machine has
        try:
            model = make_model(config, len(vocab), derive(config.pretrain_seed, "init"))
            model = model.to(resolve_device(config.device))
            images = pretraining_images(config.dataset, config.n_pretrain, config.pretrain_seed)
            pretrain(
                model, images, vocab, config.pretrain_steps, config.pretrain_batch, config.pretrain_lr,
                config.pretrain_seed,
            )  # fmt: skip
        finally:
            torch.set_num_threads(threads)
        return model.state_dict()

    return cached(f"atr/backbone-{fingerprint(key)}", build)


def _backbone_config(config: Config, seed: int) -> Config:
    """The config of the backbone the seed fine-tunes: its own with ``backbone_per_seed``, else the shared one."""
    return replace(config, pretrain_seed=seed) if config.backbone_per_seed else config


def measure_arm(config: Config, seed: int, method: str) -> dict[str, float | list[float]]:
    """Fine-tune the cached backbone with ``method`` on the seed's long-tailed split: its final test accuracies and,
    for ``CURVE_METHODS``, the accuracies along fine-tuning and at the early stage. Arms share nothing but the
    backbone, so each is one unit of work for the workers."""
    import torch

    from .data import default_vocabulary, long_tailed_task, pretraining_token_ids, shot_bins
    from .training import fine_tune

    torch.set_num_threads(1)
    device = resolve_device(config.device)
    vocab = default_vocabulary()
    task = long_tailed_task(config.dataset, config.n_max, config.imbalance_ratio, config.test_per_class, seed)
    bins = shot_bins(task.counts, config.many_shot, config.few_shot)
    state = pretrained_backbone(_backbone_config(config, seed))
    used, answer_words = pretraining_token_ids(vocab)
    model = make_model(config, len(vocab))  # its draw is replaced by the backbone
    model.load_state_dict(state)
    model.init_new_tokens([i for i in range(len(vocab)) if i not in used], answer_words)
    curve = method in CURVE_METHODS  # the others are evaluated at the end only (the same trained model)
    history = fine_tune(
        model.to(device), task, vocab, method, config.atr, config.epochs, config.batch_size, config.lr, seed,
        bins, config.eval_every if curve else 0, config.focal_gamma, config.la_tau,
    )  # fmt: skip
    final = history[-1]
    out: dict[str, float | list[float]] = {f"{method}_{name}": final[name] for name in ("acc", *SHOTS)}
    if curve:
        early = next(h for h in history if h["epoch"] == config.early_epoch)
        for name in ("acc", *SHOTS):
            out[f"{method}_curve_{name}"] = [h[name] for h in history]
        out[f"{method}_early_gap"] = early["many"] - early["few"]
        out[f"{method}_early_share_many_minus_few"] = _share(early["many"], final["many"]) - _share(
            early["few"], final["few"]
        )
    return out


def measure_seed(config: Config, seed: int) -> dict[str, float | list[float]]:
    """Every arm on the seed's long-tailed split, in this process; all test accuracies and the paired differences."""
    return _paired({method: measure_arm(config, seed, method) for method in METHODS})


def _paired(arms: dict[str, dict]) -> dict[str, float | list[float]]:
    """One seed's metrics from its arms (in ``METHODS`` order) and the claims' paired differences."""
    out = {name: value for method in METHODS for name, value in arms[method].items()}
    out["atr_minus_ce_few"] = out["atr_few"] - out["ce_few"]
    out["atr_minus_ce_acc"] = out["atr_acc"] - out["ce_acc"]
    out["atr_minus_ce_early_gap"] = out["atr_early_gap"] - out["ce_early_gap"]
    out["atr_minus_bal_few"] = out["atr_few"] - out["atr_bal_few"]
    out["atr_minus_vtm_few"] = out["atr_few"] - out["atr_vtm_few"]
    return out


def _share(early: float, final: float) -> float:
    """early / final accuracy; nan when the final accuracy is 0 (no share defined)."""
    return early / final if final > 0 else float("nan")


# ATR and its mask-only part run the language model twice per step (full and masked view)
TWO_VIEW_METHODS = ("atr_vtm", "atr")
# the arms, longest first (two views, then the curve's evaluations): the order the units go to the workers, so that
# the last ones to start are short and no worker idles long at the end
LONGEST_FIRST = tuple(sorted(METHODS, key=lambda m: (m not in TWO_VIEW_METHODS, m not in CURVE_METHODS)))


def _pretrain(config: Config, seed: int) -> None:
    """Build the seed's backbone into the cache (a worker's task: the state stays on disk)."""
    pretrained_backbone(_backbone_config(config, seed))


def _measure_forked(config: Config) -> list[dict[str, float | list[float]]]:
    """``measure_seed`` for every seed, split into (seed, arm) units on ``workers`` forked processes
    (``icml26_shared.run_units``).

    One seed per spawned process (0.1.3) left a core idle while the last seed ran and re-imported torch in every
    process (issue 28). Here the backbones are pre-trained first (the shared one before forking, one per seed on
    the workers), then the units run longest arms first. Each unit is ``measure_arm`` on one thread, as
    ``measure_seed`` runs it, so the numbers do not depend on ``workers``."""
    if config.backbone_per_seed:
        run_units(_pretrain, config, [(seed,) for seed in config.seeds], config.workers)
    else:
        _pretrain(config, config.seeds[0])  # the workers read it from the cache
    units = [(seed, method) for method in LONGEST_FIRST for seed in config.seeds]
    done = dict(zip(units, run_units(measure_arm, config, units, config.workers), strict=True))
    return [_paired({method: done[seed, method] for method in METHODS}) for seed in config.seeds]


def measure(config: Config, out_dir: Path) -> dict[str, list[float]]:
    """Per-seed metrics for the claims and the README tables (``workers`` > 1: ``_measure_forked``)."""
    log = get_logger("atr")
    if config.workers == 1:
        per_seed = [measure_seed(config, seed) for seed in config.seeds]
    else:
        per_seed = _measure_forked(config)
    for seed, values in zip(config.seeds, per_seed, strict=True):
        shown = {k: round(v, 4) for k, v in values.items() if "_curve_" not in k and k.endswith(("_acc", "_few"))}
        log.info("seed %d: %s", seed, shown)
    out = {name: [values[name] for values in per_seed] for name in per_seed[0]}
    _figure(out, config, out_dir)
    return {name: values for name, values in out.items() if "_curve_" not in name}


def _figure(out: dict[str, list], config: Config, out_dir: Path) -> None:
    """Test accuracy per shot bin along fine-tuning (CE, ATR) and the final accuracies of every method."""
    epochs = [0, *range(config.eval_every, config.epochs + 1, config.eval_every)]
    if epochs[-1] != config.epochs:
        epochs.append(config.epochs)
    fig, axes = new_figure(ncols=3, size=(3.8, 3.0))
    axes = axes.ravel()
    colors = {"many": "tab:blue", "medium": "tab:green", "few": "tab:red"}
    for ax, method, title in ((axes[0], "ce", "CE"), (axes[1], "atr", "ATR")):
        for shot in SHOTS:
            curve = np.mean(out[f"{method}_curve_{shot}"], axis=0)
            ax.plot(epochs, curve, marker=".", color=colors[shot], label=f"{shot}-shot")
        ax.axvline(config.early_epoch, color="k", ls=":", lw=0.8)
        ax.set(xlabel="fine-tuning epoch", ylabel="balanced test accuracy", title=f"{title}, per shot bin", ylim=(0, 1))
        ax.legend(fontsize=7)
    width = 0.27
    x = np.arange(len(METHODS))
    for i, shot in enumerate(SHOTS):
        values = np.array([out[f"{m}_{shot}"] for m in METHODS])
        axes[2].bar(x + (i - 1) * width, values.mean(1), width, yerr=values.std(1), color=colors[shot], label=shot)
    axes[2].set_xticks(x, METHODS, rotation=30, fontsize=7)
    axes[2].set(ylabel="test accuracy (final)", title="every method", ylim=(0, 1))
    axes[2].legend(fontsize=7)
    save_figure(fig, out_dir / "atr_long_tail.png")


# the dry run's step: ATR on one batch of DRY_RUN_BATCH images, tested on DRY_RUN_TEST_PER_CLASS images per class
# (the paper's batch of 128 and 100 test images took ~6.5 CPU s and ~1 GB after warm-up, measured under load)
DRY_RUN_BATCH, DRY_RUN_TEST_PER_CLASS = 16, 5


def build(config: Config) -> DryRun:
    """The dry run: the config's TinyVLM; the step is ``fine_tune`` with ATR for one epoch over one batch of
    ``DRY_RUN_BATCH`` images of the seed-0 long-tailed split, i.e. one AdamW step, then its evaluation on a
    balanced set of ``DRY_RUN_TEST_PER_CLASS`` test images per class (small by design, to stay a few seconds on
    CPU). Stand-in images of the real shape when Fashion-MNIST is missing.

    Estimates: a forward pass costs 2 P flops per token, training 3 passes. A training sequence is the visual
    tokens, the question, <bos> and the answer; pre-training trains all P parameters; fine-tuning trains the
    language model and projector (P_lm) on N long-tailed images for ``epochs`` with each of the 6 methods (ATR
    and its mask-only part run the language model twice, full and masked view: 8 passes in all); the frozen
    encoder runs once per image and method. An evaluation scores all C answers in one packed sequence per test
    image (visual, question, <bos>, C x A answer tokens), at every ``eval_every`` epoch for CE and ATR and at
    the end for the other 4 methods."""
    from .data import (
        ANSWERS,
        QUESTION,
        LongTailedTask,
        default_vocabulary,
        long_tailed_counts,
        long_tailed_task,
        shot_bins,
    )
    from .settings import METHODS
    from .training import VISION_PARAMETERS, fine_tune

    vocab = default_vocabulary()
    model = make_model(config, len(vocab))
    parameters = sum(p.numel() for p in model.parameters())
    p_lm = sum(p.numel() for n, p in model.named_parameters() if not n.startswith(VISION_PARAMETERS))
    answers = ANSWERS[config.dataset]
    longest = max(len(a) for a in answers)
    tokens = model.num_visual + len(QUESTION) + 1 + longest  # one training sequence
    scored = model.num_visual + len(QUESTION) + 1 + len(answers) * longest  # one test image's packed candidates
    counts = long_tailed_counts(config.n_max, config.imbalance_ratio, len(answers))
    n_train, n_test = int(counts.sum()), len(answers) * config.test_per_class
    pretraining = 6.0 * parameters * tokens * config.pretrain_batch * config.pretrain_steps
    fine_tuning = 6.0 * p_lm * tokens * n_train * config.epochs * (len(METHODS) + 2)
    encoder = 2.0 * (parameters - p_lm) * model.num_visual * (n_train + n_test) * len(METHODS)
    evaluations = 2 * (config.epochs // config.eval_every + 1) + len(METHODS) - 2
    scoring = 2.0 * p_lm * scored * n_test * evaluations
    width = 4.0 if config.dtype == "float32" else 8.0
    # activations kept for backward per image: ~12 (tokens, d) tensors and a (heads, tokens, tokens) attention map
    # per layer; the language model's layers twice (ATR's two views)
    layers = config.vision_layers + 2 * config.lm_layers
    per_image = width * layers * (12 * tokens * config.d_model + config.heads * tokens**2)
    data = 4.0 * 70000 * model.image_size**2 + width * (n_train + n_test) * model.num_visual * config.d_model
    state = 4 * width * parameters  # weights, gradients, two AdamW moments
    missing = fashion_mnist_missing() if config.dataset == "fashion" else ()
    batch, n_step_test = min(DRY_RUN_BATCH, config.batch_size), len(answers) * DRY_RUN_TEST_PER_CLASS

    def step(device: str) -> None:
        if missing:  # stand-in images and labels of the real shapes
            rng = np.random.default_rng(0)
            shape = (1, model.image_size, model.image_size)
            train_labels, test_labels = (
                rng.integers(0, len(answers), batch),
                np.arange(len(answers)).repeat(DRY_RUN_TEST_PER_CLASS),
            )
            task = LongTailedTask(
                rng.random((batch, *shape), dtype=np.float32), train_labels,
                rng.random((test_labels.size, *shape), dtype=np.float32), test_labels, counts, answers,
            )  # fmt: skip
        else:
            task = long_tailed_task(config.dataset, config.n_max, config.imbalance_ratio, DRY_RUN_TEST_PER_CLASS, 0)
            picked = np.random.default_rng(0).choice(len(task.train_labels), batch, replace=False)
            task = replace(task, train_images=task.train_images[picked], train_labels=task.train_labels[picked])
        bins = shot_bins(task.counts, config.many_shot, config.few_shot)
        fine_tune(
            model.to(device), task, vocab, "atr", config.atr, 1, batch, config.lr, 0, bins,
            0, config.focal_gamma, config.la_tau,
        )  # fmt: skip

    return DryRun(
        summary=f"TinyVLM ({config.image_size}x{config.image_size} {config.dataset}, patch {config.patch_size}, "
        f"d {config.d_model}, {config.vision_layers}+{config.lm_layers} layers, {config.dtype}); "
        f"{config.pretrain_steps} pre-training steps of batch {config.pretrain_batch}; {len(METHODS)} methods x "
        f"{config.epochs} epochs on {n_train} long-tailed images, {n_test} test images, {len(config.seeds)} seeds; "
        f"the step fine-tunes ATR on one batch of {batch} and tests {n_step_test}",
        parameters=parameters,
        memory_bytes=state + data + per_image * max(config.batch_size, config.pretrain_batch),
        flops=pretraining + (fine_tuning + encoder + scoring) * len(config.seeds),
        step=step,
        step_memory_bytes=state + data + per_image * batch,
        # one training step and one evaluation, at ~10 GFLOP/s on a loaded 2-core CPU (~4 CPU s measured under load
        # for the same step with 10 test images per class)
        step_cpu_seconds=(6.0 * p_lm * tokens * 2 * batch + 2.0 * p_lm * scored * n_step_test) / 1e10,
        missing=missing,
    )


EXPERIMENT = Experiment(name="atr", configs=CONFIGS, claims=CLAIMS, measure=measure, build=build)


def run(config: Config | str = "quick", out_dir: Path | None = None):
    """Run the reproduction under ``config`` (a name or a Config); writes ``results.json`` and the figure."""
    return EXPERIMENT.run(config, out_dir)
