"""Sheaf operators: coboundary/Laplacian identities, global sections, the SPD convolution and rank lifting."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_spd_sheaf import (
    RestrictionMaps,
    SPDSheafConv,
    SPDStream,
    check_graph,
    dirichlet_energy,
    lift_edge_features,
    rank_lift_stats,
    sheaf_laplacian,
    spd_exp,
)
from icml26_spd_sheaf.method import rodrigues, spd_adjoint, spd_readout, vector_act, vector_adjoint
from icml26_spd_sheaf.spd import direction_log_features, sym

TRIANGLE = torch.tensor([[0, 1, 1, 2, 2, 0], [1, 0, 2, 1, 0, 2]])


def random_graph(seed: int, nodes: int = 6, p: float = 0.5) -> torch.Tensor:
    rng = np.random.default_rng(seed)
    pairs = [(u, v) for u in range(nodes) for v in range(u + 1, nodes) if rng.random() < p] or [(0, 1)]
    return torch.tensor([q for u, v in pairs for q in ((u, v), (v, u))]).T


def random_sym(generator, *shape):
    return sym(torch.randn(*shape, 3, 3, generator=generator, dtype=torch.float64))


@settings(deadline=None)
@given(st.integers(0, 10_000))
def test_laplacian_is_coboundary_adjoint_times_coboundary(seed):
    g = torch.Generator().manual_seed(seed)
    edges = random_graph(seed)
    reverse = check_graph(edges, 6)
    maps = torch.randn(edges.shape[1], 3, 3, generator=g, dtype=torch.float64)
    a, b = random_sym(g, 6, 2), random_sym(g, 6, 2)
    lap = lambda x: sheaf_laplacian(x, edges, reverse, maps, normalise=False)  # noqa: E731
    # <L, Delta L> = ||dL||^2 (sheaf Dirichlet energy) and Delta is self-adjoint
    torch.testing.assert_close((a * lap(a)).sum(), dirichlet_energy(a, edges, reverse, maps))
    torch.testing.assert_close((a * lap(b)).sum(), (lap(a) * b).sum())
    assert (a * sheaf_laplacian(a, edges, reverse, maps)).sum() >= -1e-9  # normalised: still PSD


def test_reverse_edges_are_found():
    edges = random_graph(3)
    reverse = check_graph(edges, 6)
    assert torch.equal(edges[:, reverse], edges.flip(0))


def test_spd_sheaf_has_global_sections_that_the_vector_sheaf_lacks():
    """A 'twisted' triangle: F = -I at one end of one edge. Vector sheaf: no non-zero global section.
    SPD sheaf with the same maps (acting by congruence W L W^T): every constant section survives."""
    reverse = check_graph(TRIANGLE, 3)
    maps = torch.eye(3, dtype=torch.float64).repeat(6, 1, 1)
    maps[0] = -maps[0]

    def kernel_dim(apply, shape):
        basis = torch.eye(int(np.prod(shape)), dtype=torch.float64)
        matrix = torch.stack([apply(e.view(shape)).flatten() for e in basis])
        return int((torch.linalg.eigvalsh(sym(matrix)) < 1e-9).sum())

    vector = lambda x: sheaf_laplacian(x, TRIANGLE, reverse, maps, vector_act, vector_adjoint)  # noqa: E731
    spd = lambda x: sym(sheaf_laplacian(sym(x), TRIANGLE, reverse, maps))  # noqa: E731
    assert kernel_dim(vector, (3, 3, 1)) == 0
    assert kernel_dim(spd, (3, 1, 3, 3)) - 3 * 3 == 6  # 3 antisymmetric directions per node are not SPD tangents
    constant = random_sym(torch.Generator().manual_seed(0), 1, 1).expand(3, 1, 3, 3)
    torch.testing.assert_close(sheaf_laplacian(constant, TRIANGLE, reverse, maps), torch.zeros_like(constant))


def test_orthogonal_maps_are_rotations_and_match_matrix_exp():
    a = torch.randn(50, 3, dtype=torch.float64)
    a[0] = 0.0
    w = rodrigues(a)
    zero = torch.zeros(50, dtype=torch.float64)
    skew = torch.stack(
        [
            torch.stack([zero, -a[:, 2], a[:, 1]], -1),
            torch.stack([a[:, 2], zero, -a[:, 0]], -1),
            torch.stack([-a[:, 1], a[:, 0], zero], -1),
        ],
        -2,
    )
    torch.testing.assert_close(w, torch.linalg.matrix_exp(skew))
    torch.testing.assert_close(w @ w.transpose(-1, -2), torch.eye(3, dtype=torch.float64).expand(50, 3, 3))


def test_convolution_keeps_spd_and_is_a_homomorphism_step():
    torch.manual_seed(0)
    edges = random_graph(1)
    reverse = check_graph(edges, 6)
    conv = SPDSheafConv(2, 4, features=5)
    s = random_sym(torch.Generator().manual_seed(1), 6, 2).float()
    out = conv(s, torch.randn(6, 5), edges, reverse)
    assert out.shape == (6, 4, 3, 3)
    torch.testing.assert_close(out, out.transpose(-1, -2))
    assert torch.linalg.eigvalsh(spd_exp(out.double())).min() > 0
    # ReEig in log coordinates floors every log-eigenvalue at log(eps)
    assert torch.linalg.eigvalsh(out).min() >= np.log(conv.reeig_eps) - 1e-4


def _path_diffusion(normalise: bool, stalks: torch.Tensor) -> torch.Tensor:
    """One diffusion + identity mixing of SPDSheafConv on the 3-atom path 0-1-2 with identity maps."""
    edges = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    conv = SPDSheafConv(1, 1, features=2, maps="identity", normalise=normalise).double()
    with torch.no_grad():
        conv.theta.copy_(torch.eye(1))  # isolate the diffusion: L~ = L - alpha Delta L, no mixing, no bias
    return conv.linear_part(stalks, torch.zeros(3, 2, dtype=torch.float64), edges, check_graph(edges, 3))


def test_unnormalised_diffusion_fixes_global_sections_and_normalised_fixes_rescaled_ones():
    """Issue 16.5: equal stalks are a global section; D^{-1/2} Delta D^{-1/2} moves them, Delta does not."""
    L = sym(torch.randn(3, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64))
    section = L.expand(3, 1, 3, 3).clone()
    torch.testing.assert_close(_path_diffusion(False, section), section)
    moved = (_path_diffusion(True, section) - section).abs().amax()
    assert moved > 0.05 * L.abs().amax()  # the degree-normalised default moves the global section
    rescaled = torch.tensor([1.0, 2.0, 1.0], dtype=torch.float64).sqrt().view(3, 1, 1, 1) * section
    torch.testing.assert_close(_path_diffusion(True, rescaled), rescaled)  # its fixed points: D^{1/2} L
    with pytest.raises(ValueError, match="normalise"):
        SPDSheafConv(1, 1, 2, normalise=1)


def test_identity_maps_give_graph_diffusion():
    edges = random_graph(2)
    reverse = check_graph(edges, 6)
    maps = RestrictionMaps(4, kind="identity")(torch.randn(6, 4, dtype=torch.float64), edges)
    x = random_sym(torch.Generator().manual_seed(2), 6, 1)
    lap = sheaf_laplacian(x, edges, reverse, maps, normalise=False)
    deg = torch.zeros(6, dtype=x.dtype).index_add_(0, edges[1], torch.ones(edges.shape[1], dtype=x.dtype))
    neighbour_sum = torch.zeros_like(x).index_add_(0, edges[1], x[edges[0]])
    torch.testing.assert_close(lap, deg.view(-1, 1, 1, 1) * x - neighbour_sum)


def test_two_non_collinear_rank_one_inputs_lift_to_full_rank():
    """Log-Euclidean mean of two rank-1 + eps I matrices at angle t: eigenvalues eps and
    exp(((1 +- c) log(1 + eps) + (1 -+ c) log eps) / 2), c = cos t (eigenvalues 1 +- c of d1 d1^T + d2 d2^T)."""
    eps, t = 1e-4, np.deg2rad(109.5)
    d = torch.tensor([[1.0, 0.0, 0.0], [np.cos(t), np.sin(t), 0.0]], dtype=torch.float64)
    edges = torch.tensor([[1, 2], [0, 0]])  # both bonds point into atom 0
    maps = torch.eye(3, dtype=torch.float64).repeat(2, 1, 1)
    lifted = lift_edge_features(direction_log_features(d, eps).unsqueeze(1), edges, maps, 3, spd_adjoint)[0, 0]
    eig = torch.linalg.eigvalsh(spd_exp(lifted))
    c = np.cos(t)
    in_plane = [np.exp(((1 + k * c) * np.log1p(eps) + (1 - k * c) * np.log(eps)) / 2) for k in (1, -1)]
    expected = sorted([eps, *in_plane])
    np.testing.assert_allclose(eig.numpy(), expected, rtol=1e-6)
    stats = rank_lift_stats(direction_log_features(d, eps), lifted.unsqueeze(0), ratio=1e-3)
    assert stats["log10_cond_before"] == pytest.approx(4.0, abs=1e-3) and stats["log10_cond_after"] < 3


def test_check_graph_rejects_bad_graphs():
    with pytest.raises(ValueError, match="edge_index=.*node ids"):
        check_graph(torch.tensor([[0, 5], [5, 0]]), 3)
    with pytest.raises(ValueError, match="edge_index=.*reverse"):
        check_graph(torch.tensor([[0], [1]]), 2)
    with pytest.raises(ValueError, match="edge_index=.*self-loops"):
        check_graph(torch.tensor([[1], [1]]), 2)
    with pytest.raises(ValueError, match="edge_index=.*\\(2, E\\)"):
        check_graph(torch.zeros(3, 2, dtype=torch.long), 2)
    with pytest.raises(ValueError, match="edge_index=.*integer"):
        check_graph(torch.zeros(2, 2), 2)
    with pytest.raises(ValueError, match="num_nodes="):
        check_graph(torch.zeros(2, 0, dtype=torch.long), 0)  # empty graph


def test_layers_reject_bad_arguments():
    with pytest.raises(ValueError, match="maps="):
        RestrictionMaps(4, kind="diagonal")
    with pytest.raises(ValueError, match="reeig_eps="):
        SPDSheafConv(1, 1, 4, reeig_eps=0.0)
    with pytest.raises(ValueError, match="out_channels="):
        SPDSheafConv(1, 0, 4)
    with pytest.raises(ValueError, match="ratio="):
        rank_lift_stats(torch.zeros(1, 3, 3), torch.zeros(1, 3, 3), ratio=0.0)


@settings(deadline=None)
@given(st.integers(0, 10_000))
def test_spd_readout_is_rotation_invariant(seed):
    g = torch.Generator().manual_seed(seed)
    s = random_sym(g, 7, 2)
    batch = torch.tensor([0, 0, 0, 1, 1, 1, 1])
    rotation, _ = torch.linalg.qr(torch.randn(3, 3, generator=g, dtype=torch.float64))
    rotated = rotation @ s @ rotation.T
    torch.testing.assert_close(spd_readout(rotated, batch, 2), spd_readout(s, batch, 2))
    assert spd_readout(s, batch, 2).shape == (2, 2 * 2 * 3)


def test_lift_removes_only_the_determinant():
    """Inputs are translated to unit determinant: log-traces vanish, condition numbers are kept."""
    torch.manual_seed(0)
    stream = SPDStream(features=4, channels=2, depth=1, maps="identity")
    d = torch.tensor([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
    edges = torch.tensor([[1, 0, 2, 0], [0, 1, 0, 2]])
    lifted = stream.lift(d, torch.zeros(3, 4), edges)
    torch.testing.assert_close(torch.diagonal(lifted, dim1=-2, dim2=-1).sum(-1), torch.zeros(3, 1), atol=1e-5, rtol=0)
    stats = rank_lift_stats(direction_log_features(d[:1], 1e-4), lifted[1:2, 0])
    assert stats["log10_cond_after"] == pytest.approx(stats["log10_cond_before"], abs=1e-4)  # leaf: one bond


@settings(deadline=None)
@given(st.integers(0, 10_000))
def test_orthogonal_transport_form_equals_the_general_laplacian(seed):
    g = torch.Generator().manual_seed(seed)
    edges = random_graph(seed)
    reverse = check_graph(edges, 6)
    maps = rodrigues(torch.randn(edges.shape[1], 3, generator=g, dtype=torch.float64))
    x = random_sym(g, 6, 2)
    torch.testing.assert_close(
        sheaf_laplacian(x, edges, reverse, maps, orthogonal=True), sheaf_laplacian(x, edges, reverse, maps)
    )
    v = torch.randn(6, 3, 2, generator=g, dtype=torch.float64)
    fast = sheaf_laplacian(v, edges, reverse, maps, vector_act, vector_adjoint, orthogonal=True)
    torch.testing.assert_close(fast, sheaf_laplacian(v, edges, reverse, maps, vector_act, vector_adjoint))
