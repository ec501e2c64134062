"""The stored form: pack/unpack round trips, exact length, every field at its bit width."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_squant import SeedCode, SeedConfig, compress, field_widths, pack, unpack

CFG = SeedConfig(K=6, tile=(2, 4), P=3)


def _code(seed=0, shape=(4, 16), config=CFG):
    return compress(np.random.default_rng(seed).normal(0, 0.02, size=shape), config)


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 1000), st.sampled_from([CFG, SeedConfig(K=7, tile=(1, 8), P=4, coef_bits=3, exponent_bits=5)]))
def test_round_trip_is_exact_and_length_is_the_code_bits(seed, config):
    code = _code(seed, (4, 16), config)
    data = pack(code)
    assert len(data) == -(-code.bits // 8)
    back = unpack(data, config)
    assert back.shape == code.shape and back.e_low == code.e_low
    for name in ("seeds", "q", "e"):
        np.testing.assert_array_equal(getattr(back, name), getattr(code, name))
    np.testing.assert_array_equal(back.reconstruct(), code.reconstruct())


def test_fields_sit_at_their_bit_widths():
    config = SeedConfig(K=5, tile=(1, 4), P=2, coef_bits=3, exponent_bits=2)
    assert field_widths(config) == (5, 2, 3, 3) and sum(field_widths(config)) == config.block_bits
    code = SeedCode(config, (1, 4), np.array([0b10110]), np.array([[-4, 3]]), np.array([-7]), -9)
    bits = np.unpackbits(np.frombuffer(pack(code), dtype=np.uint8))
    header = "11110111" + format(1, "032b") + format(4, "032b")  # e_low = -9 (int8), rows, cols
    block = "10110" + "10" + "100" + "011"  # seed, e - e_low = 2, q = -4, 3 in two's complement
    assert "".join(map(str, bits[: len(header) + len(block)])) == header + block
    assert not bits[len(header) + len(block) :].any()  # zero padding to a whole byte


@pytest.mark.parametrize(
    ("field", "kwargs"),
    [
        ("seeds", {"seeds": np.array([0, 1, 1, 1])}),
        ("q", {"q": np.full((4, 3), 8)}),
        ("e", {"e": np.full(4, 100)}),
        ("e_low", {"e_low": -200}),
    ],
)
def test_pack_rejects_fields_that_do_not_fit(field, kwargs):
    code = _code()
    fields = {k: getattr(code, k) for k in ("config", "shape", "seeds", "q", "e", "e_low")}
    if field == "e_low":
        fields["e"] = fields["e"] - fields["e_low"] + kwargs["e_low"]
    with pytest.raises(ValueError, match=f"{field}="):
        pack(SeedCode(**{**fields, **kwargs}))


def test_unpack_rejects_bad_data():
    data = pack(_code())
    for bad in (data[:-1], data + b"\0", b"\1\2", "text"):
        with pytest.raises(ValueError, match="data="):
            unpack(bad, CFG)
    with pytest.raises(ValueError, match="data="):
        unpack(data, SeedConfig(K=6, tile=(1, 8), P=4))  # a different format: the length cannot match
