"""The seed code: bank = generator, search = brute force, quantiser, reconstruction, exact bits."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_squant import SeedConfig, basis_bank, compress, compress_fixed_seed, generate_basis, relative_error
from icml26_squant.method import (
    TENSOR_METADATA_BITS,
    exponent_range,
    from_blocks,
    quantise_coefficients,
    search_blocks,
    shared_exponent,
    to_blocks,
)

SMALL = SeedConfig(K=6, tile=(1, 8), P=3)


def _weights(rows=4, cols=16, seed=0):
    return np.random.default_rng(seed).normal(0, 0.02, size=(rows, cols))


@pytest.mark.parametrize("fill", ["row", "basis"])
def test_bank_windows_equal_the_generator(fill):
    config = SeedConfig(K=7, tile=(2, 3), P=4, fill=fill)
    bank = basis_bank(config.K, config.C, config.P, config.fill)
    pick = np.array([0, 5, 77, len(bank.seeds) - 1])
    np.testing.assert_allclose(generate_basis(bank.seeds[pick], config), bank.U[pick])
    assert np.abs(bank.U).max() <= 1.0 and bank.U.min() == -1.0


def test_search_equals_brute_force_over_all_seeds():
    W = _weights()
    blocks = to_blocks(W, SMALL.tile)
    e_low = exponent_range(W, SMALL)
    idx, _q, _e, err = search_blocks(blocks, SMALL, e_low)
    bank = basis_bank(SMALL.K, SMALL.C, SMALL.P, SMALL.fill)
    for b, w in enumerate(blocks):
        errors = []
        for s in bank.seeds:
            U = generate_basis(int(s), SMALL)
            t = np.linalg.lstsq(U, w, rcond=None)[0]
            qs, es = quantise_coefficients(t, 4, e_low, 4)
            errors.append(np.square(w - U @ (qs * 2.0**es)).sum())
        assert err[b] == pytest.approx(min(errors), rel=1e-5)
        assert errors[idx[b]] == pytest.approx(min(errors), rel=1e-5)


def test_reconstruction_matches_search_error():
    W = _weights(8, 32)
    code = compress(W, SMALL)
    blocks = to_blocks(W, SMALL.tile)
    _idx, _q, _e, err = search_blocks(blocks, SMALL, exponent_range(W, SMALL))
    assert np.square(W - code.reconstruct()).sum() == pytest.approx(err.sum(), rel=1e-4)


def test_full_shortlist_equals_exhaustive_and_refinement_never_hurts():
    W = _weights(8, 32, seed=3)
    exhaustive = relative_error(W, compress(W, SMALL).reconstruct())
    full = relative_error(W, compress(W, SeedConfig(K=6, P=3, shortlist=63)).reconstruct())
    refined = relative_error(W, compress(W, SeedConfig(K=6, P=3, refine=True)).reconstruct())
    assert full == pytest.approx(exhaustive, rel=1e-9)
    assert refined <= exhaustive + 1e-12


def test_search_beats_any_fixed_seed():
    W = _weights(8, 32, seed=5)
    best = relative_error(W, compress(W, SMALL).reconstruct())
    for seed in (1, 17, 40):
        assert best < relative_error(W, compress_fixed_seed(W, SMALL, seed).reconstruct())


def test_exact_bits_per_weight():
    W = _weights(8, 32)
    code = compress(W, SeedConfig(K=6, tile=(2, 4), P=3))
    n_blocks = 8 * 32 // 8
    assert code.bits == n_blocks * (6 + 4 + 3 * 4) + TENSOR_METADATA_BITS
    assert SeedConfig(K=16, tile=(1, 8), P=3).bits_per_weight == 4.0  # SeedLM 4 bit
    assert SeedConfig(K=16, tile=(1, 12), P=4).bits_per_weight == 3.0  # SeedLM 3 bit


def test_code_fields_are_in_their_ranges():
    W = _weights(8, 32)
    code = compress(W, SMALL)
    assert code.q.min() >= -8 and code.q.max() <= 7
    assert (code.e >= code.e_low).all() and (code.e <= code.e_low + 15).all()
    assert code.seeds.min() >= 1 and code.seeds.max() < 1 << SMALL.K


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.integers(1, 3))
def test_blocks_round_trip(r, c, nr, nc):
    W = np.arange(r * nr * c * nc, dtype=float).reshape(r * nr, c * nc)
    blocks = to_blocks(W, (r, c))
    assert blocks.shape == (nr * nc, r * c)
    np.testing.assert_array_equal(blocks[0], W[:r, :c].ravel())
    np.testing.assert_array_equal(from_blocks(blocks, W.shape, (r, c)), W)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=6), st.integers(2, 8))
def test_quantiser_error_is_at_most_half_a_step(values, bits):
    t = np.array(values)
    q, e = quantise_coefficients(t, bits, -40, 8)
    assert np.abs(t - q * 2.0**e).max() <= 0.5 * 2.0**e + 1e-12
    assert q.min() >= -(1 << (bits - 1)) and q.max() <= (1 << (bits - 1)) - 1


def test_zero_block_reconstructs_to_zero():
    W = _weights()
    W[:, :8] = 0.0
    np.testing.assert_array_equal(compress(W, SMALL).reconstruct()[:, :8], 0.0)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"K": 1}, "K"),
        ({"K": 40}, "K"),
        ({"tile": (0, 8)}, "tile"),
        ({"tile": (8,)}, "tile"),
        ({"P": 0}, "P"),
        ({"P": 9}, "P"),
        ({"coef_bits": 1}, "coef_bits"),
        ({"exponent_bits": 0}, "exponent_bits"),
        ({"fill": "diagonal"}, "fill"),
        ({"shortlist": 0}, "shortlist"),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        SeedConfig(**kwargs)


def test_rejects_block_that_does_not_divide():
    with pytest.raises(ValueError, match="tile="):
        compress(_weights(4, 12), SeedConfig(K=6, tile=(1, 8), P=3))
    with pytest.raises(ValueError, match="tile="):
        compress(_weights(3, 16), SeedConfig(K=6, tile=(2, 4), P=3))


def test_rejects_non_finite_and_non_matrix_weights():
    W = _weights()
    W[0, 0] = np.nan
    with pytest.raises(ValueError, match="W="):
        compress(W, SMALL)
    with pytest.raises(ValueError, match="W="):
        compress(np.zeros(16), SMALL)


def test_fixed_seed_rejects_bad_seed():
    with pytest.raises(ValueError, match="seed="):
        compress_fixed_seed(_weights(), SMALL, 0)
    with pytest.raises(ValueError, match="seed="):
        compress_fixed_seed(_weights(), SMALL, 1 << 6)


def test_table_decoder_equals_lfsr_decoder():
    code = compress(_weights(8, 32), SeedConfig(K=7, tile=(2, 4), P=3))
    np.testing.assert_array_equal(code.reconstruct("table"), code.reconstruct("lfsr"))
    with pytest.raises(ValueError, match="decoder="):
        code.reconstruct("magic")


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 4))
def test_refinement_never_increases_the_error(seed, P):
    W = _weights(4, 16, seed)
    plain = SeedConfig(K=5, tile=(2, 4), P=P)
    refined = SeedConfig(K=5, tile=(2, 4), P=P, refine=True)
    assert (
        relative_error(W, compress(W, refined).reconstruct())
        <= relative_error(W, compress(W, plain).reconstruct()) + 1e-12
    )


def test_blocks_on_the_top_quantiser_level_round_trip_exactly():
    # issue 16.1: the float32 projection returns 7 * 2^-6 (1 + eps); ceil(log2(peak / 7)) jumped to 2^-5
    config = SeedConfig(K=8, tile=(1, 8), P=3)
    W = (generate_basis(1, config) @ (np.array([7, -3, 2]) * 2.0**-6))[None, :]
    code = compress(W, config)
    np.testing.assert_array_equal(code.q, [[7, -3, 2]])
    np.testing.assert_array_equal(code.e, [-6])
    rng = np.random.default_rng(0)
    for _ in range(32):  # planted codes on the top (7) or bottom (-8) level
        q = rng.integers(-8, 8, size=3)
        q[rng.integers(3)] = rng.choice([7, -8])
        W = (generate_basis(int(rng.integers(1, 256)), config) @ (q * 2.0 ** int(rng.integers(-9, -3))))[None, :]
        np.testing.assert_array_equal(compress(W, config).reconstruct(), W.astype(np.float32))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3, allow_subnormal=False), min_size=1, max_size=6), st.integers(2, 8))
def test_shared_exponent_is_the_finest_step_without_clipping(values, bits):
    t = np.array(values)
    e = int(shared_exponent(t, bits))
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    fits = lambda k: lo <= np.rint(t / 2.0**k).min() and np.rint(t / 2.0**k).max() <= hi  # noqa: E731
    assert fits(e) and (not fits(e - 1) or not np.any(t))
