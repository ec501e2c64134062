"""Miniature reproduction: train on unlabeled source graphs, detect anomalies zero-shot on unseen graphs.

Per seed: build the source graphs (scikit-learn k-NN graphs, an SBM, PyGOD's gen_1000, all with their
anomalies but without labels), train one GRACE teacher, fit ProMoS, its two ablations and DOMINANT on the
sources, and score every target graph (PyGOD's real graphs and held-out scikit-learn graphs) without any
target label or target training. Claims compare AUROC averaged over the targets, paired per seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from icml26_shared import Claim, Experiment, cached, derive, get_logger, new_figure, save_figure
from icml26_shared import Config as BaseConfig
from icml26_shared.records import DryRun

log = get_logger("promos")

METHODS = ("promos", "no_personalised", "no_prototypes", "dominant", "residual", "teacher_knn")
BASELINES = ("dominant", "residual", "teacher_knn")
INJECTED = ("digits_56789", "wine", "inj_cora", "inj_amazon")  # targets whose anomalies were injected


@dataclass(frozen=True)
class Config(BaseConfig):
    """Everything a run depends on; ProMoS defaults are the official code's (spec section 3)."""

    sources: tuple[str, ...] = ("digits_01234", "breast_cancer", "sbm", "gen_1000")
    targets: tuple[str, ...] = ("digits_56789", "wine", "inj_cora", "inj_amazon", "reddit", "books", "disney", "enron")
    dim: int = 64
    num_experts: int = 20
    num_prototypes: int = 20
    epochs: int = 10
    teacher_epochs: int = 30
    teacher_max_nodes: int = 512
    dominant_epochs: int = 30
    knn: int = 5
    threads: int = 1  # torch and BLAS threads; 1 is 8x faster than 2 on our oversubscribed 2-core machine


CONFIGS = {
    "smoke": Config(
        seeds=(0, 1),
        sources=("iris", "breast_cancer"),
        targets=("wine", "disney"),
        num_experts=4,
        num_prototypes=5,
        epochs=3,
        teacher_epochs=3,
        teacher_max_nodes=128,
        dominant_epochs=2,
    ),
    "quick": Config(seeds=(0, 1, 2)),
    # The budget the README names as missing: the paper config's teacher (200 GRACE epochs on whole-graph
    # contrastive batches of up to 2,048 nodes, vs 30 epochs on 512) and DOMINANT at PyGOD's 100 epochs, on
    # quick's graphs and 3 seeds (beats_residual is decided at -0.026 +- 0.001; zero_shot_injected holds at
    # 0.758 +- 0.003). Cost, measured under load per seed: teacher 3.9 -> ~40 CPU s, DOMINANT 3.5 -> ~12, the
    # three ProMoS fits ~4 and scoring a few: ~60 CPU s per seed, ~3 CPU min for 3 seeds (seeds in sequence).
    "medium": Config(seeds=(0, 1, 2), teacher_epochs=200, teacher_max_nodes=2048, dominant_epochs=100),
    "paper": Config(seeds=(0, 1, 2, 3, 4), teacher_epochs=200, teacher_max_nodes=2048, dominant_epochs=100),
}

CLAIMS = [
    Claim(
        "zero_shot_injected",
        "ProMoS detects injected anomalies on unseen graphs zero-shot: mean AUROC over the injected targets > 0.75.",
        "zero-shot AUROC 90.77 on CiteSeer, 78-92 on injected benchmarks (Table 2); spec section 5 sets 0.75",
        "auroc_injected.promos",
        ">",
        0.75,
    ),
    *(
        Claim(
            f"beats_{b}",
            f"ProMoS's zero-shot AUROC averaged over the unseen targets exceeds the unsupervised {b} baseline's.",
            "ProMoS beats every unsupervised baseline on average (Table 2)",
            f"gap.{b}",
            ">",
            0.0,
        )
        for b in BASELINES
    ),
    Claim(
        "ablation_personalised",
        "Removing the personalised (routed experts) branch lowers the mean zero-shot AUROC.",
        "ablation: the variant without personalised students is worse (ablation table)",
        "gap.no_personalised",
        ">",
        0.0,
    ),
    Claim(
        "ablation_prototypes",
        "Replacing prototype soft-label distillation by feature MSE lowers the mean zero-shot AUROC.",
        "ablation: the variant without prototypes is worse (ablation table)",
        "gap.no_prototypes",
        ">",
        0.0,
    ),
]


