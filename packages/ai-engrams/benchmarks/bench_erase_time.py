"""Cost of forgetting one class: closed-form engram erasure vs gradient ascent to the same forgetting level.

The paper's point is that engram edits need "no iterative optimization". On a digits MLP (seed 0) this times,
for every class, (a) the engram path: statistics of the class and of the training set, one pinv per layer,
the edit; (b) gradient ascent until the class's training accuracy is at the engram's level. One case per
class, ratio GA / engram measured in this run; the notes give GA's mean step count.

Run: python packages/ai-engrams/benchmarks/bench_erase_time.py [--tiny] [--out results]
"""

from __future__ import annotations

import time

import torch
from icml26_ai_engrams import MLP, class_accuracy, collect_statistics, compute_engram, erase, train_classifier
from icml26_ai_engrams.baselines import gradient_ascent
from icml26_ai_engrams.data import load_digits_split
from icml26_shared.bench import Benchmark, Case, bench_main

EPOCHS, TINY_EPOCHS = 40, 2
CLASSES, TINY_CLASSES = 10, 2
GA_MAX_STEPS, TINY_GA_MAX_STEPS = 300, 5


def run(tiny: bool) -> Benchmark:
    """Time both ways of forgetting each class (one thread); the ratio is GA's time / the engram's."""
    torch.set_num_threads(1)
    X, y, _, _ = map(torch.from_numpy, load_digits_split(seed=0))
    torch.manual_seed(0)
    model = train_classifier(MLP(64, (128, 128), 10), X, y, epochs=TINY_EPOCHS if tiny else EPOCHS, seed=0)
    cases, steps = [], 0
    for c in range(TINY_CLASSES if tiny else CLASSES):
        X_c, y_c = X[y == c], y[y == c]
        start = time.perf_counter()
        edited = erase(model, compute_engram(model, collect_statistics(model, X_c), collect_statistics(model, X)))
        engram_s = time.perf_counter() - start
        level = class_accuracy(edited, X_c, y_c, 10)[c]
        start = time.perf_counter()
        _, n = gradient_ascent(
            model,
            X_c,
            y_c,
            1e-2,
            TINY_GA_MAX_STEPS if tiny else GA_MAX_STEPS,
            stop=lambda m, X_c=X_c, y_c=y_c, c=c, level=level: class_accuracy(m, X_c, y_c, 10)[c] <= level,
        )
        cases.append(
            Case(f"digit {c}", "gradient ascent to the same forgetting", engram_s, time.perf_counter() - start)
        )
        steps += n
    return Benchmark(
        "engram erasure of one digits class (statistics + pinv + edit) vs gradient ascent stopped at the same "
        "training accuracy of the class, one thread",
        tuple(cases),
        notes=f"gradient ascent: {steps / len(cases):.1f} steps per class (each with the stop check)",
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("ai-engrams", run))
