"""The Atlas memory update: the Omega rule, momentum and Muon (Newton-Schulz) steps, computed in chunks.

A matrix memory ``M`` (d_v x D) maps key features ``phi(k)`` to values. At every token it takes one
optimiser step on the Omega loss, a gated least-squares loss over the last ``c`` tokens (eq. 9):

    l_t(M) = sum_{i=t-c+1}^{t} gamma_i * 1/2 ||M phi(k_i) - v_i||^2
    S_t = theta_t S_{t-1} + grad l_t(M)                 (momentum, eq. 32)
    M_t = alpha_t M_{t-1} - eta_t NS5(S_t)              (Muon step, eq. 33; NS5 = identity for OmegaNet)
    y_t = M_t phi(q_t)

``c = 1`` is the delta rule (DeltaNet, Titans); ``c >= T`` optimises over the whole context. Chunked
training (Section 5, eqs. 39-40) takes every gradient of a chunk at the memory of the chunk's start, so
the momenta, their NS5 orthogonalisations and the memory states of a chunk come from a few batched
tensor products; ``chunk_size = 1`` is the exact online recursion. Shapes use the letters
B batch, H heads, T tokens, C chunk, L window span (C + c - 1), D feature dim, V value dim.
"""

from __future__ import annotations

import torch
from icml26_shared import check_int, fail

NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)  # quintic Newton-Schulz coefficients of Muon (eq. 33)
NS_EPS = 1e-7
LOG_FLOOR = 1e-30  # decays of exactly 0 enter log-space products as this


def newton_schulz5(S: torch.Tensor, steps: int = 5) -> torch.Tensor:
    """Approximate orthogonalisation ``U V^T`` of ``S = U Sigma V^T`` (..., m, n) by ``steps`` quintic
    Newton-Schulz iterations ``X <- a X + b (X X^T) X + c (X X^T)^2 X`` from ``X = S / ||S||_F``."""
    steps = check_int("steps", steps, 1)
    if S.ndim < 2:
        raise fail("S", tuple(S.shape), "a tensor of matrices (..., m, n)")
    a, b, c = NS_COEFFICIENTS
    transposed = S.shape[-2] > S.shape[-1]
    X = S.mT if transposed else S
    X = X / (torch.linalg.matrix_norm(X, keepdim=True) + NS_EPS)
    for _ in range(steps):
        A = X @ X.mT
        X = a * X + (b * A + c * A @ A) @ X
    return X.mT if transposed else X


def _check_stream(q, k, v, gates: dict[str, torch.Tensor]) -> tuple[int, int, int, int, int]:
    if q.ndim != 4 or k.shape != q.shape:
        raise fail("k", tuple(k.shape), f"a (B, H, T, D) tensor of the shape of q {tuple(q.shape)}")
    if v.ndim != 4 or v.shape[:3] != q.shape[:3]:
        raise fail("v", tuple(v.shape), f"a (B, H, T, V) tensor with B, H, T = {tuple(q.shape[:3])}")
    for name, gate in gates.items():
        if gate.shape != q.shape[:3]:
            raise fail(name, tuple(gate.shape), f"a (B, H, T) tensor of shape {tuple(q.shape[:3])}")
        if not torch.isfinite(gate).all() or gate.min() < 0 or (name != "eta" and gate.max() > 1):
            raise fail(name, f"values in [{gate.min().item():.3g}, {gate.max().item():.3g}]", _GATE_RANGE[name])
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not torch.isfinite(x).all():
            raise fail(name, "a tensor with NaN or inf", "finite values")
    B, H, T, D = q.shape
    return B, H, T, D, v.shape[-1]


_GATE_RANGE = {
    "eta": "learning rates >= 0",
    "alpha": "decays in [0, 1]",
    "theta": "momentum factors in [0, 1]",
    "gamma": "window gates in [0, 1]",
}


