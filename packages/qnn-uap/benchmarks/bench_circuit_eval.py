"""Circuit evaluation time of SAQNN: the closed form (A.1) vs PennyLane's ``default.qubit`` and ``lightning.qubit``.

Seconds per evaluation of <0|U^dag O U|0> on a batch of 20 input points, for the k = 1 (6 qubits) and k = 3
(8 qubits, the paper's f1 circuit) models, each path best of 3 after a warm-up call, all in this run. The
ratios are the simulator's time / the closed form's; the notes give default.qubit / lightning.qubit, the
two simulators against each other. lightning.qubit is skipped where it is not installed.

Run: python packages/qnn-uap/benchmarks/bench_circuit_eval.py [--tiny] [--out results]
"""

from __future__ import annotations

import importlib.util

import jax
import numpy as np
from icml26_qnn_uap import SAQNN, fourier_frequencies
from icml26_qnn_uap.circuits import pennylane_qnode
from icml26_shared.bench import Benchmark, Case, bench_main, best_seconds

FULL = {"ks": (1, 3), "points": 20, "repeats": 3}
TINY = {"ks": (1,), "points": 2, "repeats": 1}


def warm_best_seconds(fn, repeats: int) -> float:
    """``best_seconds`` after one untimed warm-up call (compilation, device set-up)."""
    fn()
    return best_seconds(fn, repeats)


def run(tiny: bool) -> Benchmark:
    """Per k: time the closed form and each simulator on the same parameters and inputs."""
    size = TINY if tiny else FULL
    points, repeats = size["points"], size["repeats"]
    lightning = importlib.util.find_spec("pennylane_lightning") is not None
    cases, simulators = [], []
    for k in size["ks"]:
        model = SAQNN(fourier_frequencies(k, 2))
        rng = np.random.default_rng(0)
        theta = rng.uniform(0, 2 * np.pi, 2**model.m - 1)
        phi = rng.uniform(0, 2 * np.pi, model.n)
        x = rng.uniform(-np.pi, np.pi, size=(points, 2))

        def simulate(device: str, model=model, theta=theta, phi=phi, x=x) -> float:
            return warm_best_seconds(lambda: pennylane_qnode(model, device, "numpy")(theta, phi, x), repeats)

        with jax.enable_x64(True):
            closed = warm_best_seconds(
                lambda model=model, theta=theta, phi=phi, x=x: np.asarray(
                    model.expval({"theta": theta, "phi": phi}, x)
                ),
                repeats,
            )
        case = f"k={k}: n={model.n}, {model.num_qubits} qubits"
        default = simulate("default.qubit")
        cases.append(Case(case, "default.qubit", closed, default))
        if lightning:
            fast = simulate("lightning.qubit")
            cases.append(Case(case, "lightning.qubit", closed, fast))
            simulators.append(f"k={k} {default / fast:.2f}x")
    notes = (
        "default.qubit / lightning.qubit: " + "; ".join(simulators) if lightning else "lightning.qubit not installed"
    )
    return Benchmark(
        f"SAQNN's closed form (A.1) vs PennyLane simulators, seconds per evaluation of {points} input points, "
        f"best of {repeats}",
        tuple(cases),
        notes=notes,
    )


if __name__ == "__main__":
    raise SystemExit(bench_main("qnn-uap", run))
