"""What Atlas is compared against: linear attention, DeltaNet and softmax attention.

All three read a memory with queries; they differ in how the memory is written (paper Section 2):
linear attention adds ``v_t k_t^T`` (the Hebbian, dot-product objective), DeltaNet takes one gradient
step on ``1/2 ||M k_t - v_t||^2`` (the Omega rule with window c = 1), and softmax attention keeps every
key and value (an unbounded memory, quadratic in T). Shapes: (B, H, T, D) queries/keys, (B, H, T, V)
values.
"""

from __future__ import annotations

import torch
from icml26_shared import check_int, fail


def _check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    if q.ndim != 4 or k.shape != q.shape:
        raise fail("k", tuple(k.shape), f"a (B, H, T, D) tensor of the shape of q {tuple(q.shape)}")
    if v.ndim != 4 or v.shape[:3] != q.shape[:3]:
        raise fail("v", tuple(v.shape), f"a (B, H, T, V) tensor with B, H, T = {tuple(q.shape[:3])}")


def causal_mask(T: int, device=None) -> torch.Tensor:
    """(T, T) boolean, True where key i may be read by query t (i <= t)."""
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def hebbian_memory(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``M_t = M_{t-1} + v_t k_t^T``, ``y_t = M_t q_t = sum_{i<=t} v_i (k_i^T q_t)`` (parallel form).

    With identity features this is linear attention; with the exponential-kernel features phi* it is
    the DeepTransformer memory of eqs. (25-26), i.e. unnormalised softmax attention.
    """
    _check_qkv(q, k, v)
    scores = (q @ k.mT).masked_fill(~causal_mask(q.shape[2], q.device), 0.0)
    return scores @ v


def linear_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Linear attention (the Hebbian rule on the raw keys): (B, H, T, D), (B, H, T, V) -> (B, H, T, V)."""
    return hebbian_memory(q, k, v)


def softmax_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, normalise: bool = True) -> torch.Tensor:
    """Causal softmax attention; ``normalise=False`` gives ``sum_{i<=t} exp(q_t^T k_i) v_i`` (eq. 26)."""
    _check_qkv(q, k, v)
    mask = causal_mask(q.shape[2], q.device)
    if normalise:
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=1.0)
    return ((q @ k.mT).exp() * mask) @ v


def delta_rule(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor, chunk_size: int = 16
) -> tuple[torch.Tensor, torch.Tensor]:
    """DeltaNet: ``M_t = M_{t-1} - beta_t (M_{t-1} k_t - v_t) k_t^T``, ``y_t = M_t q_t``, exactly, in chunks.

    Within a chunk the memory is ``M_t = M_0 + sum_{i<=t} u_i k_i^T`` where the corrections solve the
    unit lower-triangular system ``(I + tril(diag(beta) K K^T, -1)) U = diag(beta) (V - K M_0^T)`` (the
    WY/UT form of DeltaNet's parallel training). beta: (B, H, T) in [0, 2]. Returns y and the final M.
    """
    _check_qkv(q, k, v)
    if beta.shape != q.shape[:3] or not torch.isfinite(beta).all() or beta.min() < 0 or beta.max() > 2:
        raise fail("beta", tuple(beta.shape), f"a (B, H, T) tensor {tuple(q.shape[:3])} of step sizes in [0, 2]")
    C = check_int("chunk_size", chunk_size, 1)
    B, H, T, D = q.shape
    M = q.new_zeros(B, H, v.shape[-1], D)
    outputs = []
    for start in range(0, T, C):
        qc, kc, vc, bc = (
            q[:, :, start : start + C],
            k[:, :, start : start + C],
            v[:, :, start : start + C],
            beta[:, :, start : start + C],
        )
        n = qc.shape[2]
        strict = torch.ones(n, n, dtype=torch.bool, device=q.device).tril(-1)
        system = torch.eye(n, dtype=q.dtype, device=q.device) + (bc.unsqueeze(-1) * (kc @ kc.mT)) * strict
        rhs = bc.unsqueeze(-1) * (vc - kc @ M.mT)
        U = torch.linalg.solve_triangular(system, rhs, upper=False, unitriangular=True)  # (B, H, C, V)
        scores = (qc @ kc.mT).masked_fill(~causal_mask(n, q.device), 0.0)
        outputs.append(qc @ M.mT + scores @ U)
        M = M + U.mT @ kc
    return torch.cat(outputs, dim=2), M
