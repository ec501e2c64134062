"""Cost of the two-stage tying vs exhaustive finite differences, measured in one run.

On a trained digits DLGN (4 x 1000 gates, 512 calibration samples, 1 torch thread): the Gauss-Newton screen of
every candidate gate (one forward + C backward passes) vs the exact single-tie distortion D({g}) of every
candidate (one bit-parallel discrete forward per gate, the FD stage run on all gates), and the two-stage method
at a 45% area cut vs the FD-only lazy greedy over all candidates (no screen). Prints seconds and ratios.

Run: python packages/logic-tying/benchmarks/bench_screening.py
"""

from __future__ import annotations

import time

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


def main() -> None:
    torch.set_num_threads(1)
    X_train, y_train, X_test, y_test = load_digits_bits()
    net = LogicNetwork(X_train.shape[1], (1000,) * 4, 10, 10.0, seed=0)
    train_network(net, X_train, y_train, epochs=30, seed=0)
    netlist = Netlist.from_network(net)
    X_cal = X_train[:512]
    candidates = candidate_gates(netlist)

    start = time.process_time()
    screening = gauss_newton_order(netlist, X_cal, candidates)
    t_gn = time.process_time() - start
    calibration = Calibration(netlist, X_cal)
    start = time.process_time()
    for g, layer in zip(candidates, netlist.layer_of(candidates), strict=True):
        mask, value = no_ties(netlist)
        mask[g], value[g] = True, screening[1][g]
        calibration.distortion((mask, value), int(layer), calibration.teacher_states)
    t_fd = time.process_time() - start
    print(f"{len(candidates)} candidate gates")
    print(f"screen every gate: GN {t_gn:.2f} s, exact FD {t_fd:.2f} s; FD/GN = {t_fd / t_gn:.1f}x")

    target = area_target(netlist, 0.45)
    start = time.process_time()
    two_stage = unit_tying(netlist, X_cal, target, screening=screening)
    t_two = time.process_time() - start
    start = time.process_time()
    fd_only = unit_tying(netlist, X_cal, target, rho=len(candidates), screening=screening)  # overshoot = all
    t_all = time.process_time() - start
    acc = [tie_accuracy(netlist, X_test, y_test, r.ties) for r in (two_stage, fd_only)]
    print(
        f"45% area cut: two-stage {t_two:.2f} s, {two_stage.evaluations} FD evaluations, acc {acc[0]:.3f}; "
        f"FD greedy over all candidates {t_all:.2f} s, {fd_only.evaluations} evaluations, acc {acc[1]:.3f}"
    )
    ratio = fd_only.evaluations / max(two_stage.evaluations, 1)
    print(f"ratios (all-FD / two-stage): time {t_all / t_two:.2f}x, evaluations {ratio:.2f}x")


if __name__ == "__main__":
    main()
