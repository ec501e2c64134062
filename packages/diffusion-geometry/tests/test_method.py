"""The diagnostics against closed forms, exact limits, invariances and bad inputs."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_diffusion_geometry import (
    LinearGenerator,
    RankOneGenerator,
    generative_geometry,
    geometric_hotspots,
    laplacian,
    principal_stretch,
    random_subspace,
    robust_normalise,
    subspace_jacobian,
)
from icml26_diffusion_geometry.analytic import (
    detail_template,
    numpy_laplacian,
    orthonormal_pair,
    smooth_template,
)

SHAPE = (1, 8, 8)
DIM = 64


def _setup(seed, d=8, eps=0.02):
    rng = np.random.default_rng(seed)
    W = np.linalg.qr(rng.normal(size=(DIM, d)))[0]
    n = rng.normal(size=d)
    return rng, W, n, eps * n / np.linalg.norm(n)


def _geometry(F, z, W, n, eps=0.02, shape=SHAPE, **kw):
    latent = torch.tensor(z).reshape(1, *shape)
    return generative_geometry(F, latent, W.shape[1], eps, W=torch.tensor(W)[None], n=torch.tensor(n)[None], **kw)


def _assert_matches(geo, closed, rtol=1e-8):
    for key in ("LS", "LC", "PHFE", "axis_cos"):
        np.testing.assert_allclose(float(getattr(geo, key)[0]), closed[key], rtol=rtol, atol=1e-9, err_msg=key)
    for key in ("LS_map", "LC_map", "PHFE_map"):
        np.testing.assert_allclose(getattr(geo, key)[0].numpy(), closed[key], rtol=rtol, atol=1e-8, err_msg=key)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 16), st.sampled_from([(1, 8, 8), (3, 4, 5)]))
def test_linear_generator_matches_its_closed_form(seed, d, out_shape):
    rng, W, n, n_scaled = _setup(seed, d)
    out = int(np.prod(out_shape))
    F = LinearGenerator(rng.normal(size=(out, DIM)), rng.normal(size=out), out_shape)
    _assert_matches(_geometry(F, rng.normal(size=DIM), W, n), F.closed_form(W, n_scaled), rtol=1e-7)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["identity", "sigmoid"]), st.floats(0.5, 2000), st.floats(-2, 2))
def test_rank_one_generators_match_their_closed_form_at_the_official_step(seed, profile, k, c):
    rng, W, n, n_scaled = _setup(seed)
    u, v = orthonormal_pair(rng, DIM)
    T = detail_template(rng, SHAPE) if profile == "identity" else smooth_template(rng, SHAPE)
    F = RankOneGenerator(smooth_template(rng, SHAPE), T, u, v, c=c, profile=profile, k=k)
    z = F.boundary_point(rng.normal(size=DIM)) + rng.normal() / k * u
    _assert_matches(_geometry(F, z, W, n), F.closed_form(z, W, n_scaled, 0.02), rtol=1e-6)


def test_finite_differences_converge_to_the_exact_jacobian():
    rng, W, _, _ = _setup(3)
    u, v = orthonormal_pair(rng, DIM)
    F = RankOneGenerator(np.zeros(SHAPE), smooth_template(rng, SHAPE), u, v, c=1.5, profile="sigmoid", k=3.0)
    z = F.boundary_point(rng.normal(size=DIM)) + 0.1 * u
    n = rng.normal(size=8)
    errors = []
    for eps in (1e-1, 1e-2, 1e-3, 1e-4):
        geo = _geometry(F, z, W, n, eps)
        exact = F.closed_form(z, W, eps * n / np.linalg.norm(n), None)
        errors.append(abs(float(geo.LS[0]) - exact["LS"]) / exact["LS"])
    assert errors == sorted(errors, reverse=True) and errors[-1] < 1e-4  # O(eps): forward differences


def test_switch_closed_form_is_the_sigmoid_slope_at_the_boundary():
    """At g(z) = 0 the exact LS is (k/4) ||T|| ||W^T grad g||, and PHFE / LS^2 = Var(Lap T) / ||T||^2."""
    rng, W, _, n_scaled = _setup(5)
    u, v = orthonormal_pair(rng, DIM)
    T = smooth_template(rng, SHAPE)
    F = RankOneGenerator(np.zeros(SHAPE), T, u, v, c=0.7, profile="sigmoid", k=20.0)
    z = F.boundary_point(rng.normal(size=DIM))
    exact = F.closed_form(z, W, n_scaled, None)
    grad = u + 0.7 * (z @ v) * v
    assert exact["LS"] == pytest.approx(20.0 / 4 * np.linalg.norm(T) * np.linalg.norm(W.T @ grad), rel=1e-12)
    lap = numpy_laplacian(T)
    assert exact["PHFE"] / exact["LS"] ** 2 == pytest.approx(lap.var(ddof=1) / np.sum(T**2), rel=1e-10)


def test_full_subspace_gives_the_spectral_norm_and_a_smaller_subspace_bounds_it():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(DIM, DIM))
    F = LinearGenerator(A, np.zeros(DIM), SHAPE)
    sigma = np.linalg.svd(A, compute_uv=False)[0]
    z = torch.tensor(rng.normal(size=DIM)).reshape(1, *SHAPE)
    full = generative_geometry(F, z, DIM, generator=torch.Generator().manual_seed(0))
    assert float(full.LS[0]) == pytest.approx(sigma, rel=1e-9)
    for d in (1, 4, 16):
        assert float(generative_geometry(F, z, d, generator=torch.Generator().manual_seed(d)).LS[0]) <= sigma + 1e-9


def test_scaling_the_generator_scales_ls_and_phfe_but_not_the_axis():
    rng, W, n, _ = _setup(2)
    u, v = orthonormal_pair(rng, DIM)
    F = RankOneGenerator(np.zeros(SHAPE), detail_template(rng, SHAPE), u, v, c=2.0)
    z = rng.normal(size=DIM)
    base = _geometry(F, z, W, n)
    scaled = _geometry(lambda x: -3.0 * F(x), z, W, n)
    assert float(scaled.LS[0]) == pytest.approx(3 * float(base.LS[0]), rel=1e-10)
    assert float(scaled.LC[0]) == pytest.approx(float(base.LC[0]), rel=1e-8)
    assert float(scaled.axis_cos[0]) == pytest.approx(float(base.axis_cos[0]), rel=1e-12)


def test_batched_and_chunked_geometry_equal_one_sample_at_a_time():
    rng = np.random.default_rng(4)
    A = rng.normal(size=(DIM, DIM)) / 8
    F = lambda x: torch.tanh(LinearGenerator(A, np.zeros(DIM), SHAPE)(x)) ** 2  # noqa: E731
    z = torch.tensor(rng.normal(size=(3, *SHAPE)))
    batch = generative_geometry(F, z, 6, generator=torch.Generator().manual_seed(0))
    chunked = generative_geometry(F, z, 6, generator=torch.Generator().manual_seed(0), batch_size=5)
    for key in ("LS", "LC", "PHFE", "axis_cos", "LC_map"):
        torch.testing.assert_close(getattr(batch, key), getattr(chunked, key), rtol=1e-7, atol=1e-9)
    again = generative_geometry(F, z[1:2], 6, W=batch_W(z, 6)[1:2], n=batch_n(z, 6)[1:2])
    torch.testing.assert_close(again.LS, batch.LS[1:2], rtol=1e-12, atol=0)
    torch.testing.assert_close(again.LC, batch.LC[1:2], rtol=1e-10, atol=1e-12)


def batch_W(z, d):
    """The subspaces generative_geometry draws for seed 0 (one per sample, then the offsets)."""
    gen = torch.Generator().manual_seed(0)
    return torch.stack([random_subspace(DIM, d, gen) for _ in range(z.shape[0])])


def batch_n(z, d):
    gen = torch.Generator().manual_seed(0)
    for _ in range(z.shape[0]):
        random_subspace(DIM, d, gen)
    return torch.randn(z.shape[0], d, generator=gen, dtype=torch.float64)


def test_bfloat16_neighbour_is_rounded_before_the_finite_difference_steps():
    """Issue 20: with ``latent_dtype=torch.bfloat16`` (the paper's SD 3.5 path) the neighbour z' is rounded to
    bfloat16 and the eps steps are added to the rounded z' in float32, as the official code does; F sees
    bfloat16-representable centres at z'. float32 is the identity, and the order moves LC under a bf16 sampler."""
    A = torch.randn(3 * 4 * 4, 2 * 4 * 4, generator=torch.Generator().manual_seed(0), dtype=torch.float32) / 6
    seen = []

    def F(z):  # a smooth map behind a sampler that casts its input to bfloat16, as SD3Generator does
        seen.append(z.clone())
        return torch.tanh(z.to(torch.bfloat16).float().flatten(1) @ A).reshape(-1, 2, 4, 4)

    z = torch.randn(2, 3, 4, 4, generator=torch.Generator().manual_seed(1)).to(torch.bfloat16).float()
    kwargs = {"d_low": 3, "eps": 0.02, "batch_size": None}  # z bfloat16-representable: held alike (issue 27)
    official = generative_geometry(
        F, z, generator=torch.Generator().manual_seed(2), latent_dtype=torch.bfloat16, **kwargs
    )
    neighbour = seen[1].reshape(2, 4, 3, 4, 4)  # second call: z' and its 3 steps, per sample
    torch.testing.assert_close(neighbour[:, 0], neighbour[:, 0].to(torch.bfloat16).float(), rtol=0, atol=0)
    seen.clear()
    plain = generative_geometry(F, z, generator=torch.Generator().manual_seed(2), **kwargs)
    same = generative_geometry(F, z, generator=torch.Generator().manual_seed(2), latent_dtype=torch.float32, **kwargs)
    torch.testing.assert_close(same.LC, plain.LC, rtol=0, atol=0)
    torch.testing.assert_close(official.LS, plain.LS, rtol=0, atol=0)  # the centre z is treated alike
    assert not torch.equal(official.LC, plain.LC)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 6))
