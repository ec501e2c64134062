"""Training throughput (subgraphs per second) and trainable parameters: PENCIL vs the featureless GCN.

PENCIL trains on sampled subgraphs (sampling + tokens + encoder, all included in its time); the GCN
trains full-graph, so its throughput is the number of scored training pairs per second. Also prints the
parameter counts of PENCIL, the featureless GCN and an ID-embedding GCN at the same width, on Cora.

    python packages/pencil/benchmarks/bench_throughput.py [--pairs 1024] [--d 64] [--layers 2]
"""

import argparse
import time

import torch
from icml26_pencil import (
    GCNLinkPredictor,
    Pencil,
    Sampling,
    Training,
    planetoid_edges,
    split_edges,
    train_gcn,
    train_link,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1024, help="positive training edges per epoch")
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    edges, n = planetoid_edges("cora")
    graph = split_edges(edges, n, seed=0).train
    sampling = Sampling(2, 4, 42)
    torch.manual_seed(0)
    pencil = Pencil(42, args.d, args.layers, 4, 2 * args.d)
    start = time.perf_counter()
    train_link(pencil, graph, sampling, Training(epochs=1, batch_size=128, lr=1e-3, pairs_per_epoch=args.pairs), 0)
    pencil_rate = 2 * args.pairs / (time.perf_counter() - start)
    gcn = GCNLinkPredictor(args.d, args.layers)
    start = time.perf_counter()
    train_gcn(gcn, graph, epochs=5, lr=1e-2, seed=0, batch_size=1 << 16)
    gcn_rate = 5 * 2 * graph.num_edges / (time.perf_counter() - start)
    id_gcn = GCNLinkPredictor(args.d, args.layers, num_nodes=n)
    print(f"{'model':<22} {'pairs/s':>10} {'params':>10}")
    print(f"{'PENCIL':<22} {pencil_rate:>10.0f} {pencil.num_parameters():>10d}")
    print(f"{'GCN (featureless)':<22} {gcn_rate:>10.0f} {gcn.num_parameters():>10d}")
    print(f"{'GCN (ID embeddings)':<22} {'':>10} {id_gcn.num_parameters():>10d}")
    print(f"throughput ratio PENCIL / GCN: {pencil_rate / gcn_rate:.3f}")
    print(
        f"parameter ratio PENCIL / GCN: {pencil.num_parameters() / gcn.num_parameters():.2f}; "
        f"ID-GCN / PENCIL: {id_gcn.num_parameters() / pencil.num_parameters():.2f}"
    )
    ppa_nodes = 576_289  # ogbl-ppa, where ID-embedding models pay n * d parameters
    print(f"an ID embedding table alone on ogbl-ppa at d={args.d}: {ppa_nodes * args.d:,} parameters")


if __name__ == "__main__":
    main()
