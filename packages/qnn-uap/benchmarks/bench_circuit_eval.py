"""Circuit evaluation time of SAQNN on PennyLane's ``default.qubit`` vs ``lightning.qubit`` (where installed).

Prints seconds per evaluation of <0|U^dag O U|0> on a batch of inputs and the ratio default / lightning,
both measured in this run, plus the closed form (A.1) for reference. Usage:
    python packages/qnn-uap/benchmarks/bench_circuit_eval.py [k] [points]
"""

import importlib.util
import sys
import time

import jax
import numpy as np
from icml26_qnn_uap import SAQNN, fourier_frequencies
from icml26_qnn_uap.circuits import pennylane_qnode


def seconds(fn, repeats: int = 3) -> float:
    """Best wall time of ``repeats`` calls after one warm-up call."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(k: int = 1, points: int = 20) -> None:
    model = SAQNN(fourier_frequencies(k, 2))
    rng = np.random.default_rng(0)
    theta = rng.uniform(0, 2 * np.pi, 2**model.m - 1)
    phi = rng.uniform(0, 2 * np.pi, model.n)
    x = rng.uniform(-np.pi, np.pi, size=(points, 2))
    print(f"SAQNN k={k}: n={model.n}, {model.num_qubits} qubits, {points} input points")
    default = seconds(lambda: pennylane_qnode(model, "default.qubit", "numpy")(theta, phi, x))
    print(f"default.qubit   {default:.4f} s")
    with jax.enable_x64(True):
        closed = seconds(lambda: np.asarray(model.expval({"theta": theta, "phi": phi}, x)))
    print(f"closed form     {closed:.4f} s   default.qubit / closed form = {default / closed:.1f}x")
    if importlib.util.find_spec("pennylane_lightning") is None:
        print("lightning.qubit not installed: skipped")
        return
    lightning = seconds(lambda: pennylane_qnode(model, "lightning.qubit", "numpy")(theta, phi, x))
    print(f"lightning.qubit {lightning:.4f} s   default.qubit / lightning.qubit = {default / lightning:.2f}x")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
