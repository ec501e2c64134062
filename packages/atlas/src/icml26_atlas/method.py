"""The Atlas memory update: the Omega rule, momentum and Muon (Newton-Schulz) steps, computed in chunks.

A matrix memory ``M`` (d_v x D) maps key features ``phi(k)`` to values. At every token it takes one
optimiser step on the Omega loss, a gated least-squares loss over the last ``c`` tokens (eq. 9):

    l_t(M) = sum_{i=t-c+1}^{t} gamma_i * 1/2 ||M phi(k_i) - v_i||^2
    S_t = theta_t S_{t-1} + grad l_t(M)                 (momentum, eq. 32)
    M_t = alpha_t M_{t-1} - eta_t NS5(S_t)              (Muon step, eq. 33; NS5 = identity for OmegaNet)
    y_t = M_t phi(q_t)

``c = 1`` is the delta rule (DeltaNet, Titans); ``c >= T`` optimises over the whole context.

Chunkwise-parallel form (Section 5, eqs. 39-40): every gradient of a chunk is taken at the memory of
the chunk's start (the paper's approximation; ``chunk_size = 1`` is the exact online rule). Given those
gradients, eqs. 32-33 are computed exactly, without approximation, for all tokens of a block at once:
each momentum is a small combination ``S_t = Z_t^T F`` of the rows of ``F = [S_0; K]``, so NS5 runs on
the (V x V) Gram matrices ``S_t S_t^T`` (the same polynomial as NS5 on S_t, cheaper when D >> V) and
no (V x D) matrix is formed per token. ``omega_memory_sequential`` runs the same equations token by
token (the reference). Shapes use the letters B batch, H heads, T tokens, C chunk, n block,
L window span (n + c - 1), D feature dim, V value dim.
"""

from __future__ import annotations

import itertools

import torch
from icml26_shared import check_int, fail

NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)  # quintic Newton-Schulz coefficients of Muon (eq. 33)
NS_EPS = 1e-7
LOG_FLOOR = 1e-30  # decays of exactly 0 enter log-space products as this
SQ_NORM_FLOOR = 1e-30  # ||S||^2 below this enters sqrt as this (sqrt has an infinite slope at 0; NS_EPS >> 1e-15)


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


