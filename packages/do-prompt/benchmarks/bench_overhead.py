"""Training-step cost of Do-Prompt over its MaPLe host (the abstract: "negligible computational overhead").

Times full-batch training steps (80 images = 16 shots x 5 classes, real MiniLM text tower, untrained image
tower: the cost does not depend on the weights) for MaPLe, Do-Prompt and its two ablations, interleaved in
one run, and prints each one's median step time and its ratio to MaPLe's, plus test-time inference (the
posterior mean: the same network as the host).
Run: .venvs/do-prompt/bin/python packages/do-prompt/benchmarks/bench_overhead.py
"""

import statistics
import time

import torch
from icml26_do_prompt import DoPrompt, FrozenCLIP, ImageTower, MaPLe, TextTower

NAMES = ["zero", "one", "two", "three", "four"]
REPEATS = 15


def step_time(learner, clip, tokens, y) -> float:
    start = time.perf_counter()
    loss, _ = learner.loss(clip, tokens, y, NAMES)
    loss.backward()
    return time.perf_counter() - start


def main() -> None:
    torch.set_num_threads(1)  # as the experiment runs
    torch.manual_seed(0)
    text = TextTower()
    clip = FrozenCLIP(text, ImageTower(embed_dim=text.width))
    tokens = clip.image.tokens(torch.rand(80, 3, 16, 16))
    y = torch.arange(80) % 5
    learners = {
        "maple": MaPLe(clip),
        "vib_only": DoPrompt(MaPLe(clip), lam=0.0),
        "do_only": DoPrompt(MaPLe(clip), beta=0.0, variational=False),
        "do_prompt": DoPrompt(MaPLe(clip)),
    }
    times = {name: [] for name in learners}
    for _ in range(REPEATS):  # interleaved, so load changes hit every learner alike
        for name, learner in learners.items():
            times[name].append(step_time(learner, clip, tokens, y))
    base = statistics.median(times["maple"])
    print(f"{'learner':<10} {'step (ms)':>10} {'ratio vs MaPLe':>15}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<10} {1000 * median:>10.1f} {median / base:>15.2f}")
    with torch.no_grad():
        infer = {name: [] for name in ("maple", "do_prompt")}
        for _ in range(REPEATS):
            for name in infer:
                start = time.perf_counter()
                learners[name].logits(clip, tokens, NAMES)
                infer[name].append(time.perf_counter() - start)
    ratio = statistics.median(infer["do_prompt"]) / statistics.median(infer["maple"])
    print(f"inference (80 images): Do-Prompt / MaPLe = {ratio:.2f}")


if __name__ == "__main__":
    main()
