"""The 16 gates: truth tables against their names, the multilinear relaxation against the tables."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from icml26_logic_tying.gates import COEFFICIENTS, NAMES, TRUTH_TABLES, TWO_INPUT

REFERENCE = {
    "FALSE": lambda a, b: 0,
    "AND": lambda a, b: a and b,
    "A_AND_NOT_B": lambda a, b: a and not b,
    "A": lambda a, b: a,
    "B_AND_NOT_A": lambda a, b: b and not a,
    "B": lambda a, b: b,
    "XOR": lambda a, b: a != b,
    "OR": lambda a, b: a or b,
    "NOR": lambda a, b: not (a or b),
    "XNOR": lambda a, b: a == b,
    "NOT_B": lambda a, b: not b,
    "B_IMPLIES_A": lambda a, b: a or not b,
    "NOT_A": lambda a, b: not a,
    "A_IMPLIES_B": lambda a, b: (not a) or b,
    "NAND": lambda a, b: not (a and b),
    "TRUE": lambda a, b: 1,
}


def relaxed(k, a, b):
    c0, c1, c2, c3 = COEFFICIENTS[k]
    return c0 + c1 * a + c2 * b + c3 * a * b


def test_truth_tables_match_the_gate_names():
    for k, name in enumerate(NAMES):
        for a in (0, 1):
            for b in (0, 1):
                assert TRUTH_TABLES[k, a, b] == bool(REFERENCE[name](a, b)), (name, a, b)


def test_relaxation_equals_the_table_at_binary_inputs():
    for k in range(16):
        for a in (0, 1):
            for b in (0, 1):
                assert relaxed(k, a, b) == TRUTH_TABLES[k, a, b]


def test_exactly_ten_gates_need_both_inputs():
    assert TWO_INPUT.sum() == 10 and not TWO_INPUT[[0, 3, 5, 10, 12, 15]].any()


@given(st.integers(0, 15), st.floats(0, 1), st.floats(0, 1))
def test_relaxation_is_a_probability_of_the_gate_output(k, a, b):
    """For independent Bernoulli inputs, f_k(a, b) = P(gate outputs 1): the probabilistic reading of difflogic."""
    p = sum(TRUTH_TABLES[k, u, v] * (a if u else 1 - a) * (b if v else 1 - b) for u in (0, 1) for v in (0, 1))
    assert np.isclose(relaxed(k, a, b), p) and -1e-12 <= relaxed(k, a, b) <= 1 + 1e-12


@given(st.integers(0, 15), st.integers(0, 1), st.integers(0, 1))
def test_partial_derivative_is_the_boolean_difference(k, a, b):
    """d f / d a at a binary point = f(1, b) - f(0, b): what the Gauss-Newton screen linearises."""
    _c0, c1, _c2, c3 = COEFFICIENTS[k]
    assert c1 + c3 * b == int(TRUTH_TABLES[k, 1, b]) - int(TRUTH_TABLES[k, 0, b])
