"""The discretised network as a gate-level netlist: bit-parallel evaluation, unit ties, constant propagation,
dead-logic elimination and an area count (2-input gates and a k-input LUT estimate).

Nodes are numbered globally: the ``n_inputs`` input bits first, then the gates layer by layer. A *tie* forces
a gate's output to a constant 0/1 (the paper's unit tying); ties are given as flat ``(mask, value)`` bool
arrays over all gates. Evaluation packs 64 samples per ``uint64`` word, so one pass of bitwise operations per
layer evaluates the whole calibration set.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from icml26_shared import check_int, fail

from .gates import N_GATES, TRUTH_TABLES
from .network import LogicNetwork, check_binary

ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
CONST, WIRE, GATE = 0, 1, 2  # node kinds after simplification: constant, (possibly inverted) wire, 2-input gate


@dataclass(frozen=True)
class Netlist:
    """A feed-forward netlist of 2-input gates with a GroupSum readout over the last layer.

    ``ops[l]`` (G_l,) gate ids in [0, 16); ``index_a[l]``, ``index_b[l]`` (G_l,) indices into layer ``l - 1``
    (the inputs for ``l = 0``).
    """

    n_inputs: int
    ops: tuple[np.ndarray, ...]
    index_a: tuple[np.ndarray, ...]
    index_b: tuple[np.ndarray, ...]
    n_classes: int
    tau: float

    def __post_init__(self) -> None:
        check_int("n_inputs", self.n_inputs, 1)
        if not len(self.ops) == len(self.index_a) == len(self.index_b) or not self.ops:
            raise fail("ops", len(self.ops), "as many layers of ops, index_a and index_b (at least one)")
        previous = self.n_inputs
        for layer, (op, a, b) in enumerate(zip(self.ops, self.index_a, self.index_b, strict=True)):
            if not op.shape == a.shape == b.shape or op.ndim != 1 or op.size == 0:
                raise fail(f"index_a[{layer}]", a.shape, f"the shape of ops[{layer}] {op.shape} (and index_b)")
            if op.min() < 0 or op.max() >= N_GATES:
                raise fail(f"ops[{layer}]", op, f"gate ids in [0, {N_GATES})")
            for name, idx in (("index_a", a), ("index_b", b)):
                if idx.min() < 0 or idx.max() >= previous:
                    raise fail(f"{name}[{layer}]", idx, f"indices into the previous layer's width {previous}")
            previous = op.size
        if self.ops[-1].size % self.n_classes:
            raise fail("n_classes", self.n_classes, f"a divisor of the last layer width {self.ops[-1].size}")

    @functools.cached_property
    def truth_masks(self) -> list[list[np.ndarray]]:
        """Per layer, the gates' truth-table entries f(0,0), f(0,1), f(1,0), f(1,1) as all-ones/all-zero words
        (G_l, 1): the bit-parallel evaluation selects minterms with them."""
        masks = []
        for op in self.ops:
            t = TRUTH_TABLES[op].reshape(len(op), 4)
            masks.append([np.where(t[:, i], ALL_ONES, np.uint64(0))[:, None] for i in range(4)])
        return masks

    @property
    def widths(self) -> tuple[int, ...]:
        return tuple(op.size for op in self.ops)

    @property
    def n_gates(self) -> int:
        return sum(self.widths)

    @functools.cached_property
    def offsets(self) -> np.ndarray:
        """Start of each layer in the flat gate numbering (and the total at the end)."""
        return np.concatenate([[0], np.cumsum(self.widths)])

    def layer_of(self, gates: np.ndarray) -> np.ndarray:
        """Layer of each flat gate index."""
        return np.searchsorted(self.offsets, gates, side="right") - 1

    @classmethod
    def from_network(cls, net: LogicNetwork) -> Netlist:
        """Discretise: each gate becomes ``argmax_k w_g`` with the network's wiring."""
        wiring = [net.wiring(layer) for layer in range(len(net.widths))]
        return cls(
            net.in_dim,
            tuple(net.gate_ids()),
            tuple(a.cpu().numpy() for a, _ in wiring),
            tuple(b.cpu().numpy() for _, b in wiring),
            net.n_classes,
            net.tau,
        )


def no_ties(netlist: Netlist) -> tuple[np.ndarray, np.ndarray]:
    """Empty ``(mask, value)``."""
    return np.zeros(netlist.n_gates, dtype=bool), np.zeros(netlist.n_gates, dtype=bool)


