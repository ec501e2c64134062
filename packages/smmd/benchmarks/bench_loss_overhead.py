"""Cost of the SMMD loss against cross-entropy alone and against CE + NTL-WAS: forward + backward of the loss.

LLM-sized logits (B, T, V = 32768) whose numeric sub-vocabulary holds N integers (N = 10 for digit-level
tokenizers such as SmolLM2's, 1000 for 0..999), a quarter of the targets numeric. CE, CE + NTL-WAS and CE + SMMD
are timed interleaved in one process, one torch thread (median over rounds), so background load touches all
alike. The ratio is the baseline's time / CE + SMMD's (< 1: SMMD costs more). The paper makes no speed claim;
this measures the loss's own overhead (a model's forward/backward is not included).

Run: python packages/smmd/benchmarks/bench_loss_overhead.py [--tiny] [--out results]
"""

from __future__ import annotations

import torch
from icml26_shared.bench import Benchmark, Case, bench_main, interleaved_seconds
from icml26_smmd import NumberTokenLoss, NumericTargetObjective, NumericVocab, SMMDLoss

FULL = {"n_numeric": (10, 1000), "vocab": 32768, "batch": 4, "length": 64, "rounds": 10, "steps": 3}
TINY = {"n_numeric": (10, 100), "vocab": 512, "batch": 2, "length": 8, "rounds": 2, "steps": 1}


def _step(objective, logits: torch.Tensor, targets: torch.Tensor, steps: int):
    """``steps`` forward + backward passes of ``objective`` on fresh leaves of ``logits``."""

    def run() -> None:
        for _ in range(steps):
            objective(logits.detach().requires_grad_(), targets).backward()

    return run


def run(tiny: bool) -> Benchmark:
    """Per V_num size, CE + SMMD against CE alone and against CE + NTL-WAS (weight 0.3, the NTL paper's)."""
    size = TINY if tiny else FULL
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    cases, notes = [], []
    try:
        for n in size["n_numeric"]:
            V = size["vocab"]
            vocab = NumericVocab(range(n), range(100, 100 + n), V)  # integers 0..n-1 as tokens 100..
            logits = torch.randn(size["batch"], size["length"], V)
            targets = torch.randint(0, V, (size["batch"], size["length"]))
            numeric = torch.rand(size["batch"], size["length"]) < 0.25
            targets[numeric] = vocab.token_ids[torch.randint(0, len(vocab), (int(numeric.sum()),))]
            objectives = [
                NumericTargetObjective(SMMDLoss(vocab), 1.0),
                NumericTargetObjective(None),
                NumericTargetObjective(NumberTokenLoss(vocab), 0.3),
            ]
            smmd, ce, ntl = interleaved_seconds(
                [_step(o, logits, targets, size["steps"]) for o in objectives], size["rounds"]
            )
            case = f"V_num 0..{n - 1}, logits {size['batch']}x{size['length']}x{V}"
            cases += [Case(case, "CE alone", smmd, ce), Case(case, "CE + NTL-WAS", smmd, ntl)]
            notes.append(f"0..{n - 1}: CE {1e3 * ce / size['steps']:.1f} ms per step")
    finally:
        torch.set_num_threads(threads)
    return Benchmark(
        "CE + SMMD vs CE alone and vs CE + NTL-WAS: seconds of loss forward + backward, one thread",
        tuple(cases),
        notes="; ".join(notes),
        threads=1,
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("smmd", run))
