"""sort and top_k: ordering of NaNs, signed zeros and complex numbers, several operands and
keys, stability, derivatives through the permutation, batching, and errors."""

import numpy as np
import pytest
from laminax_core import grad, jvp, lax, make_jaxpr, vmap
from laminax_core.testing import check_grads

X = np.random.RandomState(0).standard_normal((3, 5)).astype(np.float32)


def test_nans_last_and_signed_zeros_stable():
    x = np.array([0.0, -0.0, np.nan, -np.nan, -np.inf, 1.0], np.float32)
    out = lax.sort(x)
    np.testing.assert_array_equal(out, [-np.inf, 0, 0, 1, np.nan, np.nan])
    assert not np.signbit(out[1]) and np.signbit(out[2])  # input order kept for equal keys


def test_complex_orders_by_real_then_imaginary():
    z = np.array([1 + 1j, 1 - 1j, -1 + 0j], np.complex64)
    np.testing.assert_array_equal(lax.sort(z), [-1, 1 - 1j, 1 + 1j])


def test_several_operands_and_keys():
    a = np.array([1, 0, 1, 0], np.int32)
    b = np.array([3, 2, 1, 2], np.int32)
    v = np.arange(4, dtype=np.float32)
    sa, sb, sv = lax.sort((a, b, v), num_keys=2)
    np.testing.assert_array_equal(sv, [1, 3, 2, 0])  # (0,2) (0,2) (1,1) (1,3), stable
    _, sv1 = lax.sort_key_val(a, v)
    np.testing.assert_array_equal(sv1, [1, 3, 0, 2])


def test_sort_derivatives_and_gradient_routes_back():
    check_grads(lambda v: lax.sort(v, 0), (X,), order=2)
    g = grad(lambda v: lax.reduce_sum(lax.mul(lax.sort(v), np.arange(5.0, dtype=np.float32)),
                                      (0,)))(X[0])
    np.testing.assert_array_equal(g, np.argsort(np.argsort(X[0])).astype(np.float32))


def test_top_k_values_indices_and_ties():
    values, indices = lax.top_k(np.array([1, 3, 3, 2], np.int32), 3)
    np.testing.assert_array_equal(values, [3, 3, 2])
    np.testing.assert_array_equal(indices, [1, 2, 3])
    values, _ = lax.top_k(np.array([1, np.nan, 2], np.float32), 2)
    np.testing.assert_array_equal(values, [np.nan, 2])
    values, indices = lax.top_k(X, 2, axis=0)
    np.testing.assert_array_equal(values, -np.sort(-X, 0)[:2])
    assert indices.dtype == np.int32


def test_top_k_derivative():
    check_grads(lambda v: lax.top_k(v, 2)[0], (X,), order=2)
    _, t = jvp(lambda v: lax.top_k(v, 1)[0], (np.array([1, 5, 3], np.float32),),
               (np.array([10, 20, 30], np.float32),))
    np.testing.assert_array_equal(t, [20])


@pytest.mark.parametrize("in_axis", [0, 1])
def test_batching_matches_loop(in_axis):
    out = vmap(lambda v: lax.sort(v), in_axes=in_axis)(X)
    rows = [np.sort(np.take(X, k, in_axis)) for k in range(X.shape[in_axis])]
    np.testing.assert_array_equal(out, np.stack(rows))
    values, _ = vmap(lambda v: lax.top_k(v, 2), in_axes=in_axis)(X)
    np.testing.assert_array_equal(values, np.stack([-np.sort(-r)[:2] for r in rows]))
    keys, vals = vmap(lambda k, v: lax.sort((k, v)), in_axes=(0, None))(X, X[0])
    np.testing.assert_array_equal(vals[1], X[0][np.argsort(X[1], kind="stable")])


def test_jaxpr_params_match_jax():
    assert "sort[dimension=1 is_stable=True num_keys=1]" in str(make_jaxpr(lax.sort)(X))
    assert "top_k[axis=1 k=2]" in str(make_jaxpr(lambda v: lax.top_k(v, 2))(X))


@pytest.mark.parametrize("fun,error,match", [
    (lambda: lax.sort((np.ones(3), np.ones(4))), TypeError,
     r"Arguments to sort must have equal shapes, got: \(3,\) \(4,\)"),
    (lambda: lax.sort(np.ones(3), num_keys=2), ValueError,
     "num_keys=2 must equal 1 for a single operand"),
    (lambda: lax.top_k(np.ones(3, np.float32), 4), ValueError,
     r"k argument to top_k must be no larger than size along axis; got k=4 with shape=\[3\]"),
    (lambda: lax.top_k(np.ones(3, np.complex64), 1), TypeError,
     "top_k does not accept dtype complex64"),
])
def test_errors(fun, error, match):
    with pytest.raises(error, match=match):
        fun()
