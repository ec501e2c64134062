"""Cost of forgetting one class: closed-form engram erasure vs gradient ascent to the same forgetting level.

The paper's point is that engram edits need "no iterative optimization". On a digits MLP (seed 0) this times,
for every class, (a) the engram path: statistics of the class and of the training set, one pinv per layer,
the edit; (b) gradient ascent until the class's training accuracy is at the engram's level. Prints the ratio
of the two, measured in this run. Usage: python packages/ai-engrams/benchmarks/bench_erase_time.py
"""

import time

import torch
from icml26_ai_engrams import MLP, class_accuracy, collect_statistics, compute_engram, erase, train_classifier
from icml26_ai_engrams.baselines import gradient_ascent
from icml26_ai_engrams.data import load_digits_split


def main() -> None:
    torch.set_num_threads(1)
    X, y, _, _ = map(torch.from_numpy, load_digits_split(seed=0))
    torch.manual_seed(0)
    model = train_classifier(MLP(64, (128, 128), 10), X, y, epochs=40, seed=0)
    engram_s, ga_s, steps = 0.0, 0.0, 0
    for c in range(10):
        X_c, y_c = X[y == c], y[y == c]
        start = time.perf_counter()
        edited = erase(model, compute_engram(model, collect_statistics(model, X_c), collect_statistics(model, X)))
        engram_s += time.perf_counter() - start
        level = class_accuracy(edited, X_c, y_c, 10)[c]
        start = time.perf_counter()
        _, n = gradient_ascent(
            model,
            X_c,
            y_c,
            1e-2,
            300,
            stop=lambda m, X_c=X_c, y_c=y_c, c=c, level=level: class_accuracy(m, X_c, y_c, 10)[c] <= level,
        )
        ga_s += time.perf_counter() - start
        steps += n
    print(f"engram erasure: {engram_s / 10 * 1e3:.1f} ms per class (statistics + pinv + edit)")
    print(f"gradient ascent to the same forgetting: {ga_s / 10 * 1e3:.1f} ms per class ({steps / 10:.1f} steps)")
    print(f"ratio GA / engram: {ga_s / engram_s:.2f}x")


if __name__ == "__main__":
    main()
