"""The gate-level circuit (Fig. 1) in PennyLane and Qiskit against each other and against the closed form."""

import jax
import numpy as np
import pytest
from icml26_qnn_uap import SAQNN, chebyshev_degrees
from icml26_qnn_uap.circuits import pennylane_qnode, qiskit_expval, saqnn_gates

CASES = [
    (np.array([[0, 0], [1, 1], [-1, -1]]), "fourier", np.pi),
    (chebyshev_degrees(1, 2, "inf"), "chebyshev", 1.0),  # 4 terms: m = 3, 5 qubits
]


@pytest.mark.parametrize(("freqs", "basis", "h"), CASES)
def test_pennylane_qiskit_and_closed_form_agree(freqs, basis, h):
    model = SAQNN(freqs, basis)
    rng = np.random.default_rng(7)
    theta = rng.uniform(0, 2 * np.pi, 2**model.m - 1)
    phi = rng.uniform(0, 2 * np.pi, model.n)
    x = rng.uniform(-h, h, size=(4, 2))
    with jax.enable_x64(True):
        closed = np.asarray(model.expval({"theta": theta, "phi": phi}, x))
        pennylane = np.asarray(pennylane_qnode(model, interface="numpy")(theta, phi, x))
    qiskit = qiskit_expval(model, theta, phi, x)
    np.testing.assert_allclose(pennylane, qiskit, atol=1e-10)
    np.testing.assert_allclose(closed, qiskit, atol=1e-10)


def test_gate_count_and_depth_shape():
    """P and P^dag have 2^m - 1 rotations each; every layer r has one rotation per non-zero j_l and one phase."""
    freqs = np.array([[0, 0], [1, 1], [-1, -1]])
    gates = saqnn_gates(SAQNN(freqs), np.zeros(3), np.zeros(3), np.zeros((1, 2)))
    rotations = sum(int((j != 0).sum()) for j in freqs)
    assert len(gates) == 2 * 3 + rotations + 3 + 1
    assert gates[-1].kind == "ry" and any(g.kind == "x" and g.values == (0, 0) for g in gates)


def test_too_many_qubits_is_refused():
    model = SAQNN(np.ones((1, 24), dtype=int))  # 1 index + 24 data qubits
    with pytest.raises(ValueError, match="model"):
        saqnn_gates(model, np.zeros(1), np.zeros(1), np.zeros((1, 24)))
