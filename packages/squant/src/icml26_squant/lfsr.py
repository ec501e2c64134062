"""Maximal-length linear feedback shift registers (LFSRs): the generator behind every seed.

A K-bit Fibonacci LFSR shifts its state right by one and feeds the XOR of its tap bits into the top
bit. With a primitive feedback polynomial ``x^K + sum_t x^t + 1`` it visits all ``2^K - 1`` non-zero
states before repeating (maximal length), so each seed ``s in [1, 2^K)`` is one position on a single
cycle. ``period`` proves that algebraically (the multiplicative order of ``x`` modulo the polynomial);
``walk_period`` counts it by stepping the register (tests compare the two).
"""

from __future__ import annotations

import functools

import numpy as np
from icml26_shared import check_int, fail

# Fibonacci tap sets of primitive trinomials/pentanomials, one per register width (Xilinx XAPP052,
# "Efficient Shift Registers, LFSR Counters, and Long Pseudo-Random Sequence Generators", Table 3).
# Taps (K, a, b, ...) mean the feedback polynomial x^K + x^a + x^b + ... + 1. Every entry is verified
# primitive by ``period`` in the tests.
PRIMITIVE_TAPS: dict[int, tuple[int, ...]] = {
    2: (2, 1),
    3: (3, 2),
    4: (4, 3),
    5: (5, 3),
    6: (6, 5),
    7: (7, 6),
    8: (8, 6, 5, 4),
    9: (9, 5),
    10: (10, 7),
    11: (11, 9),
    12: (12, 6, 4, 1),
    13: (13, 4, 3, 1),
    14: (14, 5, 3, 1),
    15: (15, 14),
    16: (16, 15, 13, 4),
    17: (17, 14),
    18: (18, 11),
    19: (19, 6, 2, 1),
    20: (20, 17),
    21: (21, 19),
    22: (22, 21),
    23: (23, 18),
    24: (24, 23, 22, 17),
    25: (25, 22),
    26: (26, 6, 2, 1),
    27: (27, 5, 2, 1),
    28: (28, 25),
    29: (29, 27),
    30: (30, 6, 4, 1),
    31: (31, 28),
    32: (32, 22, 2, 1),
}


def check_width(K: int) -> int:
    """A register width with a known primitive polynomial, else ValueError naming ``K``."""
    if isinstance(K, bool) or not isinstance(K, int | np.integer) or int(K) not in PRIMITIVE_TAPS:
        raise fail(
            "K",
            K,
            f"a register width with a known primitive polynomial, one of {min(PRIMITIVE_TAPS)}..{max(PRIMITIVE_TAPS)}",
        )
    return int(K)


def check_seed(seed: int, K: int) -> int:
    """A non-zero K-bit state: the all-zero state is the LFSR's fixed point, never a seed."""
    return check_int("seed", seed, 1, (1 << K) - 1)


def polynomial(taps: tuple[int, ...]) -> int:
    """The feedback polynomial as a bit mask (bit i = coefficient of x^i), including the constant 1."""
    mask = 1
    for t in taps:
        mask ^= 1 << t
    return mask


def _mulmod(a: int, b: int, poly: int, degree: int) -> int:
    """a * b modulo ``poly`` over GF(2) (carry-less multiply, then reduce)."""
    result = 0
    while b:
        if b & 1:
            result ^= a
        b >>= 1
        a <<= 1
        if a >> degree & 1:
            a ^= poly
    return result


def _powmod(base: int, exponent: int, poly: int, degree: int) -> int:
    """base^exponent modulo ``poly`` over GF(2), by square-and-multiply (base 2 is the polynomial x)."""
    result = 1
    while exponent:
        if exponent & 1:
            result = _mulmod(result, base, poly, degree)
        base = _mulmod(base, base, poly, degree)
        exponent >>= 1
    return result


def _prime_factors(n: int) -> list[int]:
    factors, p = [], 2
    while p * p <= n:
        if n % p == 0:
            factors.append(p)
            while n % p == 0:
                n //= p
        p += 1
    return factors + ([n] if n > 1 else [])


