"""Miniature reproduction of FreMIA's headline claims: configs, claims and the measurement.

Per seed: a seeded member / hold-out split of Fashion-MNIST images (16 x 16), a DDPM trained on the
members only (so that it memorises them), then the three attacks (naive, SecMI, PIA) at t = 100, each
scored on the *same* (target, prediction) pairs without and with the high-frequency filter: the AUC and
TPR@1%FPR differences are paired per seed. The diagnostic correlates every image's high-frequency energy
with its score (Spearman), before and after filtering.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from icml26_shared import (
    Claim,
    Experiment,
    check_choice,
    check_closed_interval,
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
from icml26_shared.records import DryRun, fashion_mnist_missing

ATTACK_NAMES = ("naive", "secmi", "pia")  # = baselines.ATTACKS, without importing torch
DENOISERS = ("mlp", "unet")
METRICS = ("auc", "tpr_at_1fpr", "asr", "advantage")
# images per call of an attack: the paper's 30000 members in one UNet call need tens of GB of activations
ATTACK_BATCH = 1000


@dataclass(frozen=True)
class Config(BaseConfig):
    n_pool: int = 4000  # Fashion-MNIST training images the split draws from
    image_size: int = 16
    n_members: int = 128
    n_holdout: int = 128
    denoiser: str = "mlp"
    width: int = 512  # hidden units (mlp); the first block's channels (unet)
    train_steps: int = 3000
    batch_size: int = 64
    lr: float = 1e-3
    t: int = 100  # attack step (official --interval)
    tau: int = 2  # kept square -tau..tau: 5/16 of the spectrum per axis, as the official tau = 5 at 32 x 32
    s: float = 0.2  # official --s
    tau_sweep: tuple[int, ...] = (1, 2, 3, 5)  # ablation only (figure), never the claims
    workers: int = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice("denoiser", self.denoiser, DENOISERS)
        for name in ("image_size", "n_members", "n_holdout", "width", "train_steps", "batch_size", "workers"):
            check_int(name, getattr(self, name), 1)
        check_int("n_pool", self.n_pool, self.n_members + self.n_holdout, 60000)
        check_int("t", self.t, 1, 999)
        check_int("tau", self.tau, 0, (self.image_size - 1) // 2)
        for tau in self.tau_sweep:
            check_int("tau_sweep", tau, 0, (self.image_size - 1) // 2)
        check_closed_interval("s", self.s, 0.0, 1.0)
        check_positive("lr", self.lr)
        if self.n_members < 2 or self.n_holdout < 2:
            raise fail("n_members, n_holdout", (self.n_members, self.n_holdout), "at least 2 images each")


CONFIGS = {
    "smoke": Config(seeds=(0, 1), n_pool=200, n_members=32, n_holdout=32, width=8, train_steps=30, tau_sweep=(1, 2)),
    "quick": Config(seeds=(0, 1, 2), workers=2),
    # The README names two missing budgets. (1) A convolutional denoiser: the quick MLP memorises its members pixel
    # by pixel, so the membership signal sits in the high band the filter attenuates. That does not fit: the
    # smallest UNet the package builds (32/64/64/64 channels; 16 channels break diffusers' 32 norm groups) took
    # 0.75 CPU s per batch-64 step (measured under load ~23), so even 4000 steps for 3 seeds are ~9000 CPU s, and
    # a residual CNN trained 1500 steps did not memorise. (2) TPR@1%FPR at its resolution limit (1/128): medium
    # attacks 512 members and 512 hold-outs (resolution 1/512, 5 false positives allowed at 1% FPR) with the MLP
    # trained 12000 steps, so that each member is visited as often as in quick (3000 x 64 / 128 = 12000 x 64 / 512
    # = 1500 times); data, attack step, filter and 3 seeds as quick (every failing gain is negative: decided).
    # Cost: quick took 148 CPU s for 3 seeds (~50 s per seed, mostly training); 4x steps and 4x attacked images
    # give ~200 s per seed, ~600 CPU s, ~5 min wall on 2 idle cores (workers=2), < 1 GB.
    "medium": Config(seeds=(0, 1, 2), n_members=512, n_holdout=512, train_steps=12000, workers=2),
    "paper": Config(  # the official DDIM setting: 32 x 32, a DDPM UNet, half the data as members
        seeds=(0, 1, 2),
        n_pool=60000,
        image_size=32,
        n_members=30000,
        n_holdout=30000,
        denoiser="unet",
        width=128,
        train_steps=800000,
        batch_size=128,
        lr=2e-4,
        tau=5,
        tau_sweep=(2, 3, 5, 8),
        workers=1,
    ),
}


def _gain_claims() -> list[Claim]:
    paper = {
        "naive": "TINY-IN DDPM: naive AUC, TPR@1%FPR up with the filter (Table 1; gains of 4-11 points)",
        "secmi": "TINY-IN/CIFAR100/STL10 DDPM: SecMI + filter beats SecMI on AUC and TPR@1%FPR (Table 1)",
        "pia": "TINY-IN/CIFAR100/STL10 DDPM: PIA + filter beats PIA on AUC and TPR@1%FPR (Table 1)",
    }
    claims = []
    for attack in ATTACK_NAMES:
        for metric, label in (("auc", "AUC"), ("tpr_at_1fpr", "TPR@1%FPR")):
            claims.append(
                Claim(
                    f"filter_raises_{metric}_{attack}",
                    f"The high-frequency filter raises {attack}'s {label} (paired filtered - unfiltered, same pairs).",
                    paper[attack],
                    f"{attack}_{metric}_gain",
                    ">",
                    0.0,
                )
            )
    return claims


CLAIMS = [
    *_gain_claims(),
    Claim(
        "hf_energy_predicts_score",
        "An image's high-frequency energy correlates strongly with its unfiltered score (Spearman, mean of attacks).",
        "Member/hold-out images with more high-frequency content get higher scores (Fig. 2, Sec. 4)",
        "hf_rho_unfiltered",
        ">=",
        0.5,
    ),
    Claim(
        "filter_weakens_hf_correlation",
        "Filtering weakens that correlation (Spearman unfiltered - filtered, mean of attacks).",
        "The filter removes the high-frequency nuisance from the score (Sec. 5, Theorem on the advantage)",
        "hf_rho_drop",
        ">",
        0.0,
    ),
]


def _denoiser(config: Config):
    from .denoiser import MLPDenoiser, UNetDenoiser

    if config.denoiser == "mlp":
        return MLPDenoiser(config.image_size, hidden=config.width)
    widths = (config.width, 2 * config.width, 2 * config.width, 2 * config.width)
    return UNetDenoiser(config.image_size, channels=1, block_out_channels=widths)


def trained_denoiser(config: Config, seed: int, members):
    """The seed's DDPM trained on ``members`` only, cached as safetensors (a second run does not retrain)."""
    import torch
    from icml26_shared import cached, fingerprint

    from .denoiser import train_denoiser

    torch.manual_seed(derive(seed, "init"))  # the initial weights are part of the seed
    model = _denoiser(config)
    parts = {k: getattr(config, k) for k in ("n_pool", "image_size", "n_members", "denoiser", "width")}
    parts |= {k: getattr(config, k) for k in ("train_steps", "batch_size", "lr")}
    key = f"fremia/ddpm-{fingerprint({**parts, 'seed': seed, 'v': 2})}"

    def build():
        return train_denoiser(
            model, members, config.train_steps, derive(seed, "train"), config.lr, config.batch_size
        ).state_dict()

    model.load_state_dict(cached(key, build))
    return model.eval()


