"""The bf16 codec: bit-exact round trips, plane formulas, entropy, checksums and bad inputs."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_zipmoe import ChunkCorruptError, compress_bf16, decompress_bf16, entropy_bits, merge_planes, split_planes
from icml26_zipmoe.codec import CODECS, Chunk, CompressedTensor, bf16_words, decompress_exponent


@given(st.lists(st.integers(0, 0xFFFF), min_size=1, max_size=300), st.integers(1, 7), st.sampled_from(CODECS))
def test_roundtrip_is_bit_exact_for_every_word(words, num_chunks, codec):
    """Any 16-bit pattern (NaNs, infs, subnormals, -0) comes back identical."""
    num_chunks = min(num_chunks, len(words))
    tensor = torch.from_numpy(np.array(words, dtype=np.uint16).view(np.int16)).view(torch.bfloat16)
    packed = compress_bf16(tensor, num_chunks, codec)
    assert len(packed.e_chunks) == num_chunks
    np.testing.assert_array_equal(bf16_words(decompress_bf16(packed)), np.array(words, dtype=np.uint16))


def test_planes_match_the_bit_layout():
    x = torch.tensor([1.0, -2.0, 0.15625, -0.0], dtype=torch.bfloat16)
    exponent, sign_mantissa = split_planes(bf16_words(x))
    np.testing.assert_array_equal(exponent, [127, 128, 124, 0])  # biased exponents of 1, 2, 0.15625 = 1.25 * 2^-3
    np.testing.assert_array_equal(sign_mantissa, [0, 0x80, 0x20, 0x80])  # sign bit 7; 1.25 -> mantissa 0b0100000
    np.testing.assert_array_equal(merge_planes(exponent, sign_mantissa), bf16_words(x))


def test_shape_is_kept_and_sm_may_come_from_a_cache_slot():
    x = torch.randn(6, 10).to(torch.bfloat16)
    packed = compress_bf16(x, 3)
    _, sign_mantissa = split_planes(bf16_words(x))
    assert torch.equal(decompress_bf16(packed, sign_mantissa), x) and decompress_bf16(packed).shape == (6, 10)


def test_entropy_limits():
    assert entropy_bits(np.zeros(100, np.uint8)) == 0.0
    assert entropy_bits(np.arange(256, dtype=np.uint8)) == pytest.approx(8.0)
    assert entropy_bits(np.array([1, 2, 3, 4], np.uint8)) == pytest.approx(2.0)


def test_gaussian_weights_have_low_exponent_entropy_and_compress():
    """Gaussian weights (std 0.02) live in a few binades: about 2.5-3.5 exponent bits, SM near 8 bits."""
    x = (torch.randn(200_000, generator=torch.Generator().manual_seed(0)) * 0.02).to(torch.bfloat16)
    exponent, sign_mantissa = split_planes(bf16_words(x))
    assert 2.5 < entropy_bits(exponent) < 3.5 and entropy_bits(sign_mantissa) > 7.9
    assert compress_bf16(x, codec="zstd").ratio < 0.75


def test_corrupted_chunk_is_detected_not_decoded():
    packed = compress_bf16(torch.randn(1000).to(torch.bfloat16), 2, "zstd")
    bad = packed.e_chunks[0].blob[:-3] + bytes(3)
    broken = CompressedTensor(
        packed.shape,
        packed.codec,
        (Chunk(bad, packed.e_chunks[0].size, packed.e_chunks[0].crc32), packed.e_chunks[1]),
        packed.sm_chunk,
    )
    with pytest.raises(ChunkCorruptError, match="chunk"):
        decompress_exponent(broken)


def test_flipped_sm_byte_fails_the_crc():
    packed = compress_bf16(torch.randn(64).to(torch.bfloat16), 1)
    sm = bytearray(packed.sm_chunk.blob)
    sm[5] ^= 1
    broken = CompressedTensor(packed.shape, packed.codec, packed.e_chunks, Chunk(bytes(sm), 64, packed.sm_chunk.crc32))
    with pytest.raises(ChunkCorruptError, match="CRC-32"):
        decompress_bf16(broken)


def test_wrong_size_chunk_is_detected():
    packed = compress_bf16(torch.randn(64).to(torch.bfloat16), 1, "lz4")
    chunk = packed.e_chunks[0]
    with pytest.raises(ChunkCorruptError, match="chunk"):
        Chunk(chunk.blob, chunk.size + 1, chunk.crc32).decode("lz4")


def test_rejects_non_bf16_tensor():
    with pytest.raises(TypeError, match="tensor.dtype=torch.float32"):
        compress_bf16(torch.randn(4))
    with pytest.raises(TypeError, match="tensor=ndarray"):
        compress_bf16(np.zeros(4))


def test_rejects_bad_num_chunks_and_codec():
    x = torch.randn(4).to(torch.bfloat16)
    with pytest.raises(ValueError, match="num_chunks=0"):
        compress_bf16(x, 0)
    with pytest.raises(ValueError, match="num_chunks=5"):
        compress_bf16(x, 5)
    with pytest.raises(ValueError, match="codec='gzip'"):
        compress_bf16(x, 1, "gzip")


def test_rejects_mismatched_planes():
    with pytest.raises(ValueError, match="sign_mantissa="):
        merge_planes(np.zeros(3, np.uint8), np.zeros(4, np.uint8))


def test_histogram_entropy_adds_planes_and_rejects_an_empty_histogram():
    from icml26_zipmoe.codec import histogram_entropy

    a, b = np.repeat(np.uint8(3), 10), np.arange(6, dtype=np.uint8)
    counts = np.bincount(a, minlength=256) + np.bincount(b, minlength=256)
    assert histogram_entropy(counts) == pytest.approx(entropy_bits(np.concatenate([a, b])), abs=1e-12)
    with pytest.raises(ValueError, match="counts="):
        histogram_entropy(np.zeros(256))
