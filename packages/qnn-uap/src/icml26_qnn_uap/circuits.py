"""SAQNN gate by gate (Fig. 1) as one gate list, exported to PennyLane and to Qiskit.

Wires 0..m-1 are the index register (wire 0 = qubit 1, the most significant bit of r), wires m..m+d-1 the data
qubits. Every gate is ``Gate(kind, wire, angle, controls, values)``: a single-qubit ``ry``/``rz``/``x`` or a
``phase`` e^{i angle} (a global phase on ``wire``), applied when the ``controls`` are in the basis state ``values``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icml26_shared import fail

from .bases import check_inputs
from .method import SAQNN

MAX_QUBITS = 24  # statevector simulation of the gate list beyond this is impractical (use the closed form)


@dataclass(frozen=True)
class Gate:
    """One (multi-)controlled single-qubit gate of the circuit."""

    kind: str  # "ry" | "rz" | "x" | "phase"
    wire: int
    angle: object = 0.0  # float or a (batched) array
    controls: tuple[int, ...] = ()
    values: tuple[int, ...] = ()


def _bits(r: int, width: int) -> tuple[int, ...]:
    return tuple((r >> (width - 1 - i)) & 1 for i in range(width))


def state_preparation(theta, m: int) -> list[Gate]:
    """P(theta): multiplexor-R_y on qubit i controlled by qubits 1..i-1, one R_y(theta_{2^{i-1}+p}) per state p."""
    gates = []
    for i in range(m):
        for p in range(2**i):
            gates.append(Gate("ry", i, theta[2**i - 1 + p], tuple(range(i)), _bits(p, i)))
    return gates


def inverse(gates: list[Gate]) -> list[Gate]:
    """The adjoint: reversed order, negated angles (x is self-inverse)."""
    return [Gate(g.kind, g.wire, -g.angle if g.kind != "x" else 0.0, g.controls, g.values) for g in reversed(gates)]


def saqnn_gates(model: SAQNN, theta, phi, x) -> list[Gate]:
    """The whole circuit ``P^dag . Pad . prod_r S(phi_r) V_r(x) . P`` for inputs x (N, d) (batched angles)."""
    if model.num_qubits > MAX_QUBITS:
        raise fail("model", f"SAQNN with {model.num_qubits} qubits", f"at most {MAX_QUBITS} qubits for a circuit")
    x = check_inputs(x, model.d, model.basis)
    m, index = model.m, tuple(range(model.m))
    prep = state_preparation(theta, m)
    gates = list(prep)
    for r, j in enumerate(model.freqs, start=1):
        control = _bits(r, m)
        for l, j_l in enumerate(j):  # V_r(x): U_r on the data qubits when the index register is |r>
            if j_l == 0:
                continue  # R_z(0) = R_y(0) = I
            if model.basis == "fourier":
                gates.append(Gate("rz", m + l, -2 * j_l * x[:, l], index, control))  # <0|R_z(-2jx)|0> = e^{ijx}
            else:
                gates.append(Gate("ry", m + l, 2 * j_l * np.arccos(x[:, l]), index, control))  # = T_j(x), App. C
        gates.append(Gate("phase", m, phi[r - 1], index, control))  # S(phi_r) = e^{i phi_r}|r><r| + ...
    gates.append(Gate("x", m, 0.0, index, _bits(0, m)))  # padding layer: X on data qubit 1 when index = |0>
    return gates + inverse(prep)


def pennylane_qnode(model: SAQNN, device: str = "default.qubit", interface: str = "jax"):
    """A QNode ``(theta, phi, x) -> <0|U^dag O U|0>`` (N,), O = |0><0| on all wires (JAX interface by default)."""
    import pennylane as qml

    wires = list(range(model.num_qubits))
    dev = qml.device(device, wires=wires)

    def apply(gate: Gate) -> None:
        """Queue one gate (creating an operator inside the QNode queues it; qml.ctrl replaces it)."""
        if gate.kind == "phase":
            op = qml.GlobalPhase(-gate.angle, wires=gate.wire)  # GlobalPhase(t) = e^{-it}
        elif gate.kind == "x":
            op = qml.PauliX(gate.wire)
        else:
            op = {"ry": qml.RY, "rz": qml.RZ}[gate.kind](gate.angle, wires=gate.wire)
        if gate.controls:
            qml.ctrl(op, control=list(gate.controls), control_values=list(gate.values))

    @qml.qnode(dev, interface=interface)
    def circuit(theta, phi, x):
        for gate in saqnn_gates(model, theta, phi, x):
            apply(gate)
        return qml.expval(qml.Projector([0] * len(wires), wires=wires))

    return circuit


def qiskit_circuits(model: SAQNN, theta, phi, x) -> list:
    """One Qiskit ``QuantumCircuit`` per input point (Qiskit has no batched angles)."""
    from qiskit import QuantumCircuit
    from qiskit.circuit.library import GlobalPhaseGate, RYGate, RZGate, XGate

    x = check_inputs(x, model.d, model.basis)
    theta, phi = np.asarray(theta, dtype=float), np.asarray(phi, dtype=float)
    circuits = []
    for point in x:
        qc = QuantumCircuit(model.num_qubits)
        for gate in saqnn_gates(model, theta, phi, point[None, :]):
            angle = float(np.ravel(gate.angle)[0]) if gate.kind != "x" else 0.0
            op = {"ry": RYGate, "rz": RZGate}[gate.kind](angle) if gate.kind in ("ry", "rz") else None
            if gate.kind == "x":
                op = XGate()
            elif gate.kind == "phase":
                op = GlobalPhaseGate(angle)  # e^{i angle}
            if gate.controls:
                state = sum(v << i for i, v in enumerate(gate.values))  # bit i <-> i-th control qubit
                controlled = op.control(len(gate.controls), ctrl_state=state, annotated=False)
                targets = [] if gate.kind == "phase" else [gate.wire]
                qc.append(controlled, [*gate.controls, *targets])
            elif gate.kind == "phase":
                qc.global_phase += angle
            else:
                qc.append(op, [gate.wire])
        circuits.append(qc)
    return circuits


def qiskit_expval(model: SAQNN, theta, phi, x) -> np.ndarray:
    """``<0|U^dag O U|0>`` (N,) from Qiskit's exact ``Statevector`` (probability of |0...0>)."""
    from qiskit.quantum_info import Statevector

    return np.array([Statevector(qc).probabilities()[0] for qc in qiskit_circuits(model, theta, phi, x)])