def _attack_pair(pair, model, images, a_bar, t: int, generator):
    """``pair(model, images, ...)`` (an attack of ``baselines.PAIRS``) on chunks of ``ATTACK_BATCH`` images, the
    (target, prediction) tensors concatenated: one call, as before, where the images fit in one chunk."""
    import torch

    chunks = [
        pair(model, images[i : i + ATTACK_BATCH], a_bar, t, generator) for i in range(0, len(images), ATTACK_BATCH)
    ]
    return tuple(torch.cat(parts) for parts in zip(*chunks, strict=True))


def measure_seed(config: Config, seed: int) -> dict[str, float | list[float]]:
    """Everything one seed measures: per-attack metrics without/with the filter, gains, correlations, and
    the AUC of the score restricted to the kept (``lowband``) or the attenuated (``highband``) frequencies."""
    import torch
    from scipy.stats import spearmanr

    from .baselines import LP, PAIRS
    from .data import fashion_mnist_images, member_split
    from .denoiser import alphas_cumprod
    from .method import distance, high_frequency_energy, high_frequency_filter, membership_score
    from .metrics import auc, evaluate

    torch.set_num_threads(1)
    images = torch.from_numpy(fashion_mnist_images(config.n_pool, config.image_size))
    member_idx, holdout_idx = member_split(config.n_pool, config.n_members, config.n_holdout, seed)
    members, holdouts = images[member_idx], images[holdout_idx]
    model = trained_denoiser(config, seed, members)
    a_bar = alphas_cumprod().float()
    hf = high_frequency_energy(torch.cat([members, holdouts]) * 2 - 1, config.tau).sum(-1).numpy()
    out: dict[str, float | list[float]] = {}
    generator = torch.Generator().manual_seed(derive(seed, "attack_noise"))
    for attack in ATTACK_NAMES:
        pairs = [_attack_pair(PAIRS[attack], model, x, a_bar, config.t, generator) for x in (members, holdouts)]
        variants = {"plain": (False, config.tau, config.s), "filter": (True, config.tau, config.s)}
        variants["lowband"] = (True, config.tau, 0.0)  # only the kept square (s = 0)
        variants |= {f"tau{tau}": (True, tau, config.s) for tau in config.tau_sweep}
        scores = {}
        for tag, (use_filter, tau, s) in variants.items():
            scores[tag] = [membership_score(*p, LP[attack], use_filter, tau, s).numpy() for p in pairs]
        # the official mask [c - tau, c + tau) (issue 20): reported beside the symmetric default, not a claim
        scores["filter_official"] = [
            membership_score(*p, LP[attack], True, config.tau, config.s, "official").numpy() for p in pairs
        ]
        for tag, (m, h) in scores.items():
            for metric, value in evaluate(m, h).items():
                out[f"{attack}_{metric}_{tag}"] = value
            if tag in ("plain", "filter"):
                out[f"{attack}_hf_rho_{tag}"] = float(spearmanr(hf, np.concatenate([m, h]))[0])
        symmetric, official = (np.concatenate(scores[tag]) for tag in ("filter", "filter_official"))
        out[f"{attack}_official_mask_median_rel_diff"] = float(np.median(np.abs(official - symmetric) / symmetric))
        out[f"{attack}_official_mask_spearman"] = float(spearmanr(symmetric, official)[0])
        # the complement: only the frequencies the filter attenuates (where the membership signal sits)
        m, h = (
            distance(*(x - high_frequency_filter(x, config.tau, 0.0) for x in p), LP[attack]).numpy() for p in pairs
        )
        out[f"{attack}_auc_highband"] = auc(m, h)
        for metric in METRICS:
            out[f"{attack}_{metric}_gain"] = out[f"{attack}_{metric}_filter"] - out[f"{attack}_{metric}_plain"]
            plain = out[f"{attack}_{metric}_plain"]
            out[f"{attack}_{metric}_gain_official"] = out[f"{attack}_{metric}_filter_official"] - plain
    out["hf_rho_unfiltered"] = float(np.mean([out[f"{a}_hf_rho_plain"] for a in ATTACK_NAMES]))
    out["hf_rho_filtered"] = float(np.mean([out[f"{a}_hf_rho_filter"] for a in ATTACK_NAMES]))
    out["hf_rho_drop"] = out["hf_rho_unfiltered"] - out["hf_rho_filtered"]
    return out


