"""Cost of the two-stage tying vs exhaustive finite differences, measured in one run.

On a trained digits DLGN (4 x 1000 gates, 512 calibration samples, 1 torch thread): the Gauss-Newton screen of
every candidate gate (one forward + C backward passes) vs the exact single-tie distortion D({g}) of every
candidate (one bit-parallel discrete forward per gate, the FD stage run on all gates), and the two-stage method
at a 45% area cut vs the FD-only lazy greedy over all candidates (no screen). Each is run once and timed in CPU
seconds (``time.process_time``: one thread, so the time the work took, not the waits of a loaded machine). The
ratios are the exhaustive method's time / ours; the FD evaluation counts and test accuracies are in the notes.

Run: python packages/logic-tying/benchmarks/bench_screening.py [--tiny] [--out results]
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch
from icml26_logic_tying import (
    Calibration,
    LogicNetwork,
    Netlist,
    area_target,
    candidate_gates,
    gauss_newton_order,
    load_digits_bits,
    tie_accuracy,
    train_network,
    unit_tying,
)
from icml26_logic_tying.netlist import no_ties
from icml26_shared.bench import Benchmark, Case, bench_main

FULL = {"widths": (1000,) * 4, "epochs": 30, "calibration": 512}
TINY = {"widths": (40,) * 2, "epochs": 1, "calibration": 64}
CUT = 0.45


def cpu_seconds(fn: Callable[[], Any]) -> tuple[float, Any]:
    """CPU seconds of one call ``fn()`` and its result (``icml26_shared.bench`` times wall clock only)."""
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def run(tiny: bool) -> Benchmark:
    """Train the network, then time the screen vs exhaustive FD and two-stage vs FD-only tying."""
    size = TINY if tiny else FULL
    torch.set_num_threads(1)
    X_train, y_train, X_test, y_test = load_digits_bits()
    net = LogicNetwork(X_train.shape[1], size["widths"], 10, 10.0, seed=0)
    train_network(net, X_train, y_train, epochs=size["epochs"], seed=0)
    netlist = Netlist.from_network(net)
    X_cal = X_train[: size["calibration"]]
    candidates = candidate_gates(netlist)

    t_gn, screening = cpu_seconds(lambda: gauss_newton_order(netlist, X_cal, candidates))
    calibration = Calibration(netlist, X_cal)

    def every_single_tie() -> None:
        for g, layer in zip(candidates, netlist.layer_of(candidates), strict=True):
            mask, value = no_ties(netlist)
            mask[g], value[g] = True, screening[1][g]
            calibration.distortion((mask, value), int(layer), calibration.teacher_states)

    t_fd, _ = cpu_seconds(every_single_tie)
    target = area_target(netlist, CUT)
    t_two, two_stage = cpu_seconds(lambda: unit_tying(netlist, X_cal, target, screening=screening))
    # rho = |candidates|: the overshoot set is every candidate, i.e. the FD greedy without the screen
    t_all, fd_only = cpu_seconds(lambda: unit_tying(netlist, X_cal, target, rho=len(candidates), screening=screening))
    acc = [tie_accuracy(netlist, X_test, y_test, r.ties) for r in (two_stage, fd_only)]
    gates = f"{len(size['widths'])} x {size['widths'][0]} gates"
    return Benchmark(
        f"GN screening / two-stage unit tying vs exhaustive finite differences, CPU seconds on a digits DLGN "
        f"({gates}, {size['calibration']} calibration samples, 1 torch thread)",
        (
            Case(f"screen all {len(candidates)} candidates", "exact FD of every candidate", t_gn, t_fd),
            Case(f"{CUT:.0%} area cut, two-stage", "FD-only lazy greedy", t_two, t_all),
        ),
        notes=(
            f"{CUT:.0%} area cut: two-stage {two_stage.evaluations} FD evaluations, test acc {acc[0]:.3f}; "
            f"FD-only greedy {fd_only.evaluations} evaluations "
            f"({fd_only.evaluations / max(two_stage.evaluations, 1):.2f}x), test acc {acc[1]:.3f}"
        ),
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("logic-tying", run))