def test_principal_stretch_matches_numpy_svd(seed, d):
    J = np.random.default_rng(seed).normal(size=(2, 10, d))
    ls, v1 = principal_stretch(torch.tensor(J))
    for b in range(2):
        _, s, vt = np.linalg.svd(J[b])
        assert float(ls[b]) == pytest.approx(s[0], rel=1e-9)
        assert abs(float(v1[b] @ torch.tensor(vt[0]))) == pytest.approx(1.0, abs=1e-7)
        assert float(v1[b][v1[b].abs().argmax()]) > 0  # the sign convention


def test_laplacian_matches_numpy_and_vanishes_on_ramps_inside():
    x = torch.tensor(np.random.default_rng(0).normal(size=(2, 3, 6, 7)))
    np.testing.assert_allclose(laplacian(x)[1].numpy(), numpy_laplacian(x[1].numpy()), atol=1e-12)
    ramp = torch.arange(49, dtype=torch.float64).reshape(1, 1, 7, 7)
    assert float(laplacian(ramp)[..., 1:-1, 1:-1].abs().max()) == 0.0


def test_subspace_is_orthonormal_and_jacobian_of_linear_map_is_exact():
    W = random_subspace(DIM, 5, torch.Generator().manual_seed(0))
    torch.testing.assert_close(W.T @ W, torch.eye(5, dtype=torch.float64))
    A = np.random.default_rng(0).normal(size=(DIM, DIM))
    F = LinearGenerator(A, np.ones(DIM), SHAPE)
    _, cols = subspace_jacobian(F, torch.zeros(1, *SHAPE, dtype=torch.float64), W[None], 0.5)
    np.testing.assert_allclose(cols[0].reshape(5, -1).numpy(), (A @ W.numpy()).T, atol=1e-10)