def load_graph(name: str, dim: int, seed: int):
    """An aligned graph by name; PyGOD graphs are fixed and their alignment is cached, the others are
    regenerated per seed (their injected anomalies are random)."""
    from .data import Graph, pygod_graph, sbm_graph, sklearn_graph
    from .method import align_graph

    if name.startswith(("digits", "breast_cancer", "wine", "iris", "sbm")):
        rng = np.random.default_rng(derive(seed, "graph", name))
        if name == "sbm":
            return align_graph(sbm_graph(600, 4, 0.05, 0.005, 32, rng), dim)
        base, _, classes = name.partition("_") if name.startswith("digits") else (name, "", "")
        graph = sklearn_graph(base, rng, tuple(int(c) for c in classes) if classes else None)
        return align_graph(graph, dim)
    graph = pygod_graph(name)
    arrays = cached(f"promos/aligned/{name}-d{dim}", lambda: {"x": align_graph(graph, dim).x})
    return Graph(arrays["x"], graph.edge_index, graph.y, name)


def auroc_auprc(y: np.ndarray, score: np.ndarray) -> tuple[float, float]:
    """(AUROC, AUPRC) of scores against 0/1 labels."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    return float(roc_auc_score(y, score)), float(average_precision_score(y, score))


def measure_seed(config: Config, seed: int) -> dict[str, dict[str, tuple[float, float]]]:
    """method -> target -> (AUROC, AUPRC) for one seed."""
    import torch

    from .baselines import Dominant, residual_score, teacher_knn_score
    from .method import ProMoS
    from .teacher import train_teacher

    sources = [load_graph(n, config.dim, seed) for n in config.sources]
    targets = [load_graph(n, config.dim, seed) for n in config.targets]
    teacher = train_teacher(
        sources,
        out_dim=config.dim,
        epochs=config.teacher_epochs,
        max_nodes=config.teacher_max_nodes,
        seed=derive(seed, "teacher"),
    )
    common = dict(dim=config.dim, num_experts=config.num_experts, num_prototypes=config.num_prototypes)
    variants = {"promos": {}, "no_personalised": {"personalised": False}, "no_prototypes": {"prototypes": False}}
    scorers = {
        name: ProMoS(**common, **kw, epochs=config.epochs, seed=derive(seed, "promos"))
        .fit(sources, teacher)
        .decision_function
        for name, kw in variants.items()
    }
    dominant = Dominant(dim=config.dim, epochs=config.dominant_epochs, seed=derive(seed, "dominant"))
    scorers["dominant"] = dominant.fit(sources).decision_function
    scorers["residual"] = residual_score
    t_sources = torch.cat([teacher.embed(g) for g in sources])
    scorers["teacher_knn"] = lambda g: teacher_knn_score(teacher.embed(g), t_sources, config.knn)
    return {m: {g.name: auroc_auprc(g.y, scorers[m](g)) for g in targets} for m in METHODS}


def measure(config: Config, out_dir: Path) -> dict[str, list[float]]:
    """Per-seed AUROC/AUPRC of every method on every target, their means and the paired claim gaps."""
    import torch
    from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

    threads = torch.get_num_threads()
    torch.set_num_threads(config.threads)
    try:
        with threadpool_limits(config.threads):
            runs = [measure_seed(config, seed) for seed in config.seeds]
    finally:
        torch.set_num_threads(threads)
    for seed, r in zip(config.seeds, runs, strict=True):
        log.info(
            "seed %d: mean AUROC %s",
            seed,
            {m: round(float(np.mean([a for a, _ in r[m].values()])), 3) for m in METHODS},
        )
    injected = [t for t in config.targets if t in INJECTED]
    metrics: dict[str, list[float]] = {}
    for m in METHODS:
        for t in config.targets:
            metrics[f"auroc.{m}.{t}"] = [r[m][t][0] for r in runs]
            metrics[f"auprc.{m}.{t}"] = [r[m][t][1] for r in runs]
        metrics[f"auroc_mean.{m}"] = [float(np.mean([r[m][t][0] for t in config.targets])) for r in runs]
        metrics[f"auprc_mean.{m}"] = [float(np.mean([r[m][t][1] for t in config.targets])) for r in runs]
        metrics[f"auroc_injected.{m}"] = [
            float(np.mean([r[m][t][0] for t in injected])) if injected else float("nan") for r in runs
        ]
    for m in METHODS[1:]:
        metrics[f"gap.{m}"] = [
            a - b for a, b in zip(metrics["auroc_mean.promos"], metrics[f"auroc_mean.{m}"], strict=True)
        ]
    plot(config, metrics, out_dir)
    return metrics


def plot(config: Config, metrics: dict[str, list[float]], out_dir: Path) -> None:
    """Grouped bars: mean zero-shot AUROC (error bar = std over seeds) per target and method."""
    fig, ax = new_figure(size=(max(6.0, 1.1 * len(config.targets)), 3.4))
    width = 0.8 / len(METHODS)
    x = np.arange(len(config.targets))
    for i, m in enumerate(METHODS):
        values = np.array([metrics[f"auroc.{m}.{t}"] for t in config.targets])
        ax.bar(x + i * width, values.mean(1), width, yerr=values.std(1), label=m)
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_xticks(x + 0.4 - width / 2, config.targets, rotation=30, ha="right")
    ax.set_ylabel("zero-shot AUROC")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7, ncol=3)
    save_figure(fig, out_dir / "auroc_per_target.png")


STAND_IN_NODES = 1000  # a missing PyGOD source graph is stood in for by a graph of gen_1000's size
NODES_PER_GRAPH = 1000  # [INF] for the estimates: the sources have 569-1,000 nodes
LARGEST_GRAPH = (13_752, 767)  # inj_amazon, the largest target (PyGOD's table): nodes x raw features


def build(config: Config) -> DryRun:
    """The dry run: the step is one seed's pipeline at one epoch: one GRACE teacher step per source graph
    (``train_teacher`` on ``teacher_max_nodes``-node contrastive batches), one ProMoS step per source graph
    (``ProMoS.fit``, 20 experts, 20 prototypes) and the zero-shot scores of the first target. The source graphs
    are the real ones (scikit-learn, SBM) and stand-ins of gen_1000's size for PyGOD graphs not yet
    downloaded (named as missing, with their sizes)."""
    import torch

    from .data import Graph, knn_edges, pygod_missing
    from .method import MixtureOfStudents, ProMoS
    from .teacher import GCNEncoder, train_teacher

    d = config.dim
    m = min(config.teacher_max_nodes, NODES_PER_GRAPH)  # GRACE's batch: at most the graph's nodes
    missing = pygod_missing(config.sources + config.targets)
    absent = {item.name.removeprefix("PyGOD graph ") for item in missing}
    students = MixtureOfStudents(d, config.num_experts)
    teacher_params = sum(p.numel() for p in GCNEncoder(d, 128, d).parameters())
    # + adapter (d x d + d), tau, and two prototype groups of K x d
    promos_params = sum(p.numel() for p in students.parameters()) + d * d + d + 1 + 2 * config.num_prototypes * d
    # per node, training costs ~6 flops per weight of the active path (generalist + top-2 experts + router); the
    # GRACE loss adds 4 similarity matrices of m^2 x d multiply-adds (2 flops), x 3 for forward and backward
    active = 3 * (2 * d * 128) + d * config.num_experts
    teacher_step = 6.0 * teacher_params * 2 * NODES_PER_GRAPH + 2 * 4 * m * m * d * 3
    promos_step = 6.0 * active * NODES_PER_GRAPH
    per_seed = len(config.sources) * (config.teacher_epochs * teacher_step + 3 * config.epochs * promos_step)

    def source(name: str, seed: int) -> Graph:
        if name not in absent:
            return load_graph(name, d, seed)
        x = np.random.default_rng(seed).standard_normal((STAND_IN_NODES, d)).astype(np.float32)
        return Graph(x, knn_edges(x), name=f"stand-in {name}")

    def step(device: str) -> None:
        threads = torch.get_num_threads()
        torch.set_num_threads(config.threads)
        try:
            sources = [source(name, 0) for name in config.sources]
            teacher = train_teacher(sources, out_dim=d, epochs=1, max_nodes=config.teacher_max_nodes)
            model = ProMoS(dim=d, num_experts=config.num_experts, num_prototypes=config.num_prototypes, epochs=1)
            target = next((t for t in config.targets if t not in absent), None)
            model.fit(sources, teacher).decision_function(source(target, 0) if target else sources[0])
        finally:
            torch.set_num_threads(threads)

    return DryRun(
        summary=f"GRACE teacher (GCN {d}-128-{d}) and ProMoS ({config.num_experts} experts, {config.num_prototypes} "
        f"prototypes, d={d}) on {len(config.sources)} source graphs; zero-shot on {len(config.targets)} targets",
        parameters=teacher_params + promos_params,
        # the largest graph's raw, projected and aligned features, and GRACE's m x m similarities (x 6 with grads)
        memory_bytes=4.0 * LARGEST_GRAPH[0] * (LARGEST_GRAPH[1] + 256 + d) + 4.0 * 6 * m * m,
        flops=per_seed * len(config.seeds),
        step=step,
        step_memory_bytes=4.0 * 6 * m * m + 4.0 * len(config.sources) * NODES_PER_GRAPH * 128 * 8,
        step_cpu_seconds=(teacher_step + 3 * promos_step) * len(config.sources) / 1e9,
        missing=missing,
        devices=("cpu",),  # the graphs' tensors stay on the CPU
    )


EXPERIMENT = Experiment(name="promos", configs=CONFIGS, claims=CLAIMS, measure=measure, build=build)


def run(config: Config | str = "quick", out_dir: Path | None = None):
    """Run the reproduction under ``config`` and write ``results.json`` and the figure into ``out_dir``."""
    return EXPERIMENT.run(config, out_dir)
