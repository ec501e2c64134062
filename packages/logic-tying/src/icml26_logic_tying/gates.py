"""The 16 two-input logic gates of a differentiable logic gate network (Petersen et al., 2022).

Gate ``k`` has the truth table ``f_k(a, b)`` read from the bits of ``k``:
``k = 8 f(0,0) + 4 f(0,1) + 2 f(1,0) + f(1,1)`` (0 FALSE, 1 AND, 2 A AND NOT B, 3 A, 4 B AND NOT A, 5 B,
6 XOR, 7 OR, 8 NOR, 9 XNOR, 10 NOT B, 11 B IMPLIES A, 12 NOT A, 13 A IMPLIES B, 14 NAND, 15 TRUE), the order
of difflogic's ``bin_op``. Its real-valued relaxation is the unique multilinear extension
``f_k(a, b) = c0 + c1 a + c2 b + c3 a b`` on [0, 1]^2 (the probabilistic gate of the paper, e.g. AND = a b,
OR = a + b - a b), which equals the truth table at binary inputs and whose partial derivatives there are the
Boolean differences: what the Gauss-Newton screening linearises.
"""

from __future__ import annotations

import numpy as np

N_GATES = 16
NAMES = (
    "FALSE", "AND", "A_AND_NOT_B", "A", "B_AND_NOT_A", "B", "XOR", "OR",
    "NOR", "XNOR", "NOT_B", "B_IMPLIES_A", "NOT_A", "A_IMPLIES_B", "NAND", "TRUE",
)  # fmt: skip


def truth_tables() -> np.ndarray:
    """(16, 2, 2) bool: ``T[k, a, b] = f_k(a, b)``."""
    k = np.arange(N_GATES)[:, None, None]
    a = np.arange(2)[None, :, None]
    b = np.arange(2)[None, None, :]
    return ((k >> (3 - (2 * a + b))) & 1).astype(bool)


def multilinear_coefficients() -> np.ndarray:
    """(16, 4) float: ``(c0, c1, c2, c3)`` of ``f_k(a, b) = c0 + c1 a + c2 b + c3 a b``."""
    t = truth_tables().astype(np.float64)
    t00, t01, t10, t11 = t[:, 0, 0], t[:, 0, 1], t[:, 1, 0], t[:, 1, 1]
    return np.stack([t00, t10 - t00, t01 - t00, t11 - t10 - t01 + t00], axis=1)


TRUTH_TABLES = truth_tables()
COEFFICIENTS = multilinear_coefficients()
# gates whose output ignores one or both inputs: wires, inverters and constants cost no logic
USES_A = TRUTH_TABLES[:, 0, :] != TRUTH_TABLES[:, 1, :]
USES_B = TRUTH_TABLES[:, :, 0] != TRUTH_TABLES[:, :, 1]
TWO_INPUT = USES_A.any(1) & USES_B.any(1)