def test_hotspots_and_robust_normalise():
    ref_lc, ref_phfe = torch.arange(10.0), torch.arange(10.0)
    hot = geometric_hotspots(torch.tensor([20.0, 20.0, 1.0]), torch.tensor([0.0, 9.0, 0.0]), ref_lc, ref_phfe)
    assert hot.tolist() == [True, False, False]
    x = robust_normalise(torch.tensor(np.random.default_rng(0).normal(size=(8, 8))))
    assert float(x.min()) == 0.0 and float(x.max()) == pytest.approx(1.0) and x.shape == (8, 8)


def _linear():
    return LinearGenerator(np.eye(DIM), np.zeros(DIM), SHAPE)


def _z():
    return torch.zeros(1, *SHAPE, dtype=torch.float64)


@pytest.mark.parametrize(("kwargs", "name"), [({"d_low": 0}, "d_low="), ({"d_low": DIM + 1}, "d_low=")])
def test_rejects_subspace_dimension_outside_one_to_latent_size(kwargs, name):
    with pytest.raises(ValueError, match=name):
        generative_geometry(_linear(), _z(), **kwargs)


@pytest.mark.parametrize("eps", [0.0, -0.02, float("nan")])
def test_rejects_non_positive_step(eps):
    with pytest.raises(ValueError, match="eps="):
        generative_geometry(_linear(), _z(), 4, eps)


def test_rejects_outputs_without_spatial_layout():
    with pytest.raises(ValueError, match=r"F\(z\)=.*4-D"):
        generative_geometry(lambda x: x.flatten(1), _z(), 4)
    with pytest.raises(ValueError, match=r"F\(z\)=.*height and width >= 3"):
        generative_geometry(lambda x: x.reshape(x.shape[0], 16, 2, 2), _z(), 4)


def test_rejects_non_finite_generator_output_and_latents():
    with pytest.raises(FloatingPointError, match="NaN"):
        generative_geometry(lambda x: x * float("nan"), _z(), 4)
    with pytest.raises(ValueError, match="z="):
        generative_geometry(_linear(), _z() * float("nan"), 4)
    with pytest.raises(ValueError, match="z="):
        generative_geometry(_linear(), torch.zeros(8), 4)