def measure(config: Config, out_dir: Path) -> dict[str, list[float]]:
    """Per-seed metrics for the claims and the README tables; seeds run in ``config.workers`` processes."""
    log = get_logger("fremia")
    out = run_seeds(measure_seed, config, config.seeds, config.workers, log, show=lambda k: k.endswith("_auc_gain"))
    _figure(out, config, out_dir)
    return out


def _figure(out: dict[str, list[float]], config: Config, out_dir: Path) -> None:
    """AUC and TPR@1%FPR of each attack without / with the filter, and AUC against the filter radius tau."""
    fig, axes = new_figure(ncols=3, size=(3.6, 3.2))
    axes = axes.ravel()
    x = np.arange(len(ATTACK_NAMES))
    for ax, metric, label in ((axes[0], "auc", "AUC"), (axes[1], "tpr_at_1fpr", "TPR @ 1% FPR")):
        for offset, tag, color in ((-0.2, "plain", "tab:gray"), (0.2, "filter", "tab:blue")):
            values = np.array([out[f"{a}_{metric}_{tag}"] for a in ATTACK_NAMES])
            ax.bar(x + offset, values.mean(1), 0.4, yerr=values.std(1), color=color, label=tag)
        ax.set_xticks(x, ATTACK_NAMES)
        ax.set_title(f"{label}, tau={config.tau}, s={config.s}", fontsize=9)
    axes[0].legend(fontsize=8)
    ax = axes[2]
    for attack in ATTACK_NAMES:
        auc = np.array([out[f"{attack}_auc_tau{tau}"] for tau in config.tau_sweep]).mean(1)
        ax.plot(config.tau_sweep, auc, marker="o", label=attack)
        ax.axhline(np.mean(out[f"{attack}_auc_plain"]), ls=":", color=ax.lines[-1].get_color())
    ax.set_xlabel("tau (dotted: no filter)")
    ax.set_ylabel("AUC")
    ax.legend(fontsize=8)
    save_figure(fig, out_dir / "filter_gain.png")


