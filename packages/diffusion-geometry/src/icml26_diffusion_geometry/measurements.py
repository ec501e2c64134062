"""One function per part of the reproduction, each a pure function of (config, seed).

* ``analytic_case``: the method against the closed forms of ``analytic.py`` at the official step, and
  the sharp semantic switch against the smooth detail modulation on the same boundary.
* ``digits_case``: train the class-conditional miniature, then LS / LC / PHFE of the DDIM+CFG map for
  paired in-distribution (one class) and out-of-distribution (two-class mixture) conditions from the
  same noise latents, the comparators, and the statistics of the claims.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import torch
from icml26_shared import cached, derive, fingerprint

from .analytic import (
    LinearGenerator,
    RankOneGenerator,
    detail_template,
    orthonormal_pair,
    smooth_template,
)
from .method import generative_geometry, geometric_hotspots

SCALARS = ("LS", "LC", "PHFE", "axis_cos")
MAPS = ("LS_map", "LC_map", "PHFE_map")
ANALYTIC_SHAPE = (1, 8, 8)  # latent and output of the analytic generators (D = 64, as the digits)


def _relative_error(geometry, closed: dict[str, Any]) -> float:
    """Largest error of every scalar and map, relative to the largest magnitude of that quantity."""
    worst = 0.0
    for key in SCALARS + MAPS:
        ours = getattr(geometry, key)[0].numpy()
        ref = np.asarray(closed[key], dtype=float)
        worst = max(worst, float(np.abs(ours - ref).max() / max(np.abs(ref).max(), 1.0)))
    return worst


def analytic_case(config, seed: int) -> dict[str, float]:
    """Method vs closed forms (linear, detail modulation, semantic switch) and the hotspot contrast."""
    rng = np.random.default_rng(derive(seed, "analytic"))
    dim, d, eps = int(np.prod(ANALYTIC_SHAPE)), config.d_low, config.eps
    W = np.linalg.qr(rng.normal(size=(dim, d)))[0]
    n = rng.normal(size=d)
    n_scaled = eps * n / np.linalg.norm(n)
    z = rng.normal(size=dim)
    u, v = orthonormal_pair(rng, dim)
    linear = LinearGenerator(rng.normal(size=(dim, dim)) / np.sqrt(dim), rng.normal(size=dim), ANALYTIC_SHAPE)
    detail = RankOneGenerator(smooth_template(rng, ANALYTIC_SHAPE), detail_template(rng, ANALYTIC_SHAPE), u, v)
    switch_T = smooth_template(rng, ANALYTIC_SHAPE) - smooth_template(rng, ANALYTIC_SHAPE)
    switch = RankOneGenerator(np.zeros(ANALYTIC_SHAPE), switch_T, u, v, profile="sigmoid", k=config.switch_k)
    z_boundary = detail.boundary_point(z)  # g(z) = 0: the switch's semantic boundary (same g for both)

    def geometry(F, point):
        latent = torch.tensor(point).reshape(1, *ANALYTIC_SHAPE)
        return generative_geometry(F, latent, d, eps, W=torch.tensor(W)[None], n=torch.tensor(n)[None])

    results = {}
    errors = []
    for name, F, point, closed in [
        ("linear", linear, z, linear.closed_form(W, n_scaled)),
        ("detail", detail, z_boundary, detail.closed_form(z_boundary, W, n_scaled, eps)),
        ("switch", switch, z_boundary, switch.closed_form(z_boundary, W, n_scaled, eps)),
    ]:
        g = geometry(F, point)
        errors.append(_relative_error(g, closed))
        for key in SCALARS:
            results[f"analytic_{name}_{key}"] = float(getattr(g, key)[0])
        results[f"analytic_{name}_detail_per_stretch"] = float(g.PHFE[0] / g.LS[0] ** 2)  # PHFE / LS^2
    results["analytic_max_relative_error"] = max(errors)
    exact_switch = switch.closed_form(z_boundary, W, n_scaled, None)
    results["analytic_switch_LC_exact_jacobian"] = float(exact_switch["LC"])  # eps -> 0: boundary curvature only
    lc_ratio = np.log10(results["analytic_switch_LC"] / results["analytic_detail_LC"])
    detail_ratio = np.log10(
        results["analytic_detail_detail_per_stretch"] / results["analytic_switch_detail_per_stretch"]
    )
    results["analytic_log10_LC_switch_over_detail"] = float(lc_ratio)
    results["analytic_log10_detail_per_stretch_detail_over_switch"] = float(detail_ratio)
    results["analytic_hotspot_margin"] = float(min(lc_ratio, detail_ratio))
    return results


def train_model(config, seed: int):
    """The seed's epsilon-network, trained once and cached as safetensors (float64 for the geometry)."""
    from .data import load_digits_images
    from .model import EpsilonNet, train_epsilon_net

    source = hashlib.sha256(Path(__file__).with_name("model.py").read_bytes()).hexdigest()  # code changes retrain
    key = fingerprint({"steps": config.train_steps, "hidden": config.hidden, "seed": seed, "model": source})

    def build():
        images, labels = load_digits_images()
        return train_epsilon_net(images, labels, config.train_steps, derive(seed, "train"), config.hidden).state_dict()

    state = cached(f"diffusion-geometry/epsnet-{key}", build)
    model = EpsilonNet(64, 10, config.hidden)
    model.load_state_dict(state)
    return model.double().eval()