def _order_by_baby_giant_steps(poly: int, degree: int) -> int:
    """The smallest n >= 1 with x^n = 1 modulo ``poly`` (constant term 1, so x is invertible).

    The powers of x are distinct non-zero residues until they repeat, so n <= 2^K - 1; with m ~ 2^(K/2)
    baby steps x^1 .. x^m and giant steps x^(-j m), n = j m + i for the first hit (Shanks). O(2^(K/2)).
    """
    m = 1 << ((degree + 1) // 2)
    baby, power = {}, 1
    for i in range(1, m + 1):
        power = _mulmod(power, 2, poly, degree)
        baby.setdefault(power, i)
    giant = _powmod(poly >> 1, m, poly, degree)  # x^-1 = (poly - 1) / x, since x (poly >> 1) = poly - 1
    value = 1
    for j in range(m + 1):
        if value in baby:
            return j * m + baby[value]
        value = _mulmod(value, giant, poly, degree)
    raise AssertionError("unreachable: the order of x is at most 2^K - 1")  # pragma: no cover


def period(taps: tuple[int, ...]) -> int:
    """The period of the LFSR with these taps: the order of x modulo its feedback polynomial.

    Equal to ``2^K - 1`` exactly when the polynomial is primitive (maximal length). When x^(2^K-1) = 1
    the order is found from the prime factors of 2^K - 1 (x^((2^K-1)/q) != 1 for every prime q means
    maximal length), which verifies widths up to 32 in microseconds; otherwise (a reducible polynomial
    such as (x + 1)^2 (...)) by baby-step giant-step, O(2^(K/2)). Always the true order, never 0.
    """
    if (
        not isinstance(taps, tuple)
        or not taps
        or len(set(taps)) != len(taps)
        or any(isinstance(t, bool) or not isinstance(t, int | np.integer) or not 1 <= t <= 32 for t in taps)
    ):
        raise fail("taps", taps, "a non-empty tuple of distinct exponents in 1..32 (the polynomial's x^t terms)")
    degree = max(int(t) for t in taps)
    poly = polynomial(tuple(int(t) for t in taps))
    order = (1 << degree) - 1
    if _powmod(2, order, poly, degree) != 1:  # the order does not divide 2^K - 1: not maximal length
        return _order_by_baby_giant_steps(poly, degree)
    for q in _prime_factors(order):
        while order % q == 0 and _powmod(2, order // q, poly, degree) == 1:
            order //= q
    return order


def step(state: int | np.ndarray, K: int) -> int | np.ndarray:
    """One Fibonacci step: feedback = XOR of the tap bits, shift right, feedback enters bit K-1.

    Works on a Python int or elementwise on an integer numpy array (one register per entry).
    """
    feedback = 0
    for t in PRIMITIVE_TAPS[K]:
        feedback = feedback ^ (state >> (K - t))
    return (state >> 1) | ((feedback & 1) << (K - 1))


def walk_period(K: int, seed: int = 1) -> int:
    """The period counted by stepping the register from ``seed`` until it returns (tests, K <= 20)."""
    K = check_width(K)
    start = check_seed(seed, K)
    state, n = step(start, K), 1
    while state != start:
        state, n = step(state, K), n + 1
    return n


@functools.lru_cache(maxsize=16)
def state_cycle(K: int) -> np.ndarray:
    """All ``2^K - 1`` states in visiting order, starting from state 1 (uint32, read-only, cached)."""
    K = check_width(K)
    n = (1 << K) - 1
    states = np.empty(n, dtype=np.uint32)
    state = 1
    for i in range(n):  # the register itself, one step at a time (K = 16: 65535 steps, ~30 ms)
        states[i] = state
        state = step(state, K)
    if state != 1:
        raise fail("K", K, "a maximal-length register (the walk did not close after 2^K - 1 steps)")
    states.setflags(write=False)
    return states


def stream(seed: int | np.ndarray, K: int, length: int) -> np.ndarray:
    """The first ``length`` states of the register seeded with ``seed`` (the seed itself first).

    ``seed`` may be an array of seeds: the registers run side by side (the hardware decoder's view),
    giving shape ``seed.shape + (length,)``.
    """
    K = check_width(K)
    check_int("length", length, 1)
    seeds = np.asarray(seed)
    if not np.issubdtype(seeds.dtype, np.integer) or seeds.size == 0 or seeds.min() < 1 or seeds.max() >= 1 << K:
        raise fail("seed", seed, f"integers in [1, {(1 << K) - 1}] (non-zero {K}-bit states)")
    state = seeds.astype(np.int64)
    out = np.empty((*seeds.shape, length), dtype=np.int64)
    for i in range(length):
        out[..., i] = state
        state = step(state, K)
    return out
