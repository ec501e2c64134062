import random
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_shared import derive, run_seeds, run_units, seed_everything


@given(st.integers(0, 2**40), st.text(max_size=10), st.text(max_size=10))
def test_derive_is_deterministic_and_in_range(seed, a, b):
    s = derive(seed, a, b)
    assert s == derive(seed, a, b)
    assert 0 <= s < 2**32


def test_derive_separates_streams():
    names = ["data", "model", "noise", 0, 1, "0"]
    seeds = {derive(7, n) for n in names}
    assert len(seeds) == len(names)  # the int 0 and the string "0" are different streams
    assert derive(7, "a", "b") != derive(7, "ab")
    assert derive(1, "data") != derive(2, "data")


def test_seed_everything_reproduces_every_generator():
    first = seed_everything(3)
    a = (random.random(), np.random.rand(), first.rng.random())  # noqa: NPY002
    second = seed_everything(3)
    b = (random.random(), np.random.rand(), second.rng.random())  # noqa: NPY002
    assert a == b


@pytest.mark.parametrize("bad", [-1, 1.5, 2**32, "1"])
def test_bad_seed(bad):
    with pytest.raises(ValueError, match="seed="):
        seed_everything(bad)
    if bad != 2**32:
        with pytest.raises(ValueError, match="seed="):
            derive(bad, "x")


@pytest.mark.parametrize("workers", [1, 2])
def test_run_seeds_collects_metrics_in_seed_order(workers):
    # dict.fromkeys(config, seed) is a picklable measure_seed: {"a": seed, "b": seed}
    assert run_seeds(dict.fromkeys, ("a", "b"), seeds=(3, 1, 2), workers=workers) == {"a": [3, 1, 2], "b": [3, 1, 2]}


def test_run_seeds_rejects_seeds_with_different_metrics():
    with pytest.raises(ValueError, match="measure_seed"):
        run_seeds(lambda config, seed: {f"m{seed}": 1.0}, None, seeds=(0, 1))


@pytest.mark.parametrize(("kwargs", "name"), [({"workers": 0}, "workers"), ({"seeds": ()}, "seeds")])
def test_run_seeds_bad_inputs(kwargs, name):
    args = {"seeds": (0,), **kwargs}
    with pytest.raises(ValueError, match=name):
        run_seeds(dict.fromkeys, ("a",), **args)


def test_resolve_device(monkeypatch):
    """auto follows torch.cuda.is_available (a stand-in torch module: the shared package does not need torch)."""
    from types import SimpleNamespace

    from icml26_shared import resolve_device

    assert resolve_device("cpu") == "cpu" and resolve_device("cuda") == "cuda"
    for visible, expected in ((True, "cuda"), (False, "cpu")):
        fake = SimpleNamespace(cuda=SimpleNamespace(is_available=lambda visible=visible: visible))
        monkeypatch.setitem(sys.modules, "torch", fake)
        assert resolve_device("auto") == expected
    with pytest.raises(ValueError, match="^device='tpu'"):
        resolve_device("tpu")


def _unit(config, seed, arm):
    """A picklable unit that also says which process ran it."""
    import os

    return (config, seed, arm, os.getpid())


@pytest.mark.parametrize("workers", [1, 2])
def test_run_units_returns_each_units_result_in_the_units_order(workers):
    import os

    units = [(s, a) for a in ("long", "short") for s in (2, 0, 1)]
    out = run_units(_unit, "cfg", units, workers)
    assert [r[:3] for r in out] == [("cfg", s, a) for s, a in units]
    assert all((r[3] == os.getpid()) == (workers == 1) for r in out)  # workers > 1: in other processes


def test_run_units_bad_workers():
    with pytest.raises(ValueError, match="workers=0"):
        run_units(_unit, None, [(0, "a")], 0)
