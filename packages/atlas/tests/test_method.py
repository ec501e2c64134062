"""The Atlas memory: chunked = sequential, special cases, Newton-Schulz, the Omega minimiser, bad inputs."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_atlas import newton_schulz5, omega_least_squares, omega_memory, omega_memory_sequential
from icml26_atlas.baselines import delta_rule
from icml26_atlas.method import newton_schulz5_gram


def stream(B=2, H=2, T=11, D=5, V=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    q, k = (
        torch.randn(B, H, T, D, generator=g, dtype=torch.float64),
        torch.randn(B, H, T, D, generator=g, dtype=torch.float64),
    )
    v = torch.randn(B, H, T, V, generator=g, dtype=torch.float64)
    eta, alpha, theta, gamma = (torch.rand(B, H, T, generator=g, dtype=torch.float64) for _ in range(4))
    return q, k, v, 0.1 * eta, alpha, theta, gamma


@settings(max_examples=20, deadline=None)
@given(
    T=st.integers(1, 23),
    window=st.integers(1, 5),
    chunk=st.integers(1, 12),
    block=st.integers(1, 9),
    dims=st.sampled_from([(5, 3), (2, 4)]),
    ns=st.sampled_from([None, 5]),
    seed=st.integers(0, 100),
)
def test_chunked_equals_sequential(T, window, chunk, block, dims, ns, seed):
    args = stream(T=T, D=dims[0], V=dims[1], seed=seed)
    y1, (M1, S1) = omega_memory(*args, window, chunk, ns, block_size=block)
    y2, (M2, S2) = omega_memory_sequential(*args, window, chunk, ns)
    torch.testing.assert_close(y1, y2, rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(M1, M2, rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(S1, S2, rtol=1e-9, atol=1e-9)


def test_blocks_inside_a_chunk_equal_the_sequential_form():
    # chunk 16 in blocks of 5: gradients stay at the chunk-start memory across the blocks
    args = stream(T=40, D=7, V=3, seed=4)
    y, (M, S) = omega_memory(*args, 4, 16, 5, block_size=5)
    y_ref, (M_ref, S_ref) = omega_memory_sequential(*args, 4, 16, 5)
    torch.testing.assert_close(y, y_ref, rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(M, M_ref, rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(S, S_ref, rtol=1e-9, atol=1e-9)


def test_float32_parallel_form_stays_near_the_float64_recursion():
    # NS5 from Gram matrices squares the condition number: in float32 the measured error is 3e-5 on
    # outputs of size 0.6 (the direct form: 1.4e-6); the bound leaves a 30x margin
    args = stream(B=1, H=2, T=48, D=45, V=8, seed=3)
    y_ref, _ = omega_memory_sequential(*args, 4, 16, 5)
    y, _ = omega_memory(*(x.float() for x in args), 4, 16, 5)
    assert (y.double() - y_ref).abs().max() < 1e-3


def _slice_sizes(y):
    """The sizes of every tensor that the autograd graph of y slices a view out of."""
    seen, stack, sizes = set(), [y.grad_fn], []
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if node.name() == "SliceBackward0":
            sizes.append(tuple(node._saved_self_sym_sizes))
        stack.extend(next_node for next_node, _ in node.next_functions)
    return sizes


def test_no_block_is_sliced_out_of_the_whole_sequence():
    # regression: slicing every chunk out of the full-length inputs gave each chunk a full-length zero
    # gradient in backward, O(T^2 / C) time and memory; the inputs are now split once
    T = 60
    args = [x.requires_grad_() for x in stream(T=T)]
    y, _ = omega_memory(*args, 3, 8, 5, block_size=4)
    assert all(max(size) < T for size in _slice_sizes(y.sum()))


def test_state_carries_over_between_calls():
    q, k, v, eta, alpha, theta, gamma = stream(T=12)
    y, state = omega_memory(q, k, v, eta, alpha, theta, gamma, 1, 4, 5)
    first, mid = omega_memory(*(x[:, :, :8] for x in (q, k, v, eta, alpha, theta, gamma)), 1, 4, 5)
    second, end = omega_memory(*(x[:, :, 8:] for x in (q, k, v, eta, alpha, theta, gamma)), 1, 4, 5, state=mid)
    torch.testing.assert_close(torch.cat([first, second], 2), y)
    torch.testing.assert_close(end[0], state[0])


def test_window_one_without_momentum_is_deltanet():
    q, k, v, eta, _, _, _ = stream(T=20)
    k = torch.nn.functional.normalize(k, dim=-1)
    ones = torch.ones_like(eta)
    y_omega, (M_omega, _) = omega_memory(q, k, v, eta, ones, 0 * ones, ones, 1, 1, None)
    y_delta, M_delta = delta_rule(q, k, v, eta, chunk_size=6)
    torch.testing.assert_close(y_omega, y_delta)
    torch.testing.assert_close(M_omega, M_delta)


def test_omega_rule_on_one_pair_is_a_gradient_step():
    k = torch.tensor([[[[1.0, 0.0]]]], dtype=torch.float64)
    v = torch.tensor([[[[2.0]]]], dtype=torch.float64)
    one = torch.ones(1, 1, 1, dtype=torch.float64)
    _, (M, S) = omega_memory(k, k, v, 0.5 * one, one, one, one, 3, 1, None)
    # M_1 = M_0 - eta (M_0 k - v) k^T with M_0 = 0 -> eta v k^T
    torch.testing.assert_close(M, torch.tensor([[[[1.0, 0.0]]]], dtype=torch.float64))
    torch.testing.assert_close(S, torch.tensor([[[[-2.0, 0.0]]]], dtype=torch.float64))


@settings(max_examples=20, deadline=None)
@given(m=st.integers(1, 6), n=st.integers(1, 6), seed=st.integers(0, 1000))
def test_newton_schulz_maps_each_singular_value_by_the_quintic(m, n, seed):
    S = torch.randn(m, n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    x = torch.linalg.svdvals(S) / torch.linalg.matrix_norm(S)
    for _ in range(5):  # the scalar iteration sigma <- a sigma + b sigma^3 + c sigma^5
        x = 3.4445 * x - 4.7750 * x**3 + 2.0315 * x**5
    X = newton_schulz5(S)
    assert X.shape == S.shape
    torch.testing.assert_close(torch.linalg.svdvals(X), x.sort(descending=True).values, atol=1e-5, rtol=1e-5)
    assert x.max() < 1.25


@settings(max_examples=20, deadline=None)
@given(m=st.integers(1, 6), n=st.integers(1, 6), seed=st.integers(0, 1000))
def test_newton_schulz_from_the_gram_matrix_equals_the_direct_iteration(m, n, seed):
    S = torch.randn(3, m, n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    X0 = S / (torch.linalg.matrix_norm(S, keepdim=True) + 1e-7)
    torch.testing.assert_close(newton_schulz5_gram(X0 @ X0.mT) @ X0, newton_schulz5(S), rtol=1e-10, atol=1e-12)


def test_newton_schulz_keeps_singular_vectors():
    U, _ = torch.linalg.qr(torch.randn(5, 5, dtype=torch.float64))
    V, _ = torch.linalg.qr(torch.randn(3, 3, dtype=torch.float64))
    S = U[:, :3] @ torch.diag(torch.tensor([3.0, 1.0, 0.5], dtype=torch.float64)) @ V.T
    X = newton_schulz5(S)
    # X = U f(Sigma) V^T: U^T X V is diagonal
    inner = U[:, :3].T @ X @ V
    torch.testing.assert_close(inner, torch.diag(torch.diagonal(inner)), atol=1e-10, rtol=0)


def test_least_squares_interpolates_below_capacity_and_matches_lstsq():
    g = torch.Generator().manual_seed(0)
    keys, values = (
        torch.randn(6, 10, generator=g, dtype=torch.float64),
        torch.randn(6, 3, generator=g, dtype=torch.float64),
    )
    M = omega_least_squares(keys, values)
    torch.testing.assert_close(keys @ M.T, values)
    torch.testing.assert_close(M, (torch.linalg.pinv(keys) @ values).T)
    # gates 0 remove a pair from the loss
    gamma = torch.tensor([1.0, 1, 1, 1, 1, 0], dtype=torch.float64)
    M5 = omega_least_squares(keys, values, gamma)
    torch.testing.assert_close(keys[:5] @ M5.T, values[:5])


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"window": 0}, "window"),
        ({"chunk_size": 0}, "chunk_size"),
        ({"ns_steps": 0}, "steps"),
        ({"block_size": 0}, "block_size"),
    ],
)
def test_rejects_bad_sizes(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        omega_memory(*stream(), **kwargs)


@pytest.mark.parametrize("gate", ["eta", "alpha", "theta", "gamma"])
def test_rejects_gates_out_of_range(gate):
    q, k, v, eta, alpha, theta, gamma = stream()
    gates = {"eta": eta, "alpha": alpha, "theta": theta, "gamma": gamma}
    gates[gate] = gates[gate] - 2.0 if gate == "eta" else gates[gate] + 2.0
    with pytest.raises(ValueError, match=f"{gate}="):
        omega_memory(q, k, v, **gates)


def test_rejects_mismatched_shapes_and_nan():
    q, k, v, eta, alpha, theta, gamma = stream()
    with pytest.raises(ValueError, match="k="):
        omega_memory(q, k[:, :, :5], v, eta, alpha, theta, gamma)
    with pytest.raises(ValueError, match="v="):
        omega_memory(q, k, v[:, :, :5], eta, alpha, theta, gamma)
    with pytest.raises(ValueError, match="eta="):
        omega_memory(q, k, v, eta[:, :, :5], alpha, theta, gamma)
    with pytest.raises(ValueError, match="q="):
        omega_memory(q * float("nan"), k, v, eta, alpha, theta, gamma)
    with pytest.raises(ValueError, match="state="):
        omega_memory(q, k, v, eta, alpha, theta, gamma, state=(torch.zeros(1), torch.zeros(1)))
    with pytest.raises(ValueError, match="gram="):
        newton_schulz5_gram(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="values="):
        omega_least_squares(k[0, 0], v[0, 0, :4])
    with pytest.raises(ValueError, match="gamma="):
        omega_least_squares(k[0, 0], v[0, 0], -torch.ones(11, dtype=torch.float64))