def check_ties(netlist: Netlist, ties) -> tuple[np.ndarray, np.ndarray]:
    """``(mask, value)`` as two bool arrays of length ``n_gates``."""
    if ties is None:
        return no_ties(netlist)
    mask, value = (np.asarray(t) for t in ties)
    for name, arr in (("ties mask", mask), ("ties value", value)):
        if arr.shape != (netlist.n_gates,) or arr.dtype != np.bool_:
            raise fail(name, arr, f"a bool array of shape ({netlist.n_gates},)")
    return mask, value


def pack(X: np.ndarray) -> np.ndarray:
    """(N, D) binary -> (D, ceil(N / 64)) uint64, sample ``n`` in bit ``n % 64`` of word ``n // 64``."""
    bits = check_binary("X", X)
    words = -(-len(bits) // 64)
    padded = np.zeros((words * 64, bits.shape[1]), dtype=bool)
    padded[: len(bits)] = bits
    return (
        np.ascontiguousarray(np.packbits(padded.T, axis=1, bitorder="little"))
        .view(np.uint64)
        .reshape(bits.shape[1], words)
    )


def unpack(words: np.ndarray, n: int) -> np.ndarray:
    """(D, W) uint64 -> (D, n) bool (inverse of :func:`pack`, transposed)."""
    return np.unpackbits(words.view(np.uint8), axis=1, bitorder="little")[:, :n].astype(bool)


def layer_states(
    netlist: Netlist, words: np.ndarray, ties=None, start: int = 0, states: list[np.ndarray] | None = None
) -> list[np.ndarray]:
    """Bit-packed outputs (G_l, W) of every layer. With ``states`` given, layers before ``start`` are reused."""
    mask, value = check_ties(netlist, ties)
    check_int("start", start, 0, len(netlist.ops) - 1)
    if start and (states is None or len(states) < start):
        raise fail("start", start, "0, or at most the number of layer states given")
    out = list(states[:start]) if start else []
    x = out[-1] if out else words
    offsets = netlist.offsets
    for layer in range(start, len(netlist.ops)):
        a, b = x[netlist.index_a[layer]], x[netlist.index_b[layer]]
        m00, m01, m10, m11 = netlist.truth_masks[layer]
        na, nb = ~a, ~b
        y = (na & nb & m00) | (na & b & m01) | (a & nb & m10) | (a & b & m11)
        tied = mask[offsets[layer] : offsets[layer + 1]]
        if tied.any():
            y[tied] = np.where(value[offsets[layer] : offsets[layer + 1]][tied], ALL_ONES, np.uint64(0))[:, None]
        out.append(y)
        x = y
    return out


def group_counts(netlist: Netlist, last: np.ndarray, n: int) -> np.ndarray:
    """GroupSum popcounts (n, C) of the last layer's packed outputs (logits = counts / tau)."""
    bits = np.unpackbits(last.view(np.uint8), axis=1, bitorder="little")  # (G_L, 64 W) uint8
    counts = np.add.reduce(bits.reshape(netlist.n_classes, -1, bits.shape[1]), axis=1, dtype=np.int32)
    return counts[:, :n].T.astype(np.int64)


def evaluate(netlist: Netlist, X: np.ndarray, ties=None) -> np.ndarray:
    """Logits (N, C) of the netlist on binary inputs ``X`` (N, n_inputs), with optional ties."""
    X = check_binary("X", X)
    if X.shape[1] != netlist.n_inputs:
        raise fail("X", X, f"{netlist.n_inputs} input bits per row")
    last = layer_states(netlist, pack(X), ties)[-1]
    return group_counts(netlist, last, len(X)) / netlist.tau


def majority_values(netlist: Netlist, X: np.ndarray) -> np.ndarray:
    """Per gate, its most frequent output on ``X`` (the natural tie constant), flat (n_gates,) bool."""
    states = layer_states(netlist, pack(X))
    return np.concatenate([unpack(s, len(X)).mean(1) >= 0.5 for s in states])


@dataclass(frozen=True)
class Simplified:
    """A netlist after constant propagation and dead-logic elimination.

    Per node (inputs then gates): ``kind`` (CONST / WIRE / GATE), ``constant``, ``root`` (the node a wire reads,
    itself for a gate or an input) and ``negate``; per gate ``root_a``/``root_b`` (its fanins after resolving
    wires) and ``table`` (4,) its truth table over those roots; ``live``: reaches a GroupSum output.
    """

    n_inputs: int
    kind: np.ndarray
    constant: np.ndarray
    root: np.ndarray
    negate: np.ndarray
    root_a: np.ndarray
    root_b: np.ndarray
    table: np.ndarray
    live: np.ndarray
    outputs: np.ndarray  # node ids of the last layer

    @property
    def area(self) -> int:
        """Live genuine 2-input gates: wires, inverters and constants are free."""
        return int((self.live & (self.kind == GATE)).sum())


def _one_variable(t: np.ndarray, const_a, const_b, ca, cb, same, ra, rb):
    """Where a gate reduces to a function of at most one variable: ``(selected, g (G, 2), root (G,))``.

    ``t`` (G, 2, 2) is the truth table over resolved roots; ``g[v]`` is the output when the remaining variable
    (root ``root``) is ``v``. Cases: one input constant, both inputs the same root, or the table ignores an input.
    """
    rows = np.arange(len(t))
    uses_a = (t[:, 0, :] != t[:, 1, :]).any(1)
    uses_b = (t[:, :, 0] != t[:, :, 1]).any(1)
    free = ~const_a & ~const_b & ~same
    cases = [
        (const_a & ~const_b, t[rows, ca.astype(int), :], rb),  # f(c, v)
        (const_b & ~const_a, t[rows, :, cb.astype(int)], ra),  # f(u, c)
        (same, np.stack([t[:, 0, 0], t[:, 1, 1]], axis=1), ra),  # f(u, u)
        (free & ~uses_a, t[:, 0, :], rb),  # ignores a (also covers constants: then g is constant)
        (free & uses_a & ~uses_b, t[:, :, 0], ra),  # ignores b
    ]
    selected = np.zeros(len(t), dtype=bool)
    g = np.zeros((len(t), 2), dtype=bool)
    root = np.full(len(t), -1)
    for sel, table, var in cases:
        g[sel], root[sel] = table[sel], var[sel]
        selected |= sel
    return selected, g, root


def simplify(netlist: Netlist, ties=None) -> Simplified:
    """Constant propagation (a gate with a constant or repeated input, or one that ignores an input, becomes a
    constant, wire or inverter: a 1-input function of its truth table) and dead-logic elimination (only logic
    reaching GroupSum is live). Ties turn gates into constants first."""
    mask, value = check_ties(netlist, ties)
    n_nodes = netlist.n_inputs + netlist.n_gates
    kind = np.full(n_nodes, GATE, dtype=np.int8)
    kind[: netlist.n_inputs] = WIRE  # an input is a wire to itself
    constant = np.zeros(n_nodes, dtype=bool)
    root = np.arange(n_nodes)
    negate = np.zeros(n_nodes, dtype=bool)
    root_a = np.full(n_nodes, -1)
    root_b = np.full(n_nodes, -1)
    table = np.zeros((n_nodes, 2, 2), dtype=bool)
    offsets = netlist.offsets
    for layer, op in enumerate(netlist.ops):
        nodes = netlist.n_inputs + np.arange(offsets[layer], offsets[layer + 1])
        base = 0 if layer == 0 else netlist.n_inputs + offsets[layer - 1]
        ia, ib = netlist.index_a[layer] + base, netlist.index_b[layer] + base
        const_a, const_b = kind[ia] == CONST, kind[ib] == CONST
        ra, rb, na, nb = root[ia], root[ib], negate[ia], negate[ib]
        # the truth table over the resolved roots: t'[u, v] = t[u ^ na, v ^ nb]
        u = np.arange(2)
        t = TRUTH_TABLES[op][
            np.arange(op.size)[:, None, None],
            u[None, :, None] ^ na[:, None, None],
            u[None, None, :] ^ nb[:, None, None],
        ]
        ca, cb = constant[ia], constant[ib]  # constants carry no negation (negate is False for them)
        same = ~const_a & ~const_b & (ra == rb)
        new_kind = np.full(op.size, GATE, dtype=np.int8)
        new_const = np.zeros(op.size, dtype=bool)
        new_root, new_neg = nodes.copy(), np.zeros(op.size, dtype=bool)
        both = const_a & const_b
        new_kind[both] = CONST
        new_const[both] = TRUTH_TABLES[op][np.arange(op.size), ca.astype(int), cb.astype(int)][both]
        one_var, g, g_root = _one_variable(t, const_a, const_b, ca, cb, same, ra, rb)
        one_var &= ~both
        is_const = one_var & (g[:, 0] == g[:, 1])
        new_kind[is_const], new_const[is_const] = CONST, g[:, 0][is_const]
        is_wire = one_var & ~is_const
        new_kind[is_wire], new_root[is_wire], new_neg[is_wire] = WIRE, g_root[is_wire], g[:, 0][is_wire]
        tied = mask[offsets[layer] : offsets[layer + 1]]
        new_kind[tied], new_const[tied] = CONST, value[offsets[layer] : offsets[layer + 1]][tied]
        new_root[tied], new_neg[tied] = nodes[tied], False
        gate = new_kind == GATE
        kind[nodes], constant[nodes], root[nodes], negate[nodes] = new_kind, new_const, new_root, new_neg
        root_a[nodes[gate]], root_b[nodes[gate]], table[nodes[gate]] = ra[gate], rb[gate], t[gate]
    outputs = netlist.n_inputs + np.arange(offsets[-2], offsets[-1])
    live = np.zeros(n_nodes, dtype=bool)
    live[root[outputs][kind[outputs] != CONST]] = True
    for layer in range(len(netlist.ops) - 1, -1, -1):
        nodes = netlist.n_inputs + np.arange(offsets[layer], offsets[layer + 1])
        active = nodes[live[nodes] & (kind[nodes] == GATE)]
        live[root_a[active]] = True
        live[root_b[active]] = True
    return Simplified(netlist.n_inputs, kind, constant, root, negate, root_a, root_b, table, live, outputs)


def evaluate_simplified(simple: Simplified, X: np.ndarray, n_classes: int, tau: float) -> np.ndarray:
    """Logits (N, C) of a simplified netlist: only its live gates are computed (a check of :func:`simplify`)."""
    X = check_binary("X", X)
    values = np.zeros((len(simple.kind), len(X)), dtype=bool)
    values[: simple.n_inputs] = X.T
    for node in np.flatnonzero(simple.live & (simple.kind == GATE)):  # node order is topological
        a, b = values[simple.root_a[node]].astype(int), values[simple.root_b[node]].astype(int)
        values[node] = simple.table[node][a, b]
    out = simple.outputs
    bits = np.where(
        (simple.kind[out] == CONST)[:, None],
        simple.constant[out][:, None],
        values[simple.root[out]] ^ simple.negate[out][:, None],
    )
    return bits.reshape(n_classes, -1, len(X)).sum(1).T / tau


def lut_count(simple: Simplified, k: int = 6) -> int:
    """k-input LUTs after a greedy tree-covering technology mapping of the live 2-input gates.

    In topological order each gate's cut is the union of its fanins' cuts for fanins that are single-fanout
    gates (absorbed into this LUT), else the fanin itself; when the union exceeds ``k`` leaves, the larger
    fanin cone is cut off (becomes its own LUT). LUTs = gates used as a leaf or driving an output.
    """
    check_int("k", k, 2)
    gates = np.flatnonzero(simple.live & (simple.kind == GATE))
    fanout = np.zeros(len(simple.kind), dtype=np.int64)
    np.add.at(fanout, simple.root_a[gates], 1)
    np.add.at(fanout, simple.root_b[gates], 1)
    out = simple.outputs[simple.kind[simple.outputs] != CONST]
    np.add.at(fanout, simple.root[out], 1)
    is_gate = simple.kind == GATE
    roots = set(simple.root[out][is_gate[simple.root[out]]].tolist())
    cuts: dict[int, frozenset[int]] = {}
    for node in gates.tolist():
        parts = []
        for fanin in (int(simple.root_a[node]), int(simple.root_b[node])):
            absorbable = is_gate[fanin] and fanout[fanin] == 1
            parts.append((fanin, cuts[fanin] if absorbable else frozenset([fanin]), absorbable))
        cut = parts[0][1] | parts[1][1]
        if len(cut) > k:
            (fa, ca, _absorb_a), (fb, cb, _absorb_b) = parts
            big_a = len(ca) >= len(cb)
            cut = (frozenset([fa]) | cb) if big_a else (ca | frozenset([fb]))
            if len(cut) > k:
                cut = frozenset([fa, fb])
        cuts[node] = cut
        roots.update(leaf for leaf in cut if is_gate[leaf])
    return len(roots)
