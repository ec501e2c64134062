"""Miniature reproduction of the paper's claims: configs, claims and the measurement.

Per seed: build the miniature LLM-TTS world (pipeline.build_world: corpus, k-means semantic tokens, tiny TTS
transformer, SER, top-k SAE on the residual stream after block ``layer``), select m features per emotion by
activation-rate difference, then on held-out texts, scored on rendered audio: induction (SAE steering from
neutral prompts; operating strength chosen on validation texts under a content floor), global
mean-difference steering at matched norm (chosen the same way), top-1 vs top-m, random features,
suppression (zeroing the features on emotional prompts), and the features' link to F0.
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

TARGETS = ("happy", "angry", "sad")  # the emotions induced / suppressed (neutral is the reference)


@dataclass(frozen=True)
class Config(BaseConfig):
    n_tokens: int = 96  # k-means semantic tokens
    kmeans_frames: int = 6000
    n_train_texts: int = 600  # x 4 emotions: backbone training utterances
    n_analysis_texts: int = 100  # x 4 emotions: SAE states, feature selection, SER training
    d_model: int = 48
    n_layers: int = 3
    n_heads: int = 4
    layer: int = 2  # residual stream after this block
    tts_steps: int = 800
    tts_batch: int = 32
    tts_lr: float = 4e-3
    d_sae: int = 384  # 8 x d_model
    k: int = 16
    sae_steps: int = 1000
    sae_batch: int = 256
    sae_lr: float = 1e-3
    m: int = 8  # selected features per emotion
    selection_rule: str = "frames"  # activation rate: fraction of frames ("frames") or fires anywhere ("any")
    alphas: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0)  # steering strengths swept on validation texts
    content_floor: float = 0.9  # operating points keep content accuracy >= this on validation texts
    n_val: int = 16
    n_test: int = 32
    workers: int = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in (
            "kmeans_frames",
            "n_train_texts",
            "n_analysis_texts",
            "d_model",
            "n_layers",
            "n_heads",
            "tts_steps",
            "tts_batch",
            "d_sae",
            "sae_steps",
            "sae_batch",
            "n_val",
            "n_test",
            "workers",
        ):
            check_int(name, getattr(self, name), 1)
        check_int("n_tokens", self.n_tokens, 20)
        check_int("layer", self.layer, 1, self.n_layers)
        check_int("k", self.k, 1, self.d_sae)
        check_int("m", self.m, 1, self.d_sae // 2)
        for name in ("tts_lr", "sae_lr"):
            check_positive(name, getattr(self, name))
        check_closed_interval("content_floor", self.content_floor, 0.0, 1.0)
        if self.selection_rule not in ("frames", "any"):
            raise fail("selection_rule", self.selection_rule, "'frames' or 'any'")
        if not self.alphas or any(check_positive("alphas", a) <= 0 for a in self.alphas):
            raise fail("alphas", self.alphas, "a non-empty tuple of finite strengths > 0")


CONFIGS = {
    "smoke": Config(
        seeds=(0,),
        n_tokens=32,
        kmeans_frames=500,
        n_train_texts=30,
        n_analysis_texts=10,
        d_model=16,
        n_layers=2,
        n_heads=2,
        layer=1,
        tts_steps=5,
        tts_batch=8,
        d_sae=64,
        k=4,
        sae_steps=5,
        sae_batch=32,
        m=2,
        alphas=(2.0,),
        n_val=3,
        n_test=4,
    ),
    "quick": Config(seeds=(0, 1, 2), workers=3),
    # The budget the README names as missing (induction's steep strength-content trade-off in the miniature, and
    # emotion carried by more latents than the 8 zeroed): a wider backbone and SAE trained 3x longer (d_model 48 ->
    # 64, d_sae 8 x 64, 800 -> 2400 backbone steps, 1000 -> 3000 SAE steps), the paper's m = 16 selected features,
    # and 32 validation texts for the operating point instead of 16. Seeds: sae_matches_global_steering is -0.192
    # with a per-seed std of 0.175 against -0.05, (2 x 0.175 / 0.142)^2 = 6.1; induction_reaches_target 0.346, std
    # 0.306 against 0.6, (2 x 0.306 / 0.254)^2 = 5.8 -> 6 seeds. Cost: a quick seed took 55.5 CPU s of training
    # (tokenizer, backbone, SAE) + 14.5 s of the rest (measured under load ~20); 3x steps at (64/48)^2 = 1.8x per
    # step bounds training by 5.3 x 55.5 = 295 s, the rest ~25 s: ~320 s per seed, ~1920 CPU s for 6 seeds,
    # ~16 min on 2 idle cores (workers=2), < 2 GB.
    "medium": Config(
        seeds=tuple(range(6)),
        d_model=64,
        d_sae=512,
        tts_steps=2400,
        sae_steps=3000,
        m=16,
        n_val=32,
        workers=2,
    ),
    "paper": Config(
        seeds=(0, 1, 2, 3, 4),
        n_tokens=256,
        kmeans_frames=50000,
        n_train_texts=5000,
        n_analysis_texts=1000,
        d_model=256,
        n_layers=8,
        n_heads=8,
        layer=4,
        tts_steps=20000,
        d_sae=4096,
        k=32,
        sae_steps=20000,
        m=16,
        n_val=200,
        n_test=500,
        workers=5,
    ),
}

CLAIMS = [
    Claim(
        "induction_reaches_target",
        "Steering the selected SAE features from neutral prompts raises the SER probability of the target "
        "emotion (mean over happy, angry, sad) from chance to at least 0.6.",
        "abstract: intervening on a small subset of features enables emotion induction (spec: ~chance -> >= 0.6)",
        "induction_target_prob",
        ">=",
        0.6,
    ),
    Claim(
        "induction_keeps_content",
        "At that operating point the phone content of the generated speech stays >= 90% correct "
        "(1 - phone error rate vs the text, held-out texts).",
        "backbone parameters unchanged; content preserved (WER reported in the paper; spec: >= 90%)",
        "induction_content",
        ">=",
        0.9,
    ),
    Claim(
        "suppression_raises_neutral",
        "Zeroing the selected features on emotional prompts raises the SER probability of neutral by at least "
        "0.25 over the unsteered emotional speech.",
        "abstract: bidirectional control, emotion suppression",
        "suppression_neutral_gain",
        ">=",
        0.25,
    ),
    Claim(
        "sae_matches_global_steering",
        "SAE-feature steering induces the target emotion at least as well as global mean-difference steering "
        "at matched ||delta h|| (each at its best validation strength with content >= 90%): difference >= -0.05.",
        "abstract: comparable or superior to global steering",
        "sae_minus_global_target_prob",
        ">=",
        -0.05,
    ),
    Claim(
        "emotion_is_distributed",
        "Steering the top-m features raises the target probability more than the top-1 feature alone at the "
        "same per-feature strength: P(top-m) - P(top-1) > 0.",
        "abstract: emotional variation is distributed across multiple sparse latent features",
        "topm_minus_top1_target_prob",
        ">",
        0.0,
    ),
    Claim(
        "random_features_do_nothing",
        "Steering m random live features at the same strength leaves the target probability within 0.1 of the "
        "unsteered neutral speech: |P(random) - P(unsteered)| < 0.1.",
        "control (spec §4): the chosen features matter",
        "random_abs_effect",
        "<",
        0.1,
    ),
    Claim(
        "features_track_f0",
        "Some selected feature's sentence-mean activation correlates with the sentence's mean log F0 read "
        "from the audio: max |Pearson r| >= 0.5.",
        "abstract: distinct latent features are associated with specific acoustic attributes (e.g. pitch)",
        "f0_best_abs_r",
        ">=",
        0.5,
    ),
    Claim(
        "f0_feature_steers_f0",
        "Steering that most F0-correlated feature alone (at the largest strength of the sweep) shifts the "
        "audio's F0 in the sign of its correlation (agreement over the three emotions > 0.5).",
        "abstract: features associated with pitch",
        "f0_sign_agreement",
        ">",
        0.5,
    ),
]


def _operating_point(curve: list[tuple[float, float, float]], floor: float) -> float:
    """The strength with the highest target probability among those whose content >= floor (validation);
    the smallest strength when none keeps the content."""
    kept = [(p, -a) for a, p, c in curve if c >= floor]
    return -max(kept)[1] if kept else min(a for a, _, _ in curve)


def measure_seed(config: Config, seed: int) -> dict[str, float]:
    """Every measurement of one seed (a pure function of ``config`` and ``seed``)."""
    import torch
    from scipy.stats import pearsonr

    from .baselines import global_steering, mean_difference, random_features
    from .data import random_texts
    from .method import (
        activation_rates,
        emotion_scores,
        feature_intervention,
        mean_active_values,
        sae_quality,
        select_features,
    )
    from .pipeline import build_world, evaluate

    torch.set_num_threads(1)
    world = build_world(config, seed)
    sae, corpus, mask = world.sae, world.corpus, world.mask
    with torch.no_grad():
        z = sae.encode(world.states)  # (N, L, d_sae)
    quality = sae_quality(sae, world.states[mask])
    rates = activation_rates(z, mask, config.selection_rule)
    emotion = np.array(corpus.emotions)
    neutral = torch.as_tensor(emotion == "neutral")
    sentence_z = (z * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)  # (N, d_sae) mean per sentence

    texts = random_texts(config.n_val + config.n_test, np.random.default_rng(derive(seed, "eval")))
    val, test = texts[: config.n_val], texts[config.n_val :]
    base = evaluate(world, test, "neutral")
    out: dict[str, float] = {
        "sae_explained_variance": quality.explained_variance,
        "sae_dead_features": float(quality.dead_features),
        "sae_l0": quality.l0,
        "tts_final_loss": float(world.tts_losses[-50:].mean()),
        "unsteered_content": float(base.content.mean()),
    }
    g = torch.Generator().manual_seed(derive(seed, "random_features"))
    for e in TARGETS:
        is_e = torch.as_tensor(emotion == e)
        F = select_features(emotion_scores(rates[is_e], rates[neutral]), config.m)  # F_e, best first
        c = mean_active_values(z[is_e][mask[is_e]])  # c_j on the target emotion's frames
        unit = (c[F] @ sae.W_dec[F]).norm().item()  # ||delta h|| of "add" steering at strength 1
        md = mean_difference(world.states[is_e][mask[is_e]], world.states[neutral][mask[neutral]])

        def sae_hook(alpha, features=F, c=c):
            return feature_intervention(sae, features, "add", alpha, c)

        def md_hook(alpha, md=md, unit=unit):
            return global_steering(md, alpha * unit)

        chosen = {}
        for name, make in (("sae", sae_hook), ("global", md_hook)):
            curve = []
            for alpha in config.alphas:
                ev = evaluate(world, val, "neutral", make(alpha))
                curve.append((alpha, ev.prob(e), float(ev.content.mean())))
                out[f"val_{name}_{e}_prob_a{alpha:g}"] = curve[-1][1]
                out[f"val_{name}_{e}_content_a{alpha:g}"] = curve[-1][2]
            chosen[name] = _operating_point(curve, config.content_floor)
            out[f"{name}_{e}_alpha"] = chosen[name]
        a = chosen["sae"]
        alive = (c > 0).nonzero().squeeze(1)
        dead = torch.as_tensor(sorted(set(range(sae.d_sae)) - set(alive.tolist())), dtype=torch.long)
        rand = random_features(sae, config.m, torch.cat([F, dead]), g)
        conditions = {
            "sae": evaluate(world, test, "neutral", sae_hook(a)),
            "global": evaluate(world, test, "neutral", md_hook(chosen["global"])),
            "top1": evaluate(world, test, "neutral", sae_hook(a, F[:1])),
            "random": evaluate(world, test, "neutral", sae_hook(a, rand)),
            "label": evaluate(world, test, e),
            "suppressed": evaluate(world, test, e, feature_intervention(sae, F, "scale", 1.0)),
        }
        for name, ev in conditions.items():
            out[f"{name}_{e}_prob"] = ev.prob(e)
            out[f"{name}_{e}_content"] = float(ev.content.mean())
        out[f"unsteered_{e}_prob"] = base.prob(e)
        out[f"label_{e}_neutral_prob"] = conditions["label"].prob("neutral")
        out[f"suppressed_{e}_neutral_prob"] = conditions["suppressed"].prob("neutral")
        # acoustic attribution: sentence-mean activation of each selected feature vs audio mean log2 F0
        r = np.array([pearsonr(sentence_z[:, j].numpy(), world.analysis_features[:, 0])[0] for j in F.tolist()])
        r = np.nan_to_num(r)  # a feature that never fires has no correlation
        best = int(np.abs(r).argmax())
        out[f"f0_{e}_best_r"] = float(r[best])
        single = evaluate(world, test, "neutral", sae_hook(max(config.alphas), F[best : best + 1]))
        out[f"f0_{e}_shift_log2"] = float(single.log2_f0.mean() - base.log2_f0.mean())
    for name in ("sae", "global", "top1", "random", "label", "unsteered"):
        out[f"{name}_target_prob"] = float(np.mean([out[f"{name}_{e}_prob"] for e in TARGETS]))
    out["induction_target_prob"] = out["sae_target_prob"]
    out["induction_content"] = float(np.mean([out[f"sae_{e}_content"] for e in TARGETS]))
    out["global_content"] = float(np.mean([out[f"global_{e}_content"] for e in TARGETS]))
    out["suppression_neutral_gain"] = float(
        np.mean([out[f"suppressed_{e}_neutral_prob"] - out[f"label_{e}_neutral_prob"] for e in TARGETS])
    )
    out["sae_minus_global_target_prob"] = out["sae_target_prob"] - out["global_target_prob"]
    out["topm_minus_top1_target_prob"] = out["sae_target_prob"] - out["top1_target_prob"]
    out["random_abs_effect"] = float(
        np.mean([abs(out[f"random_{e}_prob"] - out[f"unsteered_{e}_prob"]) for e in TARGETS])
    )
    out["f0_best_abs_r"] = float(max(abs(out[f"f0_{e}_best_r"]) for e in TARGETS))
    out["f0_sign_agreement"] = float(
        np.mean([np.sign(out[f"f0_{e}_shift_log2"]) == np.sign(out[f"f0_{e}_best_r"]) for e in TARGETS])
    )
    return out


def measure(config: Config, out_dir: Path) -> dict[str, list[float]]:
    """Per-seed metrics for the claims and the README tables; seeds run in ``config.workers`` processes."""
    log = get_logger("emotion-sae")
    out = run_seeds(
        measure_seed,
        config,
        config.seeds,
        config.workers,
        log,
        show=lambda k: k.endswith("target_prob") or k in ("induction_content", "sae_explained_variance"),
    )
    _figure(out, config, out_dir)
    return out


def _figure(out: dict[str, list[float]], config: Config, out_dir: Path) -> None:
    """Target probability per condition and emotion; the validation sweeps (probability vs content)."""
    fig, axes = new_figure(ncols=2, size=(4.6, 3.4))
    axes = axes.ravel()
    conditions = ("unsteered", "random", "top1", "global", "sae", "label")
    width = 0.8 / len(conditions)
    for i, name in enumerate(conditions):
        means = [np.mean(out[f"{name}_{e}_prob"]) for e in TARGETS]
        axes[0].bar(np.arange(len(TARGETS)) + i * width, means, width, label=name)
    axes[0].axhline(0.25, color="k", ls=":", lw=0.8)
    axes[0].set_xticks(np.arange(len(TARGETS)) + 0.4 - width / 2, TARGETS)
    axes[0].set(ylabel="SER P(target), test texts", title="induction from neutral prompts")
    axes[0].legend(fontsize=7)
    for name, marker in (("sae", "o"), ("global", "s")):
        for e, color in zip(TARGETS, ("tab:orange", "tab:red", "tab:blue")):
            p = [np.mean(out[f"val_{name}_{e}_prob_a{a:g}"]) for a in config.alphas]
            cont = [np.mean(out[f"val_{name}_{e}_content_a{a:g}"]) for a in config.alphas]
            axes[1].plot(cont, p, marker=marker, color=color, ls="-" if name == "sae" else "--", label=f"{name} {e}")
    axes[1].axvline(config.content_floor, color="k", ls=":", lw=0.8)
    axes[1].set(xlabel="content accuracy (validation)", ylabel="P(target)", title=f"strength sweep {config.alphas}")
    axes[1].legend(fontsize=6)
    save_figure(fig, out_dir / "emotion_sae_claims.png")


def build(config: Config) -> DryRun:
    """The dry run: the config's TTS backbone and top-k SAE (the speech is synthesised: nothing to download);
    the step is one AdamW step of ``train_tts`` on one batch of ``tts_batch`` generated utterances (tokenised
    by k-means with the config's ``n_tokens`` fit on that batch's frames, not the 50000-frame fit of a run),
    then one Adam step of ``train_sae`` on their residuals at the hooked layer.

    Estimates: a forward pass costs 2 P flops per token, training 3 passes, over sequences of
    ``PROMPT_LEN + MAX_FRAMES + 1`` tokens; the SAE's dense encoder and decoder cost 6 P_sae per row. Each
    generated utterance costs one forward pass over its sequence (KV cache); per seed: the unsteered test set,
    and per target emotion the validation sweep (2 steerings x alphas) and 7 test conditions."""
    import torch

    from .backbone import PROMPT_LEN, TinyTTS, train_tts
    from .data import EMOTIONS, MAX_FRAMES, SemanticTokenizer
    from .method import TopKSAE, train_sae
    from .pipeline import corpus_states, make_corpus, sequences

    tts = TinyTTS(config.n_tokens, config.d_model, config.n_layers, config.n_heads)
    sae = TopKSAE(config.d_model, config.d_sae, config.k, torch.Generator().manual_seed(0))
    p_tts, p_sae = (sum(p.numel() for p in m.parameters()) for m in (tts, sae))
    tokens = PROMPT_LEN + MAX_FRAMES + 1
    targets = len(EMOTIONS) - 1
    generated = config.n_test + targets * (2 * len(config.alphas) * config.n_val + 7 * config.n_test)
    per_seed = (
        6.0 * p_tts * tokens * config.tts_batch * config.tts_steps
        + 6.0 * p_sae * config.sae_batch * config.sae_steps
        + 2.0 * p_tts * tokens * (generated + 4 * config.n_analysis_texts)
    )
    # activations kept for backward per sequence: ~16 (tokens, d) tensors and a (heads, tokens, tokens) map per block
    per_sequence = 4.0 * config.n_layers * (16 * tokens * config.d_model + config.n_heads * tokens**2)
    states = 4.0 * 4 * config.n_analysis_texts * tokens * config.d_model  # the analysis corpus' residuals

    def step(device: str) -> None:
        corpus = make_corpus(max(1, config.tts_batch // len(EMOTIONS)), np.random.default_rng(0))
        corpus.tokenize(SemanticTokenizer.fit(np.concatenate(corpus.frames), config.n_tokens, 0))
        g = torch.Generator().manual_seed(0)
        train_tts(tts, sequences(tts, corpus), 1, config.tts_batch, config.tts_lr, g)
        h, mask = corpus_states(tts.eval(), corpus, config.layer)
        train_sae(sae, h[mask], 1, config.sae_batch, config.sae_lr, g)

    return DryRun(
        summary=f"TTS transformer (d {config.d_model}, {config.n_layers} layers, {config.n_tokens} semantic tokens, "
        f"{tokens}-token sequences), {config.tts_steps} steps of batch {config.tts_batch}; top-{config.k} SAE "
        f"{config.d_model} -> {config.d_sae} at layer {config.layer}, {config.sae_steps} steps; "
        f"{4 * config.n_train_texts} training utterances, {len(config.seeds)} seeds, {config.workers} workers",
        parameters=p_tts + p_sae,
        memory_bytes=config.workers * (16.0 * (p_tts + p_sae) + per_sequence * config.tts_batch + 2 * states),
        flops=per_seed * len(config.seeds),
        step=step,
        step_memory_bytes=16.0 * (p_tts + p_sae) + per_sequence * config.tts_batch,
        # one TTS and one SAE step at ~10 GFLOP/s, + ~1 CPU s for the k-means tokenizer of the batch
        step_cpu_seconds=(6.0 * p_tts * tokens * config.tts_batch + 6.0 * p_sae * config.sae_batch) / 1e10 + 1.0,
        devices=("cpu",),  # the pipeline keeps its tensors on the CPU
    )


EXPERIMENT = Experiment(name="emotion-sae", configs=CONFIGS, claims=CLAIMS, measure=measure, build=build)


def run(config: Config | str = "quick", out_dir: Path | None = None):
    """Run the reproduction under ``config`` (a name or a Config); writes ``results.json`` and the figure."""
    return EXPERIMENT.run(config, out_dir)
