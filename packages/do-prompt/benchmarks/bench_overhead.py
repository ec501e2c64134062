"""Training-step cost of Do-Prompt over its MaPLe host (the abstract: "negligible computational overhead").

Times full-batch training steps (80 images = 16 shots x 5 classes, real MiniLM text tower, untrained image
tower: the cost does not depend on the weights) of MaPLe, Do-Prompt and its two ablations, interleaved in
one run on one torch thread (as the experiment runs), and test-time inference (the posterior mean: the same
network as the host). Times are CPU seconds, steadier than wall time beside other work.
A ratio is MaPLe's time / the learner's: below 1 is Do-Prompt's overhead.

Run: python packages/do-prompt/benchmarks/bench_overhead.py [--tiny] [--out results]
"""

from __future__ import annotations

import time

import torch
from icml26_do_prompt import DoPrompt, FrozenCLIP, ImageTower, MaPLe, TextTower
from icml26_shared.bench import Benchmark, Case, bench_main, interleaved_seconds

NAMES = ["zero", "one", "two", "three", "four"]


def run(tiny: bool) -> Benchmark:
    """Median step and inference times of each learner against MaPLe's, interleaved round by round."""
    names, n_images, rounds = (NAMES[:2], 4, 1) if tiny else (NAMES, 80, 15)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(0)
        text = TextTower()
        clip = FrozenCLIP(text, ImageTower(embed_dim=text.width))
        tokens = clip.image.tokens(torch.rand(n_images, 3, 16, 16, dtype=text.dtype))
        y = torch.arange(n_images) % len(names)
        learners = {
            "MaPLe": MaPLe(clip),
            "MaPLe + bottleneck": DoPrompt(MaPLe(clip), lam=0.0),
            "MaPLe + interventions": DoPrompt(MaPLe(clip), beta=0.0, variational=False),
            "Do-Prompt": DoPrompt(MaPLe(clip)),
        }

        def step(learner):
            return lambda: learner.loss(clip, tokens, y, names)[0].backward()

        def infer(learner):
            return lambda: learner.logits(clip, tokens, names)

        steps = dict(
            zip(
                learners,
                interleaved_seconds([step(x) for x in learners.values()], rounds, time.process_time),
                strict=True,
            )
        )
        with torch.no_grad():
            inference = interleaved_seconds(
                [infer(learners[k]) for k in ("MaPLe", "Do-Prompt")], rounds, time.process_time
            )
    finally:
        torch.set_num_threads(threads)
    cases = [Case(f"training step, {name}", "MaPLe", steps[name], steps["MaPLe"]) for name in list(learners)[1:]]
    cases.append(Case("inference (posterior mean)", "MaPLe", inference[1], inference[0]))
    return Benchmark(
        f"Do-Prompt and its ablations vs their MaPLe host, median CPU time of a full-batch step on {n_images} images "
        f"({len(names)} classes, MiniLM text tower), one thread",
        tuple(cases),
        threads=1,
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("do-prompt", run))