def newton_schulz5_gram(gram: torch.Tensor, steps: int = 5) -> torch.Tensor:
    """The left factor ``P`` of Newton-Schulz, ``NS5(X_0) = P X_0``, from the Gram matrix ``X_0 X_0^T`` alone.

    gram: (..., m, m) for ``X_0 = S / ||S||_F`` of shape (m, n). Each iteration ``X <- P_k X`` with
    ``P_k = a I + b A_k + c A_k^2`` and ``A_k = X X^T`` keeps ``X = P X_0`` and updates
    ``A_{k+1} = P_k A_k P_k``: the same polynomial as ``newton_schulz5`` (equal in exact arithmetic), at
    O(m^3) per iteration instead of O(m^2 n), which pays when n >> m (polynomial features, D >> d_v).
    """
    steps = check_int("steps", steps, 1)
    if gram.ndim < 2 or gram.shape[-1] != gram.shape[-2]:
        raise fail("gram", tuple(gram.shape), "a tensor of square matrices (..., m, m)")
    a, b, c = NS_COEFFICIENTS
    eye = torch.eye(gram.shape[-1], dtype=gram.dtype, device=gram.device)
    A, factor = gram, None
    for step in range(steps):
        P = a * eye + b * A + c * (A @ A)
        factor = P if factor is None else P @ factor
        if step < steps - 1:
            A = P @ A @ P
    return factor


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
    block_size: int = 32,
) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    """Run the Atlas memory over a sequence in the chunkwise-parallel form (eqs. 9, 32-33, 39-40).

    q, k: (B, H, T, D) query/key features phi(.); v: (B, H, T, V); eta, alpha, theta, gamma: (B, H, T)
    the input-dependent learning rate, memory decay, momentum factor and Omega window gate.
    ``window`` is c (1 = delta rule), ``ns_steps=None`` drops the Muon step (OmegaNet: plain momentum).
    Returns y (B, H, T, V) and the final (memory M (B, H, V, D), momentum S (B, H, V, D)).

    Every gradient of a chunk is taken at the chunk-start memory (eqs. 39-40); the tokens of a chunk
    are then computed in blocks of ``block_size`` (a speed knob: any block size gives the same result).
    Within a block every momentum is ``S_t = Z_t^T F`` with ``F = [S_0; K]`` (the block-start momentum
    stacked on the window keys, V + L rows) and small coefficients ``Z_t = [p_t I; diag(A_t) R]``
    (eq. 32 unrolled: ``p_t`` the momentum decay since the block start, ``A[t, i]`` the decayed window
    gate of slot i, ``R`` the residuals ``M_0 phi(k_i) - v_i`` at the chunk-start memory). So no
    (V x D) matrix per token is formed: the Gram matrices ``S_t S_t^T = Z_t^T (F F^T) Z_t`` feed the
    Newton-Schulz iteration (``newton_schulz5_gram``), the read-outs use ``S_j phi(q_t) = Z_j^T F phi(q_t)``,
    and only the block-end memory and momentum are (V x D) products.
    """
    B, H, T, D, V = _check_stream(q, k, v, {"eta": eta, "alpha": alpha, "theta": theta, "gamma": gamma})
    c = check_int("window", window, 1)
    C = check_int("chunk_size", chunk_size, 1)
    if ns_steps is not None:
        check_int("ns_steps", ns_steps, 1)
    b = check_int("block_size", block_size, 1)
    M, S = _initial_state(state, B, H, V, D, q)
    log_alpha, log_theta = alpha.clamp_min(LOG_FLOOR).log(), theta.clamp_min(LOG_FLOOR).log()
    # the c - 1 tokens before the sequence are padding with gate 0, so every window has c slots; the
    # inputs are split once (slicing every chunk out of the whole sequence would make backward O(T^2))
    k_tail, v_tail, gamma_tail = k.new_zeros(B, H, c - 1, D), v.new_zeros(B, H, c - 1, V), gamma.new_zeros(B, H, c - 1)
    sizes = _block_sizes(T, C, b)
    starts = list(itertools.accumulate(sizes[:-1], initial=0))
    outputs = []
    blocks = zip(starts, *(x.split(sizes, dim=2) for x in (q, k, v, gamma, eta, log_alpha, log_theta)))
    for start, qc, kc, vc, gc, ec, la, lt in blocks:
        n = qc.shape[2]
        if start % C == 0:
            M_chunk = M  # eqs. (39-40): the gradients of the whole chunk are taken at this memory
        kw, vw, gw = torch.cat([k_tail, kc], 2), torch.cat([v_tail, vc], 2), torch.cat([gamma_tail, gc], 2)
        k_tail, v_tail, gamma_tail = kw[:, :, n:], vw[:, :, n:], gw[:, :, n:]
        y, M, S = _omega_block(M_chunk, M, S, qc, kw, vw, gw, ec, la, lt, c, ns_steps)
        outputs.append(y)
    return torch.cat(outputs, dim=2), (M, S)


