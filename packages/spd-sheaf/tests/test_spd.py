"""SPD machinery: spectral functions against scipy, their gradients, and the two Lie group structures."""

import numpy as np
import pytest
import scipy.linalg
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_spd_sheaf import (
    check_spd,
    direction_log_features,
    lc_chart,
    lc_inverse,
    lc_product,
    lc_unchart,
    le_inverse,
    le_power,
    le_product,
    reeig,
    spd_exp,
    spd_log,
)


def random_spd(seed: int, n: int = 3, batch: int = 4) -> torch.Tensor:
    a = torch.randn(batch, n, n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return a @ a.transpose(-1, -2) + 0.1 * torch.eye(n, dtype=torch.float64)


@settings(deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 5))
def test_exp_matches_scipy_and_log_is_its_inverse(seed, n):
    x = random_spd(seed, n)
    s = spd_log(x)
    for si, ei in zip(s, spd_exp(s), strict=True):  # scipy's Pade expm: an independent reference
        np.testing.assert_allclose(ei.numpy(), scipy.linalg.expm(si.numpy()), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(spd_exp(s).numpy(), x.numpy(), rtol=1e-8, atol=1e-10)


def test_log_matches_scipy_logm():
    x = random_spd(0, 3, 2)
    for xi, li in zip(x, spd_log(x), strict=True):
        np.testing.assert_allclose(li.numpy(), scipy.linalg.logm(xi.numpy()).real, atol=1e-8)


def test_gradients_match_finite_differences_also_on_degenerate_input():
    torch.manual_seed(0)
    well_separated = random_spd(1, 3, 2).requires_grad_()
    assert torch.autograd.gradcheck(spd_log, (well_separated,))
    d = torch.tensor([[0.6, 0.0, 0.8]], dtype=torch.float64)
    rank_one = (d.T @ d + 1e-2 * torch.eye(3, dtype=torch.float64)).unsqueeze(0).requires_grad_()  # double eigenvalue
    assert torch.autograd.gradcheck(spd_log, (rank_one,))
    assert torch.autograd.gradcheck(spd_exp, (spd_log(rank_one).detach().requires_grad_(),))


def test_log_euclidean_group_axioms():
    x, y, z = random_spd(0), random_spd(1), random_spd(2)
    eye = torch.eye(3, dtype=torch.float64).expand_as(x)
    close = lambda a, b: torch.testing.assert_close(a, b, rtol=1e-7, atol=1e-7)  # noqa: E731
    close(le_product(le_product(x, y), z), le_product(x, le_product(y, z)))  # associative
    close(le_product(x, y), le_product(y, x))  # commutative (abelian Lie group)
    close(le_product(x, eye), x)
    close(le_product(x, le_inverse(x)), eye)
    close(le_inverse(x), torch.linalg.inv(x))  # the group inverse is the matrix inverse
    close(spd_log(le_product(x, y)), spd_log(x) + spd_log(y))  # logm is a homomorphism
    close(le_power(x, 0.5) @ le_power(x, 0.5), x)


def test_log_cholesky_group_axioms():
    x, y, z = random_spd(3), random_spd(4), random_spd(5)
    eye = torch.eye(3, dtype=torch.float64).expand_as(x)
    close = lambda a, b: torch.testing.assert_close(a, b, rtol=1e-7, atol=1e-7)  # noqa: E731
    close(lc_unchart(lc_chart(x)), x)
    close(lc_product(lc_product(x, y), z), lc_product(x, lc_product(y, z)))
    close(lc_product(x, eye), x)
    close(lc_product(x, lc_inverse(x)), eye)
    # on diagonal matrices both groups reduce to the entrywise product
    dx, dy = torch.diag_embed(torch.rand(2, 3, dtype=torch.float64) + 0.5).unbind(0)
    close(lc_product(dx, dy), dx @ dy)
    close(le_product(dx, dy), dx @ dy)


@settings(deadline=None)
@given(st.integers(0, 10_000), st.floats(1e-6, 1e-1))
def test_direction_features_are_the_log_of_rank_one_plus_eps(seed, eps):
    d = torch.randn(3, 3, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    d = d / d.norm(dim=-1, keepdim=True)
    expected = np.einsum("ei,ej->eij", d.numpy(), d.numpy()) + eps * np.eye(3)
    logs = direction_log_features(d, eps).numpy()
    np.testing.assert_allclose([scipy.linalg.expm(s) for s in logs], expected, rtol=1e-8, atol=1e-12)


def test_reeig_floors_eigenvalues_and_keeps_well_conditioned_matrices():
    x = random_spd(7)
    out = reeig(x, eps=1.0)
    assert torch.linalg.eigvalsh(out).min() >= 1.0 - 1e-9
    torch.testing.assert_close(reeig(x + torch.eye(3, dtype=x.dtype), 1e-4), x + torch.eye(3, dtype=x.dtype))


def test_check_spd_rejects_bad_matrices():
    with pytest.raises(ValueError, match="X=.*symmetric"):
        check_spd("X", np.array([[1.0, 2.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="X=.*positive definite"):
        check_spd("X", np.array([[1.0, 0.0], [0.0, -1.0]]))
    with pytest.raises(ValueError, match="X=.*finite"):
        check_spd("X", np.array([[np.nan, 0.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="X=.*square"):
        check_spd("X", np.ones((2, 3)))
    check_spd("X", random_spd(0))


def test_direction_features_reject_bad_input():
    with pytest.raises(ValueError, match="eps="):
        direction_log_features(torch.eye(3), eps=0.0)
    with pytest.raises(ValueError, match="d=.*unit"):
        direction_log_features(2 * torch.eye(3))
    with pytest.raises(ValueError, match="d=.*finite"):
        direction_log_features(torch.full((1, 3), float("nan")))
    with pytest.raises(ValueError, match="eps="):
        reeig(random_spd(0), eps=-1.0)