def id_ood_statistics(config, seed: int, geo_id, geo_ood, extra: dict[str, np.ndarray]) -> dict[str, float]:
    """Correlations, their paired bootstrap, medians, hotspot rates and OOD-detection AUROCs."""
    from .statistics import auroc, bootstrap_p_value, spearman

    lc_id, ph_id, lc_ood, ph_ood = (t.numpy() for t in (geo_id.LC, geo_id.PHFE, geo_ood.LC, geo_ood.PHFE))
    out = {
        "id_corr_LC_PHFE": spearman(lc_id, ph_id),
        "ood_corr_LC_PHFE": spearman(lc_ood, ph_ood),
        "id_corr_LS_PHFE": spearman(geo_id.LS.numpy(), ph_id),
        "ood_corr_LS_PHFE": spearman(geo_ood.LS.numpy(), ph_ood),
        # ours: PHFE / LS^2 is the high-frequency share of the principal stretch, free of its size
        "id_corr_LC_PHFE_share": spearman(lc_id, ph_id / geo_id.LS.numpy() ** 2),
        "ood_corr_LC_PHFE_share": spearman(lc_ood, ph_ood / geo_ood.LS.numpy() ** 2),
        "log_median_LC_ood_over_id": float(np.log(np.median(lc_ood) / np.median(lc_id))),
    }
    out["corr_drop_id_minus_ood"] = out["id_corr_LC_PHFE"] - out["ood_corr_LC_PHFE"]

    def drop(idx):  # the same latents serve both conditions: resample pairs jointly
        return spearman(lc_id[idx], ph_id[idx]) - spearman(lc_ood[idx], ph_ood[idx])

    rng = np.random.default_rng(derive(seed, "bootstrap"))
    out["corr_drop_bootstrap_p"], out["corr_drop_bootstrap_q025"] = bootstrap_p_value(
        drop, lc_id.size, config.bootstrap, rng
    )
    for name, ours, ref in [("id", geo_id, geo_id), ("ood", geo_ood, geo_id)]:
        hot = geometric_hotspots(ours.LC, ours.PHFE, ref.LC, ref.PHFE)
        out[f"hotspot_rate_{name}"] = float(hot.double().mean())
    scores = {"LC": (lc_ood, lc_id), "LS": (geo_ood.LS.numpy(), geo_id.LS.numpy()), "PHFE": (ph_ood, ph_id)}
    scores |= {k: (v[1], v[0]) for k, v in extra.items()}
    for name, (ood, ind) in scores.items():
        out[f"auroc_{name}"] = auroc(ood, ind)
    out["auroc_LC_minus_sensitivity"] = out["auroc_LC"] - out["auroc_sensitivity"]
    for key in SCALARS:
        out[f"id_median_{key}"] = float(getattr(geo_id, key).median())
        out[f"ood_median_{key}"] = float(getattr(geo_ood, key).median())
    return out


