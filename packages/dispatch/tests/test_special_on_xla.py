"""The special functions lowered as lax programs (igamma, igammac, igamma_grad_a,
random_gamma_grad, bessel_i0e, regularized_incomplete_beta) run under `jit` and agree with core's
NumPy reference interpreter, in float32 and float64, at edge values too."""

import ml_dtypes
import numpy as np
import pytest
from laminax_core import config, grad, lax
from laminax_core.internal import set_eager_impl
from laminax_dispatch import jit

A = np.array([0.5, 1.0, 2.0, 5.0, 30.0, 0.01, 3.0, 0.7, 12.0, 0.0, 0.0, -1.0, np.nan, 2.0])
X = np.array([0.3, 2.0, 2.5, 1.0, 25.0, 0.5, 10.0, 40.0, 11.0, 1.0, 0.0, 1.0, 1.0, np.inf])


def _reference(fun, *args):
    previous = set_eager_impl(None)
    try:
        return np.asarray(fun(*args))
    finally:
        set_eager_impl(previous)


def _tolerance(dtype):
    return 1e-5 if dtype == np.float32 else 1e-10


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_incomplete_gamma_under_jit_matches_the_reference(name, x64):
    dtype = np.float64 if x64 else np.float32
    a, x = A.astype(dtype), X.astype(dtype)
    with config.enable_x64(x64), np.errstate(all="ignore"):
        got = np.asarray(jit(getattr(lax, name))(a, x))
        expected = _reference(getattr(lax, name), a, x)
    assert got.dtype == dtype
    # float32 sums in float32 (as JAX does): about 1e-5 relative where the series is long
    keep = A != 0  # P(0, x) is 0/0 in JAX's series for x < 1, 1 in the reference
    np.testing.assert_allclose(got[keep], expected[keep], rtol=_tolerance(dtype) * 3,
                               atol=_tolerance(dtype))
    np.testing.assert_array_equal(np.isnan(got[keep]), np.isnan(A + X)[keep] | (A < 0)[keep])
    assert np.isnan(got[A == 0][1])  # a == x == 0


@pytest.mark.parametrize("x64", [False, True])
def test_igamma_grad_a_under_jit_matches_the_reference(x64):
    dtype = np.float64 if x64 else np.float32
    keep = (A > 0) & np.isfinite(X)  # JAX's derivative is NaN at x = inf, the reference's 0
    a, x = A[keep].astype(dtype), X[keep].astype(dtype)
    with config.enable_x64(x64), np.errstate(all="ignore"):
        got = np.asarray(jit(lax.igamma_grad_a)(a, x))
        expected = _reference(lax.igamma_grad_a, a, x)
    # the reference differentiates numerically: about 1e-7 absolute in float64
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6 if x64 else 3e-5)


@pytest.mark.parametrize("x64", [False, True])
def test_random_gamma_grad_is_the_implicit_derivative_of_igamma(x64):
    # P(a, x(a)) = u  =>  dx/da = -(dP/da) / (dP/dx)
    dtype = np.float64 if x64 else np.float32
    a = np.array([0.5, 1.0, 2.0, 5.0, 30.0, 3.0], dtype)
    x = np.array([0.3, 2.0, 2.5, 1.0, 25.0, 10.0], dtype)
    with config.enable_x64(x64):
        got = np.asarray(jit(lax.random_gamma_grad)(a, x))
        d_da = np.asarray(jit(lax.igamma_grad_a)(a, x))
        d_dx = np.asarray(jit(lambda a, x: grad(lambda x: lax.igamma(a, x).sum())(x))(a, x))
    np.testing.assert_allclose(got, -d_da / d_dx, rtol=1e-4 if not x64 else 1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bessel_i0e_under_jit_matches_the_reference(dtype):
    x = np.array([0.0, 0.5, -1.0, 7.9, 8.0, 8.1, -30.0, 200.0, 1e30, np.inf, np.nan])
    with config.enable_x64(dtype == np.float64), np.errstate(all="ignore"):
        got = np.asarray(jit(lax.bessel_i0e)(x.astype(dtype)))
        expected = _reference(lax.bessel_i0e, x.astype(dtype))
    assert abs(got[0] - 1) <= np.finfo(dtype).eps
    assert got[-2] == 0 and np.isnan(got[-1])
    np.testing.assert_allclose(got[:-3], expected[:-3], rtol=_tolerance(dtype) * 3)


def test_bessel_i0e_in_bfloat16_computes_in_float32():
    x = np.array([0.5, 3.0, 12.0], ml_dtypes.bfloat16)
    got = jit(lax.bessel_i0e)(x)
    assert got.dtype == ml_dtypes.bfloat16
    expected = _reference(lax.bessel_i0e, x.astype(np.float32))
    np.testing.assert_allclose(np.asarray(got, np.float32), expected, rtol=1e-2)


@pytest.mark.parametrize("x64", [False, True])
def test_betainc_under_jit_matches_the_reference(x64):
    dtype = np.float64 if x64 else np.float32
    a = np.array([2.0, 0.5, 5.0, 1.0, 30.0, 0.1, 2.0, 2.0, 2.0, -1.0, 0.0], dtype)
    b = np.array([3.0, 0.5, 1.0, 1.0, 40.0, 3.0, 2.0, 2.0, 2.0, 1.0, 2.0], dtype)
    x = np.array([0.5, 0.2, 0.9, 0.3, 0.45, 0.99, 0.0, 1.0, 1.5, 0.5, 0.5], dtype)
    with config.enable_x64(x64), np.errstate(all="ignore"):
        got = np.asarray(jit(lax.betainc)(a, b, x))
        expected = _reference(lax.betainc, a, b, x)
    np.testing.assert_allclose(got[:8], expected[:8], rtol=_tolerance(dtype) * 10,
                               atol=_tolerance(dtype))
    assert (got[6], got[7]) == (0, 1)
    assert np.isnan(got[8]) and np.isnan(got[9])
    assert got[10] == 1  # a == 0: all the mass sits at 0


def test_betainc_broadcasts_scalar_parameters_under_jit():
    x = np.linspace(0.05, 0.95, 7, dtype=np.float32)
    got = np.asarray(jit(lambda x: lax.betainc(2.0, 3.0, x))(x))
    # I_x(2, 3) = P(Binomial(4, x) >= 2) = sum_{j=2}^{4} C(4, j) x^j (1-x)^(4-j)
    closed = sum(np.float64([1, 4, 6, 4, 1][j]) * x.astype(np.float64) ** j
                 * (1 - x.astype(np.float64)) ** (4 - j) for j in range(2, 5))
    np.testing.assert_allclose(got, closed, rtol=2e-6)
