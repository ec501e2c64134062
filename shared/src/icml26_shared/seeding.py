"""Seeding: ``seed_everything`` seeds python, numpy, torch and jax (where installed) and returns
explicit generators; ``derive`` makes independent, reproducible sub-seeds from names; ``run_seeds`` runs a
per-seed measurement over the seeds of a run (in worker processes if asked) and collects per-seed metrics;
``run_units`` runs work split finer than seeds (a seed's arms or claims) on forked workers."""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import multiprocessing
import random
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from .validation import check_choice, check_int, fail

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


DEVICES = ("cpu", "cuda", "auto")


def resolve_device(device: str) -> str:
    """The torch device a run uses: ``cpu`` or ``cuda`` as given, ``auto`` -> ``cuda`` when a GPU is visible,
    else ``cpu``; any other name is a ValueError naming it."""
    check_choice("device", device, DEVICES)
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def seed_everything(seed: int) -> Seeded:
    """Seed python's ``random``, numpy's legacy global state, torch (CPU and CUDA) and return explicit
    generators. jax has no global state: its key is returned when jax is installed."""
    check_int("seed", seed, 0, (1 << SEED_BITS) - 1)
    torch_generator = None
    if importlib.util.find_spec("torch") is not None:
        import torch

        torch.manual_seed(seed)  # also seeds every CUDA device
        torch_generator = torch.Generator().manual_seed(seed)
    jax_key = None
    if importlib.util.find_spec("jax") is not None:
        import jax

        jax_key = jax.random.PRNGKey(seed)
    # after the imports: a first import of torch or jax may draw from the global states (it did in a workspace
    # environment with every extra installed, so two calls with one seed gave different numpy draws)
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - legacy global state, for third-party code that reads it
    return Seeded(seed=seed, rng=np.random.default_rng(seed), torch_generator=torch_generator, jax_key=jax_key)


def run_seeds(
    measure_seed: Callable[[Any, int], dict[str, float]],
    config: Any,
    seeds: Sequence[int],
    workers: int = 1,
    logger: logging.Logger | None = None,
    show: Callable[[str], bool] | None = None,
) -> dict[str, list[float]]:
    """``{metric: [value per seed]}`` from ``measure_seed(config, seed)`` for every seed, in seed order.

    With ``workers > 1`` the seeds run in that many spawned processes (``measure_seed`` and ``config`` must be
    picklable; each process should use one torch thread), else in this process. Every seed must return the
    same metrics. ``logger`` gets one line per seed with the metrics for which ``show(name)`` is true.
    """
    check_int("workers", workers, 1)
    if not seeds:
        raise fail("seeds", seeds, "at least one seed")
    if workers == 1 or len(seeds) == 1:
        per_seed = [measure_seed(config, seed) for seed in seeds]
    else:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(min(workers, len(seeds)), mp_context=context) as pool:
            per_seed = list(pool.map(measure_seed, [config] * len(seeds), seeds))
    for seed, values in zip(seeds, per_seed, strict=True):
        if set(values) != set(per_seed[0]):
            raise fail("measure_seed", f"seed {seed}: {sorted(values)}", f"the metrics of seed {seeds[0]}")
        if logger is not None:
            logger.info("seed %d: %s", seed, {k: round(v, 4) for k, v in values.items() if show is None or show(k)})
    return {name: [values[name] for values in per_seed] for name in per_seed[0]}


def run_units(
    measure_unit: Callable[..., Any], config: Any, units: Sequence[Sequence[Any]], workers: int = 1, desc: str = ""
) -> list:
    """``[measure_unit(config, *unit) for unit in units]``, in the units' order (with a progress bar named ``desc``
    on a terminal).

    For work split finer than seeds (a seed's arms, or its claims), so that ``workers`` processes stay busy to
    the end of a run instead of idling while the last seed runs. With ``workers > 1`` the units run in forked
    processes (spawned where the platform cannot fork), which inherit this process's imports and what it built
    before the call (data, cached models), where spawned ones would import torch again; each unit should use one
    torch thread, and the caller should not have run a multi-threaded pool that does not survive a fork (jax, torch
    with more than one thread) before the call. Order units longest first: the last to start then end soon after
    the others.
    """
    check_int("workers", workers, 1)
    units = [tuple(unit) for unit in units]
    from .progress import progress

    if workers == 1 or len(units) <= 1:
        return [measure_unit(config, *unit) for unit in progress(units, desc)]
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    with ProcessPoolExecutor(min(workers, len(units)), mp_context=multiprocessing.get_context(method)) as pool:
        done = pool.map(measure_unit, [config] * len(units), *zip(*units, strict=True))
        return list(progress(done, desc, total=len(units)))