# forward flops of the paper's UNet (block widths 128, 256, 256, 256) on one 32 x 32 image, counted with
# torch.utils.flop_counter.FlopCounterMode; it scales with width^2 and the number of pixels
UNET_FLOPS_128_32 = 12.43e9
DRY_RUN_BATCH = 1  # images in the dry run's CPU step: one training image costs ~37 GFLOP through the UNet


def build(config: Config) -> DryRun:
    """The dry run: the config's denoiser (the paper's DDPM UNet, 35.7 M parameters); the step is one Adam step of
    ``train_denoiser`` on ``DRY_RUN_BATCH`` member images at the config's size (small by design: the paper's
    batch of 128 is ~4.8 TFLOP), Fashion-MNIST or stand-in images of that shape when it is missing.

    Estimates: training costs 3 forward passes per image for ``train_steps`` batches; the attacks evaluate every
    member and hold-out image with 5 forward passes (naive 1, SecMI 2, PIA 2); the MLP's forward pass costs
    2 P flops per image. Memory: the image pool, the model's weights, gradients and Adam moments, and the UNet's
    activations (~40 MB per training image at 32 x 32, width 128, measured under load) for one batch."""
    import torch

    from .data import fashion_mnist_images
    from .denoiser import train_denoiser

    model = _denoiser(config)
    parameters = sum(p.numel() for p in model.parameters())
    if config.denoiser == "unet":
        forward = UNET_FLOPS_128_32 * (config.width / 128) ** 2 * (config.image_size / 32) ** 2
        per_image = 40e6 * (config.width / 128) * (config.image_size / 32) ** 2
    else:
        forward, per_image = 2.0 * parameters, 4.0 * 4 * config.width
    per_seed = 3 * forward * config.batch_size * config.train_steps + 5 * forward * (
        config.n_members + config.n_holdout
    )
    pool = 4.0 * config.n_pool * config.image_size**2
    batch = min(DRY_RUN_BATCH, config.batch_size)
    missing = fashion_mnist_missing()

    def step(device: str) -> None:
        if missing:  # stand-in images of the real shape
            members = torch.rand(
                batch, 1, config.image_size, config.image_size, generator=torch.Generator().manual_seed(0)
            )
        else:
            members = torch.from_numpy(fashion_mnist_images(max(2, batch), config.image_size))[:batch]
        train_denoiser(model, members, 1, 0, config.lr, batch)

    return DryRun(
        summary=f"{config.denoiser} DDPM denoiser (width {config.width}) on {config.image_size}x{config.image_size} "
        f"Fashion-MNIST, {config.train_steps} steps of batch {config.batch_size} on {config.n_members} members; 3 "
        f"attacks on {config.n_members} + {config.n_holdout} images; {len(config.seeds)} seeds; the step trains on "
        f"{batch} image(s)",
        parameters=parameters,
        memory_bytes=pool + 16.0 * parameters + per_image * max(config.batch_size, ATTACK_BATCH / 3),
        flops=per_seed * len(config.seeds),
        step=step,
        step_memory_bytes=16.0 * parameters + per_image * batch,
        step_cpu_seconds=3 * forward * batch / 1e10,  # ~10 GFLOP/s on a CPU
        missing=missing,
        devices=("cpu",),  # train_denoiser and the attacks keep their tensors on the CPU
    )


EXPERIMENT = Experiment(name="fremia", configs=CONFIGS, claims=CLAIMS, measure=measure, build=build)


def run(config: Config | str = "quick", out_dir: Path | None = None):
    """Run the reproduction under ``config`` (a name or a Config); writes ``results.json`` and the figure."""
    return EXPERIMENT.run(config, out_dir)
