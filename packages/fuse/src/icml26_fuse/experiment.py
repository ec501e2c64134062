"""Miniature reproduction of FUSE's headline claims: configs, claims and the measurement.

Per seed, on real images (scikit-learn digits upsampled to 16 x 16, a seeded train/test split): make three
protected copies of the training set at the same L-infinity budget (sample-wise EM noise, the plain generator
EM, FUSE = generator + RSM + CBG), then train a fresh victim CNN on each copy, either as released or after
the attacker's preprocessing (ideal low-pass, Gaussian blur, JPEG), and measure its accuracy on clean test
images passed through the same preprocessing. A victim on unprotected images is the reference. The spectral
diagnostic is the share of each perturbation's energy below the low-pass cutoff.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from icml26_shared import (
    Claim,
    Experiment,
    check_closed_interval,
    check_int,
    check_number,
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

PROTECTIONS = ("em", "generator_em", "fuse")  # sample-wise EM, plain generator EM, FUSE
FILTERS = ("none", "low_pass", "blur", "jpeg")
R_MAX = 2**0.5  # = spectral.R_MAX, without importing torch


@dataclass(frozen=True)
class Config(BaseConfig):
    n_train: int = 1000  # the other digits (of 1797) are the test set
    eps: float = 16 / 255  # L-infinity budget [INF: 8/255 in the paper at 32 x 32; digits need more]
    victim_epochs: int = 10
    lr: float = 3e-3
    batch_size: int = 64
    em_rounds: int = 10
    em_train_steps: int = 2
    em_pgd_steps: int = 10
    fuse_rounds: int = 20
    surrogate_steps: int = 2
    generator_steps: int = 10
    band_width: tuple[float, float] = (0.2, 0.8)  # RSM band widths (normalised radius)
    cbg_weight: float = 1.0
    cbg_cutoff: float = 0.5
    low_pass_cutoff: float = 0.5  # the attacker's filter: the Nyquist frequency of the native 8 x 8 digits
    blur_sigma: float = 1.0
    jpeg_quality: int = 50
    generator_em_filters: tuple[str, ...] = ("none", "low_pass")  # the ablation's victims
    workers: int = 1  # processes running seeds in parallel (one torch thread each)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("n_train", self.n_train, 10, 1787)
        if not 0 < check_number("eps", self.eps) <= 1:
            raise fail("eps", self.eps, "an L-infinity budget in (0, 1]")
        for name in ("victim_epochs", "batch_size", "em_rounds", "em_train_steps", "em_pgd_steps"):
            check_int(name, getattr(self, name), 1)
        for name in ("fuse_rounds", "surrogate_steps", "generator_steps", "workers"):
            check_int(name, getattr(self, name), 1)
        check_positive("lr", self.lr)
        check_positive("blur_sigma", self.blur_sigma)
        check_int("jpeg_quality", self.jpeg_quality, 1, 95)
        check_closed_interval("cbg_cutoff", self.cbg_cutoff, 0.0, R_MAX)
        check_closed_interval("low_pass_cutoff", self.low_pass_cutoff, 0.0, R_MAX)
        if check_number("cbg_weight", self.cbg_weight) < 0:
            raise fail("cbg_weight", self.cbg_weight, "a weight >= 0")
        if not set(self.generator_em_filters) <= set(FILTERS):
            raise fail("generator_em_filters", self.generator_em_filters, f"names from {FILTERS}")


CONFIGS = {
    "smoke": Config(
        seeds=(0, 1),
        n_train=100,
        victim_epochs=1,
        em_rounds=1,
        em_pgd_steps=2,
        fuse_rounds=1,
        generator_steps=2,
        generator_em_filters=("none",),
    ),
    "quick": Config(  # sized to ~100 s CPU in all (3 seeds) on an idle machine
        seeds=(0, 1, 2),
        n_train=800,
        victim_epochs=8,
        em_rounds=8,
        fuse_rounds=15,
        generator_steps=8,
        workers=3,
    ),
    # The budget the README names as missing: twice quick's training everywhere (victim epochs, EM rounds, FUSE
    # rounds, generator steps; half-way to the paper config's 40 / 40 / 100), so that the shortcut has the steps to
    # form before the digits are learned, and more seeds for the inconclusive em_fails_after_low_pass: its gain is
    # 0.323 with a per-seed std of 0.092 against 0.30, so (2 x 0.092 / 0.023)^2 = 66 seeds would decide it with
    # a two-sem margin, which at twice the training does not fit (66 x 66 CPU s = 73 min CPU, 36 min on 2 cores).
    # 30 seeds put one sem at 0.092 / sqrt(30) = 0.017, below quick's 0.023 effect (the rule's one-sem margin).
    # Cost: quick is ~33 CPU s per seed idle (100 s for 3), x2 -> ~66 s; 30 seeds ~1980 CPU s, ~16.5 min on 2
    # idle cores (workers=2), < 1 GB.
    "medium": Config(
        seeds=tuple(range(30)),
        n_train=800,
        victim_epochs=16,
        em_rounds=16,
        fuse_rounds=30,
        generator_steps=16,
        workers=2,
    ),
    "paper": Config(  # more training everywhere; the paper's own scale needs CIFAR-10/ImageNet (README)
        seeds=(0, 1, 2, 3, 4),
        victim_epochs=40,
        em_rounds=40,
        em_pgd_steps=20,
        fuse_rounds=100,
        generator_em_filters=FILTERS,
        workers=5,
    ),
}

CLAIMS = [
    Claim(
        "both_protect_unfiltered",
        "Without filtering, both EM and FUSE keep the victim's clean test accuracy <= 40% (the worse of the two).",
        "Unfiltered UEs (EM, FUSE, ...) drive CIFAR-10 test accuracy of ResNet-18 to ~10-25% (Table 1)",
        "worst_unfiltered_protected_acc",
        "<=",
        0.40,
    ),
    Claim(
        "em_fails_after_low_pass",
        "After low-pass filtering, EM loses its protection: victim accuracy rises by >= 30 points.",
        "Existing UEs exhibit a critical failure once low-pass filtering is applied (abstract, Fig. 1)",
        "em_low_pass_gain",
        ">=",
        0.30,
    ),
    Claim(
        "fuse_holds_after_low_pass",
        "After low-pass filtering, FUSE's victim is >= 20 points less accurate than EM's.",
        "FUSE keeps accuracy low under low-pass, blur and JPEG filters across datasets (abstract, Tables 2-4)",
        "low_pass_em_minus_fuse",
        ">=",
        0.20,
    ),
    Claim(
        "fuse_more_low_frequency",
        "FUSE puts a larger share of its perturbation energy below the low-pass cutoff than EM.",
        "EM's unlearnability signal concentrates in high frequencies; FUSE equalises the bands (abstract)",
        "low_band_share_fuse_minus_em",
        ">",
        0.0,
    ),
]


def _attacker(name: str, config: Config):
    """The preprocessing ``name`` as a function of an image batch (identity for ``none``)."""
    from .defences import gaussian_blur, jpeg_compress, low_pass_filter

    return {
        "none": lambda x: x,
        "low_pass": lambda x: low_pass_filter(x, config.low_pass_cutoff),
        "blur": lambda x: gaussian_blur(x, config.blur_sigma),
        "jpeg": lambda x: jpeg_compress(x, config.jpeg_quality),
    }[name]


def _victim_accuracy(x_train, y_train, x_test, y_test, filter_name: str, config: Config, seed: int) -> float:
    """Train a victim on the filtered ``x_train`` and test it on the same filter of the clean test images."""
    from .networks import accuracy, train_classifier

    attack = _attacker(filter_name, config)
    victim = train_classifier(
        attack(x_train), y_train, config.victim_epochs, derive(seed, "victim"), config.lr, config.batch_size
    )
    return accuracy(victim, attack(x_test), y_test)


def _protect_all(x, y, config: Config, seed: int) -> dict:
    """The three protected copies of ``x`` (the released images, clipped to [0, 1])."""
    from .baselines import error_minimising_noise
    from .method import FuseSettings, make_unlearnable, protect, train_generator

    delta = error_minimising_noise(
        x,
        y,
        config.eps,
        derive(seed, "em"),
        pgd_steps=config.em_pgd_steps,
        train_steps=config.em_train_steps,
        max_rounds=config.em_rounds,
        batch_size=config.batch_size,
        lr=config.lr,
    )
    common = {
        "eps": config.eps,
        "rounds": config.fuse_rounds,
        "surrogate_steps": config.surrogate_steps,
        "generator_steps": config.generator_steps,
        "batch_size": config.batch_size,
        "lr": config.lr,
    }
    fuse = FuseSettings(
        band_width=config.band_width, cbg_weight=config.cbg_weight, cbg_cutoff=config.cbg_cutoff, **common
    )
    plain = FuseSettings(rsm=False, cbg_weight=0.0, **common)
    return {
        "em": protect(x, delta),
        "generator_em": make_unlearnable(train_generator(x, y, plain, derive(seed, "generator")), x)[0],
        "fuse": make_unlearnable(train_generator(x, y, fuse, derive(seed, "generator")), x)[0],
    }


def measure_seed(config: Config, seed: int) -> dict[str, float]:
    """Every protection and victim of one seed (a pure function of ``config`` and ``seed``)."""
    import torch

    from .data import split_digits
    from .spectral import low_band_energy_fraction, radial_energy_profile

    torch.set_num_threads(1)  # tiny models: one thread per seed is as fast and robust to a loaded machine
    x_train, y_train, x_test, y_test = split_digits(config.n_train, derive(seed, "split"))
    out: dict[str, float] = {}
    for filter_name in ("none", "low_pass"):
        out[f"clean_{filter_name}_acc"] = _victim_accuracy(x_train, y_train, x_test, y_test, filter_name, config, seed)
    for name, released in _protect_all(x_train, y_train, config, seed).items():
        perturbation = released - x_train  # what was actually added, after the clip to [0, 1]
        out[f"{name}_low_band_share"] = low_band_energy_fraction(perturbation, config.low_pass_cutoff)
        for k, share in enumerate(radial_energy_profile(perturbation).tolist()):
            out[f"{name}_radial_bin{k}"] = share
        filters = config.generator_em_filters if name == "generator_em" else FILTERS
        for filter_name in filters:
            out[f"{name}_{filter_name}_acc"] = _victim_accuracy(
                released, y_train, x_test, y_test, filter_name, config, seed
            )
    out["worst_unfiltered_protected_acc"] = max(out["em_none_acc"], out["fuse_none_acc"])
    out["em_low_pass_gain"] = out["em_low_pass_acc"] - out["em_none_acc"]
    out["low_pass_em_minus_fuse"] = out["em_low_pass_acc"] - out["fuse_low_pass_acc"]
    out["low_band_share_fuse_minus_em"] = out["fuse_low_band_share"] - out["em_low_band_share"]
    return out


def measure(config: Config, out_dir: Path) -> dict[str, list[float]]:
    """Per-seed metrics for the claims and the README tables; seeds run in ``config.workers`` processes."""
    log = get_logger("fuse")
    out = run_seeds(measure_seed, config, config.seeds, config.workers, log, show=lambda k: k.endswith("_acc"))
    _figure(out, config, out_dir)
    return out


def _figure(out: dict[str, list[float]], config: Config, out_dir: Path) -> None:
    """Victim accuracy per protection and filter (mean +/- std over seeds) and the radial energy profiles."""
    fig, axes = new_figure(ncols=2, size=(4.6, 3.4))
    ax_acc, ax_spec = axes.ravel()
    rows = ("clean", *PROTECTIONS)
    width = 0.8 / len(FILTERS)
    for j, filter_name in enumerate(FILTERS):
        means, stds, xs = [], [], []
        for i, row in enumerate(rows):
            values = out.get(f"{row}_{filter_name}_acc")
            if values is not None:
                means.append(np.mean(values))
                stds.append(np.std(values))
                xs.append(i + (j - (len(FILTERS) - 1) / 2) * width)
        ax_acc.bar(xs, means, width, yerr=stds, label=filter_name)
    ax_acc.set_xticks(range(len(rows)), rows, fontsize=8)
    ax_acc.set_ylabel("victim test accuracy")
    ax_acc.set_ylim(0, 1)
    ax_acc.legend(fontsize=7, title="attacker filter", title_fontsize=7)
    bins = sorted(int(k.rsplit("bin", 1)[1]) for k in out if k.startswith("em_radial_bin"))
    centres = (np.array(bins) + 0.5) * R_MAX / len(bins)
    for name in PROTECTIONS:
        ax_spec.plot(centres, [np.mean(out[f"{name}_radial_bin{k}"]) for k in bins], marker="o", label=name)
    ax_spec.axvline(config.low_pass_cutoff, color="gray", linestyle="--", label="low-pass cutoff")
    ax_spec.set_xlabel("radial frequency r (1 = Nyquist per axis)")
    ax_spec.set_ylabel("share of perturbation energy")
    ax_spec.legend(fontsize=7)
    save_figure(fig, out_dir / "fuse_accuracy_spectrum.png")


def build(config: Config) -> DryRun:
    """The dry run: the step is one FUSE round (one surrogate and one generator minibatch, RSM and CBG on) on a
    stand-in batch of 16 x 16 images, the protected copy of that batch, and one victim epoch on it (CPU).
    Estimates: the victim CNN and the generator cost ~6 x their weights x 16 positions per image and step (most
    weights sit in the stride-2 layers, on 8 x 8 and 4 x 4 maps) [INF];
    per seed: EM rounds of PGD, two generators' rounds, and a victim per protected copy and attacker filter."""
    import torch

    from .method import FuseSettings, PerturbationGenerator, make_unlearnable, train_generator
    from .networks import SmallCNN, train_classifier

    victim = sum(p.numel() for p in SmallCNN().parameters())
    generator = sum(p.numel() for p in PerturbationGenerator(config.eps).parameters())
    per_image = 6.0 * (victim + generator) * 16
    em = config.em_rounds * (config.em_train_steps + config.em_pgd_steps) * config.n_train
    fuse = 2 * config.fuse_rounds * (config.surrogate_steps + config.generator_steps) * config.batch_size
    victims = (3 * 4 + 1 + len(config.generator_em_filters)) * config.victim_epochs * config.n_train
    settings = FuseSettings(
        eps=config.eps, rounds=1, surrogate_steps=1, generator_steps=1, batch_size=config.batch_size, lr=config.lr,
        band_width=config.band_width, cbg_weight=config.cbg_weight, cbg_cutoff=config.cbg_cutoff,
    )  # fmt: skip

    def step(device: str) -> None:
        x = torch.rand(config.batch_size, 1, 16, 16)
        y = torch.arange(config.batch_size) % 10
        protected, _ = make_unlearnable(train_generator(x, y, settings, 0), x)
        train_classifier(protected.detach().numpy(), y.numpy(), 1, 0, config.lr, config.batch_size)

    return DryRun(
        summary=f"digits 16x16 ({config.n_train} train), eps {config.eps:.3g}: EM {config.em_rounds} rounds, "
        f"generator {config.fuse_rounds} rounds, victims {config.victim_epochs} epochs",
        parameters=victim + generator,
        memory_bytes=16.0 * (victim + generator) + 4.0 * 16**2 * 1797 * 8 + 4.0 * config.batch_size * 16**2 * 64,
        flops=per_image * (em + fuse + victims) * len(config.seeds),
        step=step,
        step_memory_bytes=16.0 * (victim + generator) + 4.0 * config.batch_size * 16**2 * 64,
        step_cpu_seconds=per_image * config.batch_size * 3 / 1e9,
        devices=("cpu",),  # the training loops keep their tensors on the CPU
    )


EXPERIMENT = Experiment(name="fuse", configs=CONFIGS, claims=CLAIMS, measure=measure, build=build)


def run(config: Config | str = "quick", out_dir: Path | None = None):
    """Run the reproduction under ``config`` (a name or a Config); writes ``results.json`` and the figure."""
    return EXPERIMENT.run(config, out_dir)