def test_rejects_conditioning_subspace_and_offsets_of_the_wrong_shape():
    with pytest.raises(ValueError, match="cond="):
        generative_geometry(lambda x, c: x, _z(), 4, cond=torch.zeros(2, 10))
    with pytest.raises(ValueError, match="W="):
        generative_geometry(_linear(), _z(), 4, W=torch.zeros(1, DIM, 5, dtype=torch.float64))
    with pytest.raises(ValueError, match="n="):
        generative_geometry(_linear(), _z(), 4, n=torch.ones(1, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match="batch_size="):
        generative_geometry(_linear(), _z(), 4, batch_size=0)


def test_rejects_bad_quantiles():
    with pytest.raises(ValueError, match="quantile="):
        geometric_hotspots(torch.ones(3), torch.ones(3), torch.ones(3), torch.ones(3), quantile=1.0)
    with pytest.raises(ValueError, match="low, high="):
        robust_normalise(torch.ones(3, 3), 0.9, 0.1)


def _bf16_sampler(record):
    """An elementwise map behind a sampler that casts its input to bfloat16 (as SD3Generator does); it records
    every (input, output) so that a test can redo the official steps on exactly what F saw and returned."""

    def F(z):
        zb = z.to(torch.bfloat16).float()
        out = torch.tanh(1.5 * zb) + 0.1 * zb.roll(1, dims=-1) ** 2
        record.append((z.clone(), out))
        return out

    return F


def _official_direction(inputs, outputs, W, eps):
    """v1 (d,) and W v1 (D,) from one call's (1 + d) points, the package's sign rule; J as in the package."""
    columns = (outputs[None, 1:] - outputs[None, :1]) / eps  # (1, d, C, H, W)
    _, v1 = principal_stretch(columns.flatten(2).transpose(1, 2))
    return v1[0], (W[None] @ v1[:, :, None])[0, :, 0]


def test_bfloat16_derivative_points_are_built_in_bfloat16_arithmetic():
    """Issue 27: with ``latent_dtype=torch.bfloat16`` the points z + eps V1 and z' + eps V1' are what the
    official code computes in bfloat16 (V1 rounded, normalised, eps V1 rounded, the sum rounded), bit for bit,
    and so are P1, PHFE and LC_map; adding in float32 and rounding once differs in some entries."""
    shape, d, eps = (1, 8, 16, 16), 3, 0.02
    dim = 8 * 16 * 16
    z = torch.randn(shape, generator=torch.Generator().manual_seed(3))  # float32, not bfloat16-representable
    W = random_subspace(dim, d, torch.Generator().manual_seed(4), torch.float32)
    n = torch.tensor([[1.0, 0.0, 0.0]])  # ||n|| = 1: z' = z + eps W[:, 0] exactly in any order of operations
    record = []
    geo = generative_geometry(
        _bf16_sampler(record), z, d, eps, W=W[None], n=n, latent_dtype=torch.bfloat16, batch_size=None
    )
    (centre_in, centre_out), (prime_in, prime_out), (plus_in, plus_out) = record

    bf16 = torch.bfloat16
    z_b = z.to(bf16)  # the official latent is bfloat16
    v1, direction = _official_direction(centre_in, centre_out, W, eps)
    z_prime = (z_b.float() + (eps * W[:, 0]).view(shape)).to(bf16)
    torch.testing.assert_close(prime_in[:1], z_prime.float(), rtol=0, atol=0)
    v1_p, direction_p = _official_direction(prime_in, prime_out, W, eps)
    if torch.dot(v1, v1_p) < 0:
        direction_p = -direction_p
    expected = []
    for base, vec in ((z_b, direction), (z_prime, direction_p)):
        V1 = vec.view(shape).to(bf16)
        V1 = V1 / (torch.norm(V1.float()) + 1e-8)  # bfloat16 / float32 scalar: stays bfloat16, as official
        expected.append((base + eps * V1).float())  # z + eps V1 in bfloat16 arithmetic
    torch.testing.assert_close(plus_in, torch.cat(expected), rtol=0, atol=0)

    P1 = (plus_out[:1].float() - centre_out[:1]) / eps
    P1_p = (plus_out[1:].float() - prime_out[:1]) / eps
    torch.testing.assert_close(geo.LC_map, (P1_p - P1).pow(2).sum(1).sqrt() / eps, rtol=0, atol=0)
    torch.testing.assert_close(geo.PHFE, laplacian(P1).flatten(1).var(dim=1), rtol=0, atol=0)

    once = torch.cat([(z_b.float() + eps * direction.view(shape) / direction.norm()).to(bf16).float()])
    assert (once != expected[0]).any()  # the float32-then-round recipe (before issue 27) is another point
