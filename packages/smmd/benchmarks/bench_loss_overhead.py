"""Cost of the auxiliary numeric losses: time of loss forward + backward as a ratio to cross-entropy alone.

LLM-sized logits (B, T, V = 32768) whose numeric sub-vocabulary holds N integers (N = 10 for digit-level
tokenizers, 1000 for 0..999), a quarter of the targets numeric. CE, CE + NTL-WAS and CE + SMMD are timed
interleaved in one process (median over rounds), so background load affects all alike. The paper makes no
speed claim; this measures the loss's own overhead (a model's forward/backward is not included).

    python packages/smmd/benchmarks/bench_loss_overhead.py [--rounds 10] [--vocab 32768]
"""

import argparse
import statistics
import time

import torch
from icml26_smmd import NumberTokenLoss, NumericTargetObjective, NumericVocab, SMMDLoss


def seconds(objective, logits, targets, steps: int) -> float:
    """Mean wall seconds of ``steps`` forward + backward passes of ``objective``."""
    start = time.perf_counter()
    for _ in range(steps):
        x = logits.detach().requires_grad_()
        objective(x, targets).backward()
    return (time.perf_counter() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--n-numeric", type=int, nargs="+", default=[10, 1000])
    parser.add_argument("--vocab", type=int, default=32768)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--length", type=int, default=64)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    print(
        f"torch {torch.__version__}, 1 thread, logits ({args.batch}, {args.length}, {args.vocab}), 25% numeric targets"
    )
    print("| V_num | V | CE (ms) | CE + NTL-WAS | CE + SMMD |")
    print("|---|---|---|---|---|")
    V = args.vocab
    for n in args.n_numeric:
        vocab = NumericVocab(range(n), range(100, 100 + n), V)  # integers 0..n-1 as tokens 100..
        logits = torch.randn(args.batch, args.length, V)
        targets = torch.randint(0, V, (args.batch, args.length))
        numeric = torch.rand(args.batch, args.length) < 0.25
        targets[numeric] = vocab.token_ids[torch.randint(0, len(vocab), (int(numeric.sum()),))]
        objectives = {
            "CE": NumericTargetObjective(None),
            "NTL-WAS": NumericTargetObjective(NumberTokenLoss(vocab), 0.3),
            "SMMD": NumericTargetObjective(SMMDLoss(vocab), 1.0),
        }
        times = {name: [] for name in objectives}
        for _ in range(args.rounds):
            for name, objective in objectives.items():
                times[name].append(seconds(objective, logits, targets, args.steps))
        med = {name: statistics.median(t) for name, t in times.items()}
        print(
            f"| 0..{n - 1} | {V} | 1.00 ({1e3 * med['CE']:.2f}) | {med['NTL-WAS'] / med['CE']:.2f} "
            f"| {med['SMMD'] / med['CE']:.2f} |"
        )


if __name__ == "__main__":
    main()