def _omega_block(M_chunk, M, S, qc, kw, vw, gw, ec, la, lt, c, ns_steps):
    """One block of n tokens of ``omega_memory``: outputs (B, H, n, V), block-end memory and momentum.

    M_chunk: the chunk-start memory (gradients, eq. 39); M, S: block-start memory and momentum; qc:
    (B, H, n, D) queries; kw, vw, gw: the L = n + c - 1 window slots (keys, values, gates) that the
    block's windows cover; ec, la, lt: (B, H, n) eta, log alpha, log theta.
    """
    n, V = qc.shape[2], vw.shape[-1]
    eye = torch.eye(V, dtype=qc.dtype, device=qc.device).unsqueeze(-2)  # (V, 1, V)
    # eq. (9) gradient at the chunk-start memory: slot i contributes gamma_i R_i phi(k_i)^T
    residual = kw @ M_chunk.mT - vw  # (B, H, L, V)
    span = torch.arange(n + c - 1, device=qc.device)
    rows = torch.arange(n, device=qc.device).unsqueeze(-1)
    in_window = (span >= rows) & (span <= rows + c - 1)  # token t sees slots t .. t + c - 1
    weights = in_window.to(qc.dtype) * gw.unsqueeze(-2)  # (B, H, n, L): gamma_i on the window
    A = _decay_matrix(lt) @ weights  # (B, H, n, L): eq. (32) unrolled, S_t = p_t S + sum_i A[t, i] R_i phi(k_i)^T
    p = lt.cumsum(-1).exp()  # p_t = prod of theta from the block start to t
    F = torch.cat([S, kw], dim=-2)  # (B, H, V + L, D)
    Z = torch.cat(  # (B, H, V + L, n, V): Z[:, :, :, t] = Z_t = [p_t I; diag(A_t) R], so that S_t = Z_t^T F
        [eye * p[:, :, None, :, None], A.mT.unsqueeze(-1) * residual.unsqueeze(-2)], dim=-3
    )
    Zf = Z.flatten(-2)  # (B, H, V + L, n V)
    read = (Zf.mT @ (F @ qc.mT)).unflatten(-2, (n, V))  # (B, H, n_j, V, n_t): S_j phi(q_t)
    if ns_steps is None:  # eq. (33) without Muon: U_j = S_j
        factors = None
    else:  # eq. (33): U_j = NS5(S_j) = factors_j S_j, from the Gram matrices S_j S_j^T = Z_j^T F F^T Z_j
        gram = torch.einsum("bhxtv,bhxtw->bhtvw", Z, ((F @ F.mT) @ Zf).unflatten(-1, (n, V)))
        scale = 1 / (gram.diagonal(dim1=-2, dim2=-1).sum(-1).clamp_min(SQ_NORM_FLOOR).sqrt() + NS_EPS)  # 1/||S_j||
        factors = newton_schulz5_gram(gram * scale[..., None, None] ** 2, ns_steps) * scale[..., None, None]
        read = factors @ read  # (B, H, n_j, V, n_t): U_j phi(q_t)
    Alpha = _decay_matrix(la) * ec.unsqueeze(-2)  # Alpha[t, j] = prod_{l=j+1}^{t} alpha_l * eta_j
    alpha_from_start = la.cumsum(-1).exp()
    # eq. (33) unrolled: y_t = M_t phi(q_t) with M_t = alpha_from_start[t] M - sum_{j<=t} Alpha[t, j] U_j
    y = alpha_from_start.unsqueeze(-1) * (qc @ M.mT) - torch.einsum("bhtj,bhjvt->bhtv", Alpha, read)
    last = Alpha[:, :, -1]  # sum_j last_j U_j = W F with W = sum_j last_j factors_j Z_j^T
    if factors is None:
        W = torch.einsum("bhj,bhxjv->bhvx", last, Z)
    else:
        W = torch.einsum("bhjvw,bhxjw->bhvx", last[..., None, None] * factors, Z)
    return y, alpha_from_start[:, :, -1, None, None] * M - W @ F, Z[:, :, :, -1].mT @ F


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


def _block_sizes(T: int, C: int, b: int) -> list[int]:
    """Lengths of the blocks that cover T tokens, at most b long, none crossing a multiple of C."""
    sizes = []
    for chunk_start in range(0, T, C):
        n = min(C, T - chunk_start)
        sizes += [b] * (n // b) + ([n % b] if n % b else [])
    return sizes


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