def _decay_matrix(log_decay: torch.Tensor) -> torch.Tensor:
    """``P[t, j] = prod_{l=j+1}^{t} decay_l`` for j <= t, else 0: (..., C) -> (..., C, C)."""
    cum = torch.cumsum(log_decay, dim=-1)
    diff = cum.unsqueeze(-1) - cum.unsqueeze(-2)
    C = log_decay.shape[-1]
    causal = torch.ones(C, C, dtype=torch.bool, device=log_decay.device).tril()
    return torch.where(causal, diff, torch.full_like(diff, -torch.inf)).exp()


def omega_memory(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    eta: torch.Tensor,
    alpha: torch.Tensor,
    theta: torch.Tensor,
    gamma: torch.Tensor,
    window: int = 4,
    chunk_size: int = 16,
    ns_steps: int | None = 5,
    state: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    """Run the Atlas memory over a sequence, chunk by chunk (eqs. 9, 32-33, 39-40).

    q, k: (B, H, T, D) query/key features phi(.); v: (B, H, T, V); eta, alpha, theta, gamma: (B, H, T)
    the input-dependent learning rate, memory decay, momentum factor and Omega window gate.
    ``window`` is c (1 = delta rule), ``ns_steps=None`` drops the Muon step (OmegaNet: plain momentum).
    Returns y (B, H, T, V) and the final (memory M (B, H, V, D), momentum S (B, H, V, D)).
    """
    B, H, T, D, V = _check_stream(q, k, v, {"eta": eta, "alpha": alpha, "theta": theta, "gamma": gamma})
    c = check_int("window", window, 1)
    C = check_int("chunk_size", chunk_size, 1)
    if ns_steps is not None:
        check_int("ns_steps", ns_steps, 1)
    M, S = _initial_state(state, B, H, V, D, q)
    # the c - 1 tokens before the sequence are padding with gate 0, so every window has c slots
    k_pad = torch.nn.functional.pad(k, (0, 0, c - 1, 0))
    v_pad = torch.nn.functional.pad(v, (0, 0, c - 1, 0))
    gamma_pad = torch.nn.functional.pad(gamma, (c - 1, 0))
    log_alpha, log_theta = alpha.clamp_min(LOG_FLOOR).log(), theta.clamp_min(LOG_FLOOR).log()
    outputs = []
    for start in range(0, T, C):
        end = min(start + C, T)
        n = end - start
        kw, vw, gw = (
            k_pad[:, :, start : end + c - 1],
            v_pad[:, :, start : end + c - 1],
            gamma_pad[:, :, start : end + c - 1],
        )
        # eq. (9) gradient at the chunk-start memory: every token's residual M_0 phi(k_i) - v_i
        residual = torch.einsum("bhvd,bhld->bhlv", M, kw) - vw  # (B, H, L, V)
        span = torch.arange(n + c - 1, device=q.device)
        rows = torch.arange(n, device=q.device).unsqueeze(-1)
        in_window = (span >= rows) & (span <= rows + c - 1)  # token t sees slots t .. t + c - 1
        weights = in_window.to(q.dtype) * gw.unsqueeze(-2)  # (B, H, C, L): gamma_i on the window
        lt = log_theta[:, :, start:end]
        Theta = _decay_matrix(lt)  # momentum decay between tokens of the chunk
        theta_from_start = lt.cumsum(-1).exp()  # prod_{l=start}^{t} theta_l
        A = Theta @ weights  # (B, H, C, L): S_t = theta_from_start S_prev + sum_i A[t, i] grad_i
        weighted = A.unsqueeze(-1) * residual.unsqueeze(2)  # (B, H, C, L, V): A[t, i] * residual_i
        momenta = weighted.mT @ kw.unsqueeze(2) + theta_from_start[..., None, None] * S.unsqueeze(2)  # (B, H, C, V, D)
        updates = newton_schulz5(momenta, ns_steps) if ns_steps is not None else momenta  # eq. (33)
        la = log_alpha[:, :, start:end]
        Alpha = _decay_matrix(la) * eta[:, :, start:end].unsqueeze(-2)  # Alpha[t, j] = prod alpha * eta_j
        alpha_from_start = la.cumsum(-1).exp()
        qc = q[:, :, start:end]
        # y_t = M_t phi(q_t) with M_t = alpha_from_start[t] M_0 - sum_j Alpha[t, j] U_j
        y_memory = alpha_from_start.unsqueeze(-1) * torch.einsum("bhvd,bhtd->bhtv", M, qc)
        read = (updates.flatten(2, 3) @ qc.mT).unflatten(2, (n, V))  # (B, H, C_j, V, C_t): U_j phi(q_t)
        y_updates = torch.einsum("bhtj,bhjvt->bhtv", Alpha, read)
        outputs.append(y_memory - y_updates)
        M = alpha_from_start[:, :, -1, None, None] * M - torch.einsum("bhj,bhjvd->bhvd", Alpha[:, :, -1], updates)
        S = momenta[:, :, -1]
    return torch.cat(outputs, dim=2), (M, S)


def omega_memory_sequential(
    q, k, v, eta, alpha, theta, gamma, window=4, chunk_size=16, ns_steps=5, state=None
) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    """The same recursion as ``omega_memory``, one token at a time (the reference for the chunked form).

    Gradients are taken at the memory of the current chunk's start, exactly as in the chunked form;
    with ``chunk_size=1`` that is the memory of the previous token (the plain online rule).
    """
    B, H, T, D, V = _check_stream(q, k, v, {"eta": eta, "alpha": alpha, "theta": theta, "gamma": gamma})
    c = check_int("window", window, 1)
    C = check_int("chunk_size", chunk_size, 1)
    M, S = _initial_state(state, B, H, V, D, q)
    outputs = []
    for t in range(T):
        if t % C == 0:
            M_start = M
        grad = torch.zeros_like(S)
        for i in range(max(0, t - c + 1), t + 1):  # eq. (9): the window of the last c tokens
            residual = torch.einsum("bhvd,bhd->bhv", M_start, k[:, :, i]) - v[:, :, i]
            grad = grad + gamma[:, :, i, None, None] * residual.unsqueeze(-1) * k[:, :, i].unsqueeze(-2)
        S = theta[:, :, t, None, None] * S + grad  # eq. (32)
        update = newton_schulz5(S, ns_steps) if ns_steps is not None else S
        M = alpha[:, :, t, None, None] * M - eta[:, :, t, None, None] * update  # eq. (33)
        outputs.append(torch.einsum("bhvd,bhd->bhv", M, q[:, :, t]))
    return torch.stack(outputs, dim=2), (M, S)


def _initial_state(state, B, H, V, D, like):
    if state is None:
        zeros = like.new_zeros(B, H, V, D)
        return zeros, zeros
    M, S = state
    if M.shape != (B, H, V, D) or S.shape != (B, H, V, D):
        raise fail("state", (tuple(M.shape), tuple(S.shape)), f"memory and momentum of shape {(B, H, V, D)}")
    return M, S


def omega_least_squares(keys: torch.Tensor, values: torch.Tensor, gamma: torch.Tensor | None = None) -> torch.Tensor:
    """The exact minimiser of eq. (9) over a window that covers every pair (c = infinity).

    keys: (N, D) features, values: (N, V), gamma: (N,) gates in [0, 1] (default 1). Returns the
    minimum-norm memory M (V, D) of ``sum_i gamma_i ||M k_i - v_i||^2``: what an Omega memory converges
    to, and so the most it can store.
    """
    if keys.ndim != 2 or values.ndim != 2 or keys.shape[0] != values.shape[0]:
        raise fail("values", tuple(values.shape), f"an (N, V) tensor with N = len(keys) = {keys.shape[0]}")
    if gamma is None:
        gamma = torch.ones(keys.shape[0], dtype=keys.dtype)
    if gamma.shape != keys.shape[:1] or gamma.min() < 0 or gamma.max() > 1:
        raise fail("gamma", tuple(gamma.shape), f"({keys.shape[0]},) window gates in [0, 1]")
    w = gamma.sqrt().unsqueeze(-1)
    return torch.linalg.lstsq(w * keys, w * values, driver="gelsy").solution.mT
