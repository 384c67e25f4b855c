"""Cumulative reductions: values in both directions, dtypes, ties and infinities in the
derivatives, batching, and errors."""

import numpy as np
import pytest
from laminax_core import jvp, lax, make_jaxpr, vmap
from laminax_core.testing import check_grads

X = np.random.RandomState(0).standard_normal((3, 6)).astype(np.float32)
CASES = [(lax.cumsum, np.cumsum), (lax.cumprod, np.cumprod),
         (lax.cummax, np.maximum.accumulate), (lax.cummin, np.minimum.accumulate),
         (lax.cumlogsumexp, np.logaddexp.accumulate)]


@pytest.mark.parametrize("fun,ref", CASES)
@pytest.mark.parametrize("axis,reverse", [(0, False), (1, True), (1, False)])
def test_values_match_numpy(fun, ref, axis, reverse):
    expected = np.flip(ref(np.flip(X, axis), axis), axis) if reverse else ref(X, axis)
    np.testing.assert_allclose(fun(X, axis, reverse), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fun,ref", CASES)
def test_negative_axes_are_refused_as_in_jax(fun, ref):
    # lax takes XLA's axes (JAX: "XLA operations do not allow negative axes"); jnp's
    # cumulative functions are the ones that read -1
    with pytest.raises(ValueError, match="no negative axes"):
        fun(X, -1, False)


@pytest.mark.parametrize("fun,ref", CASES)
def test_second_order_derivatives_in_both_directions(fun, ref):
    check_grads(lambda v: fun(v, 1, True), (X,), order=2)
    check_grads(lambda v: fun(v, 0, False), (X,), order=2)


def test_cumprod_derivative_with_a_zero():
    x = np.array([2.0, 0.0, 3.0], np.float32)
    _, t = jvp(lambda v: lax.cumprod(v), (x,), (np.ones(3, np.float32),))
    np.testing.assert_allclose(t, [1, 2, 6])  # d(x0 x1 x2) = x1 x2 + x0 x2 + x0 x1


def test_cummax_tangent_follows_the_running_maximum():
    x = np.array([1.0, 3.0, 2.0, 5.0], np.float32)
    _, t = jvp(lax.cummax, (x,), (np.array([10, 20, 30, 40], np.float32),))
    np.testing.assert_array_equal(t, [10, 20, 20, 40])


def test_cumlogsumexp_handles_minus_infinity():
    x = np.array([-np.inf, 0.0, -np.inf], np.float32)
    np.testing.assert_allclose(lax.cumlogsumexp(x), [-np.inf, 0, 0])


def test_integer_and_half_dtypes():
    ints = np.array([3, -1, 4, 1], np.int32)
    np.testing.assert_array_equal(lax.cummax(ints), [3, 3, 4, 4])
    np.testing.assert_array_equal(lax.cumsum(ints, reverse=True), [7, 4, 5, 1])
    assert lax.cumlogsumexp(np.zeros(3, np.float16)).dtype == np.float16


@pytest.mark.parametrize("fun,ref", CASES)
def test_batching_matches_loop(fun, ref):
    out = vmap(lambda v: fun(v, 0), in_axes=1)(X)
    np.testing.assert_allclose(out, np.stack([fun(X[:, k], 0) for k in range(6)]), rtol=1e-6)


def test_jaxpr_params():
    text = str(make_jaxpr(lambda v: lax.cumprod(v, 1, reverse=True))(X))
    assert "cumprod[axis=1 reverse=True]" in text


@pytest.mark.parametrize("fun,error,match", [
    (lambda: lax.cumlogsumexp(np.ones(3, np.int32)), TypeError,
     "cumlogsumexp does not accept dtype int32"),
    (lambda: lax.cumsum(np.ones(3, np.bool_)), TypeError, "cumsum does not accept dtype bool"),
    (lambda: lax.cummax(X, 2), ValueError, "cummax: axis 2 is out of bounds for an array of "
                                           "rank 2"),
])
def test_errors(fun, error, match):
    with pytest.raises(error, match=match):
        fun()
