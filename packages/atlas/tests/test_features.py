"""Polynomial feature maps: inner products, dimensions, the exponential kernel and bad inputs."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_atlas import PolynomialFeatures, exp_kernel_coefficients, polynomial_feature_dim, symmetric_square
from icml26_atlas.features import MAX_FEATURE_DIM, kronecker_power


@settings(max_examples=30, deadline=None)
@given(d=st.integers(1, 6), seed=st.integers(0, 10_000))
def test_symmetric_square_keeps_squared_inner_products(d, seed):
    x, y = torch.randn(2, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    assert symmetric_square(x).shape == (d * (d + 1) // 2,)
    torch.testing.assert_close(symmetric_square(x) @ symmetric_square(y), (x @ y) ** 2)
    torch.testing.assert_close(kronecker_power(x, 3) @ kronecker_power(y, 3), (x @ y) ** 3)


@settings(max_examples=30, deadline=None)
@given(d=st.integers(1, 4), degree=st.integers(1, 4), seed=st.integers(0, 10_000))
def test_inner_product_is_the_taylor_polynomial_of_exp(d, degree, seed):
    phi = PolynomialFeatures(d, degree).double()
    x, y = torch.randn(2, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    s = x @ y
    a = phi.a.detach()  # 1/sqrt(i!) rounded to float32 at construction
    torch.testing.assert_close(
        a, torch.tensor([1 / math.sqrt(math.factorial(i)) for i in range(degree + 1)], dtype=a.dtype)
    )
    taylor = sum(a[i] ** 2 * s**i for i in range(degree + 1))
    assert phi(x).shape == (polynomial_feature_dim(d, degree),)
    torch.testing.assert_close(phi(x) @ phi(y), taylor)


def test_high_degree_features_approach_the_exponential_kernel():
    x, y = torch.nn.functional.normalize(torch.randn(2, 3, dtype=torch.float64), dim=-1)
    errors = [
        abs((PolynomialFeatures(3, p).double()(x) @ PolynomialFeatures(3, p).double()(y)).item() - math.exp(x @ y))
        for p in (1, 3, 6)
    ]
    assert errors[0] > errors[1] > errors[2] and errors[2] < 1e-4


def test_dimensions_and_coefficients():
    assert polynomial_feature_dim(16, 1) == 17
    assert polynomial_feature_dim(16, 2) == 1 + 16 + 136
    assert polynomial_feature_dim(2, 3) == 1 + 2 + 3 + 8
    torch.testing.assert_close(exp_kernel_coefficients(3), torch.tensor([1.0, 1.0, 1 / math.sqrt(2), 1 / math.sqrt(6)]))


def test_coefficients_are_learnable():
    phi = PolynomialFeatures(3, 2)
    phi(torch.randn(4, 3)).sum().backward()
    assert phi.a.grad is not None and phi.a.grad.shape == (3,)


def test_rejects_bad_degree_dim_and_input():
    with pytest.raises(ValueError, match="degree="):
        PolynomialFeatures(4, 0)
    with pytest.raises(ValueError, match="d="):
        PolynomialFeatures(0, 2)
    with pytest.raises(ValueError, match="degree=") as err:
        PolynomialFeatures(64, 3)
    assert str(polynomial_feature_dim(64, 3)) in str(err.value) and polynomial_feature_dim(64, 3) > MAX_FEATURE_DIM
    with pytest.raises(ValueError, match="x="):
        PolynomialFeatures(4, 2)(torch.randn(2, 5))
