"""Miniature reproduction of WhisperSplat's claims: configs, claims and the measurement.

Each seed draws its own procedural cover model (a stand-in for a trained 3DGS scene) and hides its own
scikit-image photograph at a secret view above the scene, while 24 cover views circle it. Per seed we run
WhisperSplat (GPP + other-view term), the same without the other-view term, the same without GPP (to the early
budget), and the weight-modifying baseline, all from the same frozen geometry.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
from icml26_shared import (
    Claim,
    DryRun,
    Experiment,
    check_closed_interval,
    check_int,
    check_number,
    check_positive,
    derive,
    fail,
    get_logger,
    run_seeds,
)
from icml26_shared import Config as BaseConfig

HIDDEN_PSNR = 20.0  # dB, issue 15 / spec section 5 (b)
HIDDEN_SSIM = 0.7
OTHER_PSNR = 30.0  # dB, spec section 5 (c)
BASELINE_COVER_PSNR = 40.0  # [INF] "damages the cover": the released model differs visibly from the cover


@dataclass(frozen=True)
class Config(BaseConfig):
    n_gaussians: int = 1500
    image_size: int = 48
    n_views: int = 24  # cover views on a ring
    ring_elevation: float = 20.0  # degrees
    secret_elevation: float = 70.0  # [INF] the secret view looks down on the scene, off the cover ring
    secret_azimuth: float = 0.0
    distance: float = 4.0
    fov: float = 25.0  # degrees: the cube [-1, 1]^3 fills every view
    fidelity_every: int = 4  # every 4th ring view is in the other-view term; the rest are held out
    steps: int = 250
    lr: float = 0.025
    gpp_fraction: float = 0.2
    gpp_sigma: float = 0.1
    early_budget: int = 50  # steps at which GPP and no-GPP are compared (= T_gpp)
    lambda_ssim: float = 0.2
    other_weight: float = 1.0
    key_penalty: float = 1e-3
    decoder_lr: float = 1e-3

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("n_gaussians", self.n_gaussians, 1)
        check_int("image_size", self.image_size, 11)  # SSIM's 11 x 11 window
        check_int("n_views", self.n_views, 2)
        check_int("fidelity_every", self.fidelity_every, 1, self.n_views)
        check_int("steps", self.steps, 1)
        check_int("early_budget", self.early_budget, 1, self.steps)
        for name in ("distance", "fov", "lr", "decoder_lr"):
            check_positive(name, getattr(self, name))
        check_number("secret_azimuth", self.secret_azimuth)
        for name in ("gpp_sigma", "other_weight", "key_penalty"):
            if check_number(name, getattr(self, name)) < 0:
                raise fail(name, getattr(self, name), "a finite number >= 0")
        check_closed_interval("gpp_fraction", self.gpp_fraction, 0.0, 1.0)
        check_closed_interval("lambda_ssim", self.lambda_ssim, 0.0, 1.0)
        for name in ("ring_elevation", "secret_elevation"):
            if not -90 < check_number(name, getattr(self, name)) < 90:
                raise fail(name, getattr(self, name), "an elevation in (-90, 90) degrees")


CONFIGS = {
    "smoke": Config(seeds=(0, 1), n_gaussians=200, image_size=16, n_views=8, steps=10, early_budget=2),
    "quick": Config(),
    # The budget that could change the failing gpp_faster claim (-0.18 +- 0.02 dB, decided at 3 seeds): a key with
    # more to learn, as in the paper's larger scenes: 2x the Gaussians, 64 x 64 px views (1.8x the pixels) and 2x
    # the key's steps, T_gpp still 20 % of them. Cost: quick is ~20 CPU s per seed; splatting and renders grow
    # with pixels x Gaussians (3.6x) and the key's steps 2x -> ~7x, ~140 CPU s per seed, ~7 CPU min for 3 seeds
    # (one process, one torch thread).
    "medium": Config(n_gaussians=3000, image_size=64, steps=500, early_budget=100),
    "paper": Config(  # the paper's scenes are trained 3DGS models (9 scenes, ~1e6 Gaussians, ~800 px views)
        seeds=tuple(range(5)), n_gaussians=20000, image_size=128, n_views=48, steps=3000, early_budget=600
    ),
}

CLAIMS = [
    Claim(
        "cover_lossless",
        "The released model renders bit-identically to the cover at every view (max |difference| over all "
        "views and pixels = 0).",
        "Lossless: no degradation of the model's rendering quality (abstract; PSNR = inf vs the clean model)",
        "cover_max_abs_diff",
        "<=",
        0.0,
    ),
    Claim(
        "hidden_psnr",
        f"The key reveals the hidden image at the secret view with PSNR >= {HIDDEN_PSNR:g} dB.",
        "Superior hidden-image recovery vs GS-Hider / KeySS (abstract; 9 scenes)",
        "hidden_psnr",
        ">=",
        HIDDEN_PSNR,
    ),
    Claim(
        "hidden_ssim",
        f"The revealed image has SSIM >= {HIDDEN_SSIM:g} against the hidden image.",
        "Superior hidden-image recovery (abstract)",
        "hidden_ssim",
        ">=",
        HIDDEN_SSIM,
    ),
    Claim(
        "other_views_fidelity",
        f"With the other-view term the keyed model stays close to the cover at the held-out cover views (the "
        f"ring views not in the term): mean PSNR >= {OTHER_PSNR:g} dB.",
        "Other views remain indistinguishable from the original renders (abstract)",
        "other_psnr_held_out",
        ">=",
        OTHER_PSNR,
    ),
    Claim(
        "other_view_term_helps",
        "Without the other-view term the keyed model's held-out cover views are worse: paired PSNR gain of the "
        "term > 0 dB.",
        "The other-view term keeps other views indistinguishable (abstract)",
        "other_psnr_held_out_gain_from_term",
        ">",
        0.0,
    ),
    Claim(
        "gpp_faster",
        "GPP reaches a higher hidden PSNR than plain L1 + SSIM at the early budget (paired difference > 0 dB).",
        "GPP bootstraps fast divergence from the clean render (abstract)",
        "gpp_gain_early",
        ">",
        0.0,
    ),
    Claim(
        "baseline_damages_cover",
        f"The weight-modifying baseline's released model differs from the cover: PSNR over all views "
        f"(pooled) < {BASELINE_COVER_PSNR:g} dB.",
        "Prior work modifies weights, altering novel-view fidelity (abstract)",
        "baseline_cover_psnr",
        "<",
        BASELINE_COVER_PSNR,
    ),
]


def skimage_ssim(x, y) -> float:
    """SSIM of two (H, W, 3) images in [0, 1] with scikit-image: Gaussian window sigma 1.5, population
    covariances (Wang et al. 2004, the 3DGS evaluation setting)."""
    from skimage.metrics import structural_similarity

    return float(
        structural_similarity(
            np.asarray(x, dtype=np.float64),
            np.asarray(y, dtype=np.float64),
            channel_axis=-1,
            data_range=1.0,
            gaussian_weights=True,
            sigma=1.5,
            use_sample_covariance=False,
        )
    )


def pooled_psnr(images, references) -> float:
    """PSNR (dB) of the mean squared error pooled over all pairs; inf when identical."""
    mse = float(np.mean([((a.double() - b.double()) ** 2).mean() for a, b in zip(images, references, strict=True)]))
    return math.inf if mse == 0 else -10 * math.log10(mse)


def measure_seed(config: Config, seed: int, out_dir: Path | None = None) -> dict[str, float]:
    """Every variant on one seed's cover model and hidden image; the first seed's figure goes to ``out_dir``."""
    import torch

    from .baselines import hide_in_weights
    from .data import HIDDEN_IMAGES, hidden_image, orbit_camera, procedural_scene, ring_cameras
    from .method import hide, psnr
    from .render import render, splat

    torch.set_num_threads(1)
    cover = procedural_scene(config.n_gaussians, np.random.default_rng(derive(seed, "scene")))
    snapshot = {k: getattr(cover, k).clone() for k in ("means", "scales", "quats", "opacities", "sh")}
    hidden = hidden_image(HIDDEN_IMAGES[seed % len(HIDDEN_IMAGES)], config.image_size)
    ring = ring_cameras(config.n_views, config.distance, config.ring_elevation, config.fov, config.image_size)
    secret_camera = orbit_camera(
        config.secret_azimuth, config.secret_elevation, config.distance, config.fov, config.image_size
    )
    cameras = [secret_camera, *ring]
    with torch.no_grad():
        views = [splat(cover, c) for c in cameras]
        clean = [v.image(cover.sh) for v in views]
    secret, ring_views = views[0], views[1:]
    fidelity = ring_views[:: config.fidelity_every]
    common = {
        "lr": config.lr,
        "lambda_ssim": config.lambda_ssim,
        "gpp_sigma": config.gpp_sigma,
        "key_penalty": config.key_penalty,
        "seed": derive(seed, "gpp"),
    }
    gpp_steps = round(config.gpp_fraction * config.steps)
    stego = hide(
        cover, secret, hidden, fidelity, config.steps, gpp_steps=gpp_steps, other_weight=config.other_weight, **common
    )
    alone = hide(cover, secret, hidden, (), config.steps, gpp_steps=gpp_steps, other_weight=0.0, **common)
    plain = hide(
        cover, secret, hidden, fidelity, config.early_budget, gpp_steps=0, other_weight=config.other_weight, **common
    )
    baseline = hide_in_weights(
        cover, secret, hidden, fidelity, config.steps, config.lr, config.decoder_lr, config.other_weight, seed=seed
    )
    out: dict[str, float] = {}
    with torch.no_grad():
        # lossless: the released model, rendered from scratch at every view, against the renders made before hiding
        released = [render(stego.cover, c) for c in cameras]
        out["cover_max_abs_diff"] = max(float((a - b).abs().max()) for a, b in zip(released, clean, strict=True))
        out["cover_params_changed"] = float(
            sum(not torch.equal(getattr(stego.cover, k), v) for k, v in snapshot.items())
        )
        revealed = stego.reveal().clamp(0, 1)  # the full renderer, key added to the SH
        out["hidden_psnr"] = psnr(revealed, hidden)
        out["hidden_ssim"] = skimage_ssim(revealed, hidden)
        out["hidden_psnr_without_term"] = psnr(secret.image(cover.sh + alone.key).clamp(0, 1), hidden)
        out["hidden_psnr_cover_view"] = psnr(clean[0].clamp(0, 1), hidden)  # before hiding: the cover itself
        for name, result in (("", stego), ("_without_term", alone)):
            per_view = [psnr(v.image(cover.sh + result.key), c) for v, c in zip(ring_views, clean[1:], strict=True)]
            held_out = [p for k, p in enumerate(per_view) if k % config.fidelity_every]
            out[f"other_psnr{name}"] = float(np.mean(per_view))
            out[f"other_psnr_min{name}"] = float(np.min(per_view))
            out[f"other_psnr_held_out{name}"] = float(np.mean(held_out)) if held_out else math.nan
        out["other_psnr_held_out_gain_from_term"] = out["other_psnr_held_out"] - out["other_psnr_held_out_without_term"]
        out["hidden_psnr_early_gpp"] = stego.history[config.early_budget]
        out["hidden_psnr_early_no_gpp"] = plain.history[config.early_budget]
        out["gpp_gain_early"] = out["hidden_psnr_early_gpp"] - out["hidden_psnr_early_no_gpp"]
        base_views = [v.image(baseline.model.sh) for v in views]
        out["baseline_cover_psnr"] = pooled_psnr(base_views, clean)
        out["baseline_cover_psnr_secret_view"] = psnr(base_views[0], clean[0])
        out["baseline_cover_psnr_ring"] = pooled_psnr(base_views[1:], clean[1:])
        base_revealed = baseline.reveal().clamp(0, 1)
        out["baseline_hidden_psnr"] = psnr(base_revealed, hidden)
        out["baseline_hidden_ssim"] = skimage_ssim(base_revealed, hidden)
    if out_dir is not None and seed == config.seeds[0]:
        from .figures import plot_example

        example = {
            "hidden": hidden,
            "revealed": revealed,
            "cover": clean[0],
            "keyed_ring": ring_views[1].image(cover.sh + stego.key),
            "keyed_ring_without_term": ring_views[1].image(cover.sh + alone.key),
            "baseline_secret": base_views[0],
            "history_gpp": stego.history,
            "history_no_gpp": plain.history,
        }
        plot_example(example, config.early_budget, out_dir / "example.png")
    return out


def measure(config: Config, out_dir: Path) -> dict[str, list[float]]:
    """Per-seed metrics for the claims and the README tables, and the figure."""
    log = get_logger("whispersplat")
    shown = (
        "hidden_psnr",
        "hidden_ssim",
        "other_psnr_held_out",
        "gpp_gain_early",
        "baseline_cover_psnr",
        "cover_max_abs_diff",
    )
    return run_seeds(partial(measure_seed, out_dir=out_dir), config, config.seeds, logger=log, show=shown.__contains__)


SPLAT_INTERMEDIATES = 12  # [INF] float32 pixels x Gaussians tensors alive at once in render.splat (d is two)
SPLAT_FLOPS_PER_PAIR = 40  # [INF] offset, conic power, exp, masks and two cumulative products per pixel-Gaussian
BLENDED_PER_PIXEL = 50  # [INF] Gaussians composited per pixel: the nonzeros of the sparse frozen weights


def build(config: Config) -> DryRun:
    """The dry run: the generated cover scene (``n_gaussians``), the hidden image and the secret camera at the
    config's image size; the step is one optimisation step of ``method.hide`` (the secret view's compositing
    weights, then one Adam step of the key). The dense renderer holds ~SPLAT_INTERMEDIATES pixels x Gaussians
    float32 tensors while it splats a view (README, Scaling up): ~16 GB at the paper's 128 px and 20,000
    Gaussians, so the step is skipped on the CPU's 2 GB dry-run limit and needs a large-memory machine."""
    from .data import HIDDEN_IMAGES, hidden_image, orbit_camera, procedural_scene
    from .method import hide

    cover = procedural_scene(config.n_gaussians, np.random.default_rng(0))
    K = cover.sh.shape[1]  # SH coefficients per colour channel (degree 2: 9)
    pairs = config.image_size**2 * config.n_gaussians  # pixels x Gaussians of one view
    views = 1 + len(range(0, config.n_views, config.fidelity_every))  # secret + other-view term
    # per seed: every ring view and the secret view splatted once, then 3 keys trained (+ the baseline's decoder)
    # for steps x views sparse renders of 2 x pixels x BLENDED x 3 flops, x 3 with the backward pass
    render = 2.0 * config.image_size**2 * BLENDED_PER_PIXEL * 3 * 3
    per_seed = SPLAT_FLOPS_PER_PAIR * pairs * (1 + config.n_views) + 4 * config.steps * views * render
    step_memory = 4.0 * SPLAT_INTERMEDIATES * pairs

    def step(device: str) -> None:
        hidden = hidden_image(HIDDEN_IMAGES[0], config.image_size)
        camera = orbit_camera(
            config.secret_azimuth, config.secret_elevation, config.distance, config.fov, config.image_size
        )
        hide(cover, camera, hidden, (), 1, lr=config.lr, lambda_ssim=config.lambda_ssim, key_penalty=config.key_penalty)

    return DryRun(
        summary=f"cover scene of {config.n_gaussians} Gaussians (SH degree 2), {config.image_size} px views: secret "
        f"view + {config.n_views} ring views; {config.steps} key steps (GPP for {config.gpp_fraction:.0%})",
        parameters=config.n_gaussians * K * 3,  # the key Delta: one offset per SH coefficient of every Gaussian
        memory_bytes=step_memory + 4.0 * (1 + config.n_views) * config.image_size**2 * BLENDED_PER_PIXEL * 3,
        flops=per_seed * len(config.seeds),
        step=step,
        step_memory_bytes=step_memory,
        step_cpu_seconds=(SPLAT_FLOPS_PER_PAIR * pairs + render) / 1e9,
        devices=("cpu",),  # render.splat builds its pixel grid and weights on the CPU
    )


EXPERIMENT = Experiment(name="whispersplat", configs=CONFIGS, claims=CLAIMS, measure=measure, build=build)


def run(config: Config | str = "quick", out_dir: Path | None = None):
    """Run the reproduction under ``config`` (a name or a Config); writes ``results.json`` and the figures."""
    return EXPERIMENT.run(config, out_dir)
