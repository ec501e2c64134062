"""Pruning cost per method against magnitude pruning, mask selection against a stable sort, and mask application
against ``torch.nn.utils.prune.custom_from_mask``, on SmolLM2-135M-Instruct (every Linear of the 30 decoder blocks,
4 x 128 calibration tokens of Shakespeare, 2 threads).

Each case is measured in this run: a pruning method's seconds against magnitude pruning's (ratio < 1: the method
costs more; OWL and SDSA include their dense statistics pass and allocation); ``select_mask`` (selection by
``numpy.partition``) against Wanda's ``torch.sort(stable=True)`` on the same scores, giving the same mask; and
``apply_masks`` against ``custom_from_mask`` on the same masks. ``--tiny`` runs the same code on the planted-outlier
network (no weights needed). Run: python packages/autoprune/benchmarks/bench_pruning.py [--tiny] [--out results]
"""

from __future__ import annotations

import torch
from icml26_autoprune import MAGNITUDE, WANDA, allocate, apply_masks, planted_outlier_network
from icml26_autoprune.pruning import dense_statistics, prune_blocks, select_mask
from icml26_shared.bench import Benchmark, Case, bench_main, best_seconds
from torch.nn.utils import prune

SPARSITY = 0.7


def smollm2_blocks() -> tuple[torch.nn.Module, torch.nn.ModuleList, torch.Tensor, list]:
    """SmolLM2-135M-Instruct, its decoder blocks, and the inputs and arguments of 4 x 128 calibration tokens."""
    from icml26_autoprune.model import block_inputs, decoder_blocks
    from icml26_shared import load_smollm2
    from icml26_shared.llm import shakespeare_ids

    model, tokenizer = load_smollm2()
    calib = shakespeare_ids(tokenizer, 100_000)[: 4 * 128].reshape(4, 128)
    hidden, kwargs = block_inputs(model, calib)
    return model, decoder_blocks(model), hidden, kwargs


def run(tiny: bool) -> Benchmark:
    torch.set_num_threads(2)
    if tiny:
        model = blocks = planted_outlier_network(seed=0, width=32)
        hidden, kwargs = torch.randn(16, 32, generator=torch.Generator().manual_seed(0)), None
    else:
        model, blocks, hidden, kwargs = smollm2_blocks()
    dense = {k: v.clone() for k, v in model.state_dict().items()}
    n = len(blocks)

    def with_allocation(name: str) -> None:
        sparsities = allocate(name, dense_statistics(blocks, hidden, kwargs), SPARSITY)
        prune_blocks(blocks, hidden, sparsities, WANDA, block_kwargs=kwargs)

    methods = {
        "magnitude 50%": lambda: prune_blocks(blocks, hidden, [0.5] * n, MAGNITUDE, "layer", block_kwargs=kwargs),
        "Wanda 50%": lambda: prune_blocks(blocks, hidden, [0.5] * n, WANDA, block_kwargs=kwargs),
        "Wanda 2:4": lambda: prune_blocks(blocks, hidden, [0.0] * n, WANDA, pattern=(2, 4), block_kwargs=kwargs),
        "Wanda+OWL 70%": lambda: with_allocation("owl"),
        "Wanda+SDSA 70%": lambda: with_allocation("sdsa"),
    }
    seconds = {}
    for name, method in methods.items():
        model.load_state_dict(dense)
        seconds[name] = best_seconds(method, repeats=1)  # each from the dense weights, once: seconds apiece
    cases = [Case(f"pruning: {m}", "magnitude 50%", s, seconds["magnitude 50%"]) for m, s in seconds.items()][1:]

    model.load_state_dict(dense)
    linear = max((m for m in blocks.modules() if isinstance(m, torch.nn.Linear)), key=lambda m: m.weight.numel())
    score = linear.weight.detach().abs()
    k = int(score.shape[1] * SPARSITY)

    def stable_sort() -> torch.Tensor:
        lowest = torch.sort(score, dim=-1, stable=True).indices[:, :k]
        return torch.ones_like(score, dtype=torch.bool).scatter_(1, lowest, False)

    assert torch.equal(select_mask(score, SPARSITY), stable_sort())  # the same mask
    shape = "x".join(map(str, score.shape))
    cases.append(
        Case(
            f"row mask at 70% of |W| ({shape})",
            "torch.sort(stable=True)",
            best_seconds(lambda: select_mask(score, SPARSITY), 5),
            best_seconds(stable_sort, 5),
        )
    )

    masks = prune_blocks(blocks, hidden, [0.5] * n, MAGNITUDE, "layer", block_kwargs=kwargs).masks
    model.load_state_dict(dense)
    ours = best_seconds(lambda: apply_masks(blocks, masks), 1)
    named = dict(blocks.named_modules())
    library = best_seconds(lambda: [prune.custom_from_mask(named[key], "weight", m) for key, m in masks.items()], 1)
    cases.append(Case(f"apply {len(masks)} masks in place", "torch.nn.utils.prune.custom_from_mask", ours, library))
    return Benchmark(
        "pruning cost per method vs magnitude pruning; mask selection vs stable sort; mask application vs "
        "torch's prune API" + (" (planted-outlier network, tiny)" if tiny else " (SmolLM2-135M-Instruct)"),
        tuple(cases),
        notes="pruning cases: ratio = magnitude's seconds / the method's (< 1: the method costs more)",
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("autoprune", run))
