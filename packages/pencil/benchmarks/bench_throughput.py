"""Training throughput and trainable parameters: PENCIL vs the featureless GCN and an ID-embedding GCN.

PENCIL trains on sampled subgraphs (sampling, tokens and encoder all in its time); the GCN trains full-graph,
so its throughput is the number of scored training pairs per second (one positive and one negative per
training edge and epoch). Parameters are compared as float32 bytes (4 per trainable parameter): PENCIL's count
does not depend on the graph, an ID-embedding GCN's grows with the node count. Cora, d=64, 2 layers, one thread.

Run: python packages/pencil/benchmarks/bench_throughput.py [--tiny] [--out results]
"""

from __future__ import annotations

import numpy as np
import torch
from icml26_pencil import (
    GCNLinkPredictor,
    Pencil,
    Sampling,
    Training,
    planetoid_edges,
    powerlaw_cluster_edges,
    split_edges,
    train_gcn,
    train_link,
)
from icml26_shared.bench import Benchmark, Case, bench_main, best_seconds

PAIRS, TINY_PAIRS = 1024, 32  # positive training edges in PENCIL's timed epoch
D, LAYERS = 64, 2
GCN_EPOCHS = 5
OGBL_PPA_NODES = 576_289  # where an ID-embedding model pays n * d parameters


def _graph(tiny: bool) -> tuple[np.ndarray, int, str]:
    """Cora's edges (a generated 300-node power-law cluster graph at tiny size: no data files needed)."""
    if tiny:
        return powerlaw_cluster_edges(300, 3, 0.6, 0), 300, "generated 300-node graph"
    edges, n = planetoid_edges("cora")
    return edges, n, "Cora"


def run(tiny: bool) -> Benchmark:
    """One PENCIL epoch of ``PAIRS`` positives (+ as many negatives) after an untimed warm-up, and
    ``GCN_EPOCHS`` full-graph GCN epochs, each timed once (long enough to be steady); then the parameter bytes."""
    torch.set_num_threads(1)
    edges, n, name = _graph(tiny)
    graph = split_edges(edges, n, seed=0).train
    pairs = TINY_PAIRS if tiny else PAIRS
    torch.manual_seed(0)
    pencil = Pencil(42, D, LAYERS, 4, 2 * D)
    warm_up = Training(epochs=1, batch_size=128, lr=1e-3, pairs_per_epoch=8)
    train_link(pencil, graph, Sampling(2, 4, 42), warm_up, 0)  # first-call imports (the optimiser) stay untimed
    training = Training(epochs=1, batch_size=128, lr=1e-3, pairs_per_epoch=pairs)
    pencil_rate = 2 * pairs / best_seconds(lambda: train_link(pencil, graph, Sampling(2, 4, 42), training, 0), 1)
    gcn = GCNLinkPredictor(D, LAYERS)
    gcn_seconds = best_seconds(lambda: train_gcn(gcn, graph, epochs=GCN_EPOCHS, lr=1e-2, seed=0, batch_size=1 << 16), 1)
    gcn_rate = GCN_EPOCHS * 2 * graph.num_edges / gcn_seconds
    id_gcn = GCNLinkPredictor(D, LAYERS, num_nodes=n)
    pencil_bytes = 4 * pencil.num_parameters()
    case = f"{name}, d={D}, {LAYERS} layers"
    return Benchmark(
        "PENCIL vs a featureless full-graph GCN (training pairs/s) and vs featureless / ID-embedding GCNs "
        "(trainable parameters as float32 bytes), one thread",
        (
            Case(f"{case}: training throughput", "featureless GCN (pairs/s)", pencil_rate, gcn_rate, "items/s"),
            Case(f"{case}: parameters", "featureless GCN (bytes)", pencil_bytes, 4 * gcn.num_parameters(), "B"),
            Case(f"{case}: parameters", "ID-embedding GCN (bytes)", pencil_bytes, 4 * id_gcn.num_parameters(), "B"),
        ),
        notes=f"trainable parameters: PENCIL {pencil.num_parameters():,}, featureless GCN {gcn.num_parameters():,}, "
        f"ID-embedding GCN {id_gcn.num_parameters():,}; an ID table alone on ogbl-ppa at d={D} would be "
        f"{OGBL_PPA_NODES * D:,} parameters",
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("pencil", run))
