"""Baselines: linear attention, DeltaNet (chunked = recursion) and softmax attention against brute force."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_atlas.baselines import delta_rule, hebbian_memory, linear_attention, softmax_attention


def qkv(T=9, D=4, V=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    q, k = (
        torch.randn(2, 1, T, D, generator=g, dtype=torch.float64),
        torch.randn(2, 1, T, D, generator=g, dtype=torch.float64),
    )
    return q, torch.nn.functional.normalize(k, dim=-1), torch.randn(2, 1, T, V, generator=g, dtype=torch.float64)


def test_linear_attention_is_the_hebbian_recursion():
    q, k, v = qkv()
    M = torch.zeros(2, 1, 3, 4, dtype=torch.float64)
    ys = []
    for t in range(q.shape[2]):
        M = M + v[:, :, t, :, None] * k[:, :, t, None, :]  # M_t = M_{t-1} + v_t k_t^T
        ys.append((M @ q[:, :, t, :, None])[..., 0])
    torch.testing.assert_close(linear_attention(q, k, v), torch.stack(ys, 2))


@settings(max_examples=20, deadline=None)
@given(T=st.integers(1, 12), chunk=st.integers(1, 6), seed=st.integers(0, 1000))
def test_delta_rule_chunks_equal_the_recursion(T, chunk, seed):
    q, k, v = qkv(T=T, seed=seed)
    beta = torch.rand(2, 1, T, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    M = torch.zeros(2, 1, 3, 4, dtype=torch.float64)
    ys = []
    for t in range(T):
        residual = (M @ k[:, :, t, :, None])[..., 0] - v[:, :, t]
        M = M - beta[:, :, t, None, None] * residual[..., None] * k[:, :, t, None, :]
        ys.append((M @ q[:, :, t, :, None])[..., 0])
    y, M_chunked = delta_rule(q, k, v, beta, chunk)
    torch.testing.assert_close(y, torch.stack(ys, 2))
    torch.testing.assert_close(M_chunked, M)


def test_delta_rule_with_unit_step_stores_the_last_pair_exactly():
    q, k, v = qkv()
    _, M = delta_rule(q, k, v, torch.ones(2, 1, 9, dtype=torch.float64))
    torch.testing.assert_close((M @ k[:, :, -1, :, None])[..., 0], v[:, :, -1])


def test_softmax_attention_matches_brute_force():
    q, k, v = qkv()
    T = q.shape[2]
    logits = (q @ k.mT).masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), -torch.inf)
    torch.testing.assert_close(softmax_attention(q, k, v), logits.softmax(-1) @ v)
    unnormalised = softmax_attention(q, k, v, normalise=False)
    torch.testing.assert_close(unnormalised, logits.exp() @ v)


def test_hebbian_memory_is_causal():
    q, k, v = qkv()
    v2 = v.clone()
    v2[:, :, 5:] += 1.0
    torch.testing.assert_close(hebbian_memory(q, k, v)[:, :, :5], hebbian_memory(q, k, v2)[:, :, :5])


def test_baselines_reject_bad_inputs():
    q, k, v = qkv()
    with pytest.raises(ValueError, match="k="):
        linear_attention(q, k[:, :, :3], v)
    with pytest.raises(ValueError, match="v="):
        softmax_attention(q, k, v[:, :, :3])
    with pytest.raises(ValueError, match="beta="):
        delta_rule(q, k, v, 3.0 * torch.ones(2, 1, 9, dtype=torch.float64))
    with pytest.raises(ValueError, match="chunk_size="):
        delta_rule(q, k, v, torch.ones(2, 1, 9, dtype=torch.float64), chunk_size=0)
