"""Seeding: ``seed_everything`` seeds python, numpy, torch and jax (where installed) and returns
explicit generators; ``derive`` makes independent, reproducible sub-seeds from names."""

from __future__ import annotations

import hashlib
import importlib.util
import random
from dataclasses import dataclass
from typing import Any

import numpy as np

from .validation import check_int, fail

SEED_BITS = 32  # a sub-seed fits every framework's seed argument (torch, jax, numpy, python)


def derive(seed: int, *names: str | int) -> int:
    """A sub-seed for the stream named by ``names``: a hash of (seed, *names), in [0, 2**32).

    ``derive(0, "data")`` and ``derive(0, "model")`` are independent streams of the same run; the same
    arguments always give the same sub-seed, on every machine.
    """
    check_int("seed", seed, 0)
    for n in names:
        if not isinstance(n, str | int) or isinstance(n, bool):
            raise fail("names", n, "strings or integers")
    text = "\x1f".join([str(seed), *(f"{type(n).__name__}:{n}" for n in names)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little") % (1 << SEED_BITS)


@dataclass(frozen=True)
class Seeded:
    """What ``seed_everything`` hands back: explicit generators to pass on, never global state."""

    seed: int
    rng: np.random.Generator
    torch_generator: Any = None  # torch.Generator when torch is installed
    jax_key: Any = None  # jax.random.PRNGKey when jax is installed and already imported


def seed_everything(seed: int) -> Seeded:
    """Seed python's ``random``, numpy's legacy global state, torch (CPU and CUDA) and return explicit
    generators. jax has no global state: its key is returned when jax is installed."""
    check_int("seed", seed, 0, (1 << SEED_BITS) - 1)
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - legacy global state, for third-party code that reads it
    torch_generator = None
    if importlib.util.find_spec("torch") is not None:
        import torch

        torch.manual_seed(seed)  # also seeds every CUDA device
        torch_generator = torch.Generator().manual_seed(seed)
    jax_key = None
    if importlib.util.find_spec("jax") is not None:
        import jax

        jax_key = jax.random.PRNGKey(seed)
    return Seeded(seed=seed, rng=np.random.default_rng(seed), torch_generator=torch_generator, jax_key=jax_key)
