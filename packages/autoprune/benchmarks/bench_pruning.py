"""Pruning wall time per method on SmolLM2-135M-Instruct, and mask-application throughput.

Prints seconds per method (every Linear of the 30 decoder blocks, 4 x 128 calibration tokens of Shakespeare)
as ratios to magnitude pruning, and the weights/s of applying the masks in place (``apply_masks``) against
``torch.nn.utils.prune.custom_from_mask`` (the library's mask API), both measured in this run.
Usage: python packages/autoprune/benchmarks/bench_pruning.py [--blocks 30]
"""

import argparse
import time

import torch
from icml26_autoprune import MAGNITUDE, WANDA, allocate, apply_masks, decoder_blocks
from icml26_autoprune.model import block_inputs
from icml26_autoprune.pruning import dense_statistics, prune_blocks
from icml26_shared import load_smollm2
from icml26_shared.llm import shakespeare_ids
from torch.nn.utils import prune


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(2)
    model, tokenizer = load_smollm2()
    blocks = decoder_blocks(model)[: args.blocks]
    dense = {k: v.clone() for k, v in model.state_dict().items()}
    calib = shakespeare_ids(tokenizer, 100_000)[: 4 * 128].reshape(4, 128)
    hidden, kwargs = block_inputs(model, calib)
    methods = {
        "magnitude": lambda: prune_blocks(blocks, hidden, [0.5] * len(blocks), MAGNITUDE, "layer", block_kwargs=kwargs),
        "wanda": lambda: prune_blocks(blocks, hidden, [0.5] * len(blocks), WANDA, block_kwargs=kwargs),
        "wanda 2:4": lambda: prune_blocks(
            blocks, hidden, [0.0] * len(blocks), WANDA, pattern=(2, 4), block_kwargs=kwargs
        ),
        "wanda+owl": lambda: prune_blocks(
            blocks, hidden, allocate("owl", dense_statistics(blocks, hidden, kwargs), 0.7), WANDA, block_kwargs=kwargs
        ),
        "wanda+sdsa": lambda: prune_blocks(
            blocks, hidden, allocate("sdsa", dense_statistics(blocks, hidden, kwargs), 0.7), WANDA, block_kwargs=kwargs
        ),
    }
    seconds, masks = {}, None
    for name, run in methods.items():
        model.load_state_dict(dense)
        start = time.perf_counter()
        result = run()
        seconds[name] = time.perf_counter() - start
        masks = masks or result.masks
    for name, s in seconds.items():
        print(f"{name:<12} {s:7.2f} s   x{s / seconds['magnitude']:.2f} vs magnitude")
    weights = sum(m.numel() for m in masks.values())
    start = time.perf_counter()
    apply_masks(blocks, masks)
    ours = time.perf_counter() - start
    named = dict(blocks.named_modules())
    start = time.perf_counter()
    for key, mask in masks.items():
        prune.custom_from_mask(named[key], "weight", mask)
    library = time.perf_counter() - start
    print(f"apply_masks        {weights / ours / 1e6:8.1f} M weights/s")
    print(
        f"custom_from_mask   {weights / library / 1e6:8.1f} M weights/s   (apply_masks is x{library / ours:.2f} faster)"
    )


if __name__ == "__main__":
    main()