def digits_case(config, seed: int) -> tuple[dict[str, float], dict[str, Any]]:
    """The trained miniature: geometry of paired ID / OOD samples, comparators and statistics."""
    from .baselines import full_spectral_norm, image_high_frequency, output_sensitivity
    from .data import class_conditions, draw_pairs, mixture_conditions
    from .model import DDIMGenerator
    from .statistics import spearman

    F = DDIMGenerator(train_model(config, seed), config.sampler_steps, config.guidance)
    rng = np.random.default_rng(derive(seed, "conditions"))
    first, second = draw_pairs(rng, config.samples)
    conditions = {"id": class_conditions(first), "ood": mixture_conditions(first, second)}
    z = torch.randn(
        config.samples, 1, 8, 8, generator=torch.Generator().manual_seed(derive(seed, "z")), dtype=torch.float64
    )
    geos, extra, ablation = {}, {}, {}
    with torch.no_grad():
        for label, cond in conditions.items():  # the same subspaces and neighbours for both conditions
            gen = torch.Generator().manual_seed(derive(seed, "subspace"))
            geos[label] = generative_geometry(F, z, config.d_low, config.eps, cond=cond, generator=gen)
            gen = torch.Generator().manual_seed(derive(seed, "sensitivity"))
            sens = output_sensitivity(F, z, cond, config.eps, config.sensitivity_directions, gen).numpy()
            extra.setdefault("sensitivity", []).append(sens)
            extra.setdefault("image_hf", []).append(image_high_frequency(geos[label].x).numpy())
    for w in config.ablation_guidance:  # the official CFG scale on the same model, latents and subspaces
        geo_w = {}
        with torch.no_grad():
            for label, cond in conditions.items():
                gen = torch.Generator().manual_seed(derive(seed, "subspace"))
                F_w = DDIMGenerator(F.model, config.sampler_steps, w)
                geo_w[label] = generative_geometry(F_w, z, config.d_low, config.eps, cond=cond, generator=gen)
        ablation[f"guidance{w:g}"] = geo_w
    m = config.full_norm_samples
    gen = torch.Generator().manual_seed(derive(seed, "power"))
    full = full_spectral_norm(F, z[:m], conditions["id"][:m], config.power_iters, gen)
    metrics = id_ood_statistics(config, seed, geos["id"], geos["ood"], extra)
    for name, geo_w in ablation.items():
        lc_id, lc_ood = geo_w["id"].LC.numpy(), geo_w["ood"].LC.numpy()
        corr_id, corr_ood = (spearman(geo_w[k].LC.numpy(), geo_w[k].PHFE.numpy()) for k in ("id", "ood"))
        metrics[f"{name}_id_corr_LC_PHFE"], metrics[f"{name}_ood_corr_LC_PHFE"] = corr_id, corr_ood
        metrics[f"{name}_corr_drop_id_minus_ood"] = corr_id - corr_ood
        metrics[f"{name}_log_median_LC_ood_over_id"] = float(np.log(np.median(lc_ood) / np.median(lc_id)))
    ratio = geos["id"].LS[:m] / full
    metrics["LS_subspace_over_full_median"] = float(ratio.median())
    metrics["LS_subspace_over_full_max"] = float(ratio.max())
    return metrics, {"id": geos["id"], "ood": geos["ood"], "first": first, "second": second}
