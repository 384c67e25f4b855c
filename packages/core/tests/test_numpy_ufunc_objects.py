"""jnp.ufunc, frompyfunc and JAX's 14 ufunc objects: calls, reduce/accumulate/at/outer/
reduceat against NumPy's ufunc methods, and errors."""

import numpy as np
import pytest
from laminax_core import numpy as jnp

R = np.random.RandomState(0)
X = R.randint(-5, 6, size=(3, 4)).astype(np.int32)
F = R.standard_normal((3, 4)).astype(np.float32)

UFUNCS = ["add", "multiply", "subtract", "maximum", "minimum", "bitwise_and", "bitwise_or",
          "bitwise_xor", "logical_and", "logical_or", "logical_xor"]


@pytest.mark.parametrize("name", UFUNCS)
@pytest.mark.parametrize("axis", [0, 1, None])
def test_reduce_and_accumulate_match_numpy(name, axis):
    ours, theirs = getattr(jnp, name), getattr(np, name)
    x = X > 0 if name.startswith("logical") else X
    # axis=None reduces the flattened array (NumPy allows it only for reorderable ufuncs)
    expected = theirs.reduce(x.ravel()) if axis is None else theirs.reduce(x, axis=axis)
    np.testing.assert_array_equal(ours.reduce(x, axis=axis), expected)
    if axis is not None:
        expected = theirs.accumulate(x, axis=axis)
        np.testing.assert_array_equal(ours.accumulate(x, axis=axis), expected)


@pytest.mark.parametrize("name", ["add", "multiply", "subtract", "maximum", "minimum"])
def test_at_outer_and_reduceat_match_numpy(name):
    ours, theirs = getattr(jnp, name), getattr(np, name)
    idx, vals = np.array([0, 2, 0, 5]), np.array([3, 4, 5, 6], np.int32)
    expected = X.ravel().copy()
    theirs.at(expected, idx, vals)
    np.testing.assert_array_equal(ours.at(X.ravel(), idx, vals, inplace=False), expected)
    np.testing.assert_array_equal(ours.outer(X[0], X[1, :2]), theirs.outer(X[0], X[1, :2]))
    starts = np.array([0, 3, 1, 4])
    np.testing.assert_array_equal(ours.reduceat(X.ravel(), starts),
                                  theirs.reduceat(X.ravel(), starts))


def test_float_reductions_keepdims_initial_and_where():
    np.testing.assert_allclose(jnp.logaddexp.reduce(F, axis=1), np.logaddexp.reduce(F, axis=1),
                               rtol=1e-6)
    np.testing.assert_allclose(jnp.add.reduce(F, axis=0, keepdims=True),
                               np.add.reduce(F, axis=0, keepdims=True), rtol=1e-6)
    mask = F > 0
    np.testing.assert_allclose(jnp.subtract.reduce(F, axis=1, initial=1.0, where=mask),
                               np.subtract.reduce(F, axis=1, initial=1.0, where=mask), rtol=1e-6)


def test_frompyfunc_makes_a_ufunc():
    f = jnp.frompyfunc(lambda a, b: a * b + 1, 2, 1, identity=1)
    assert isinstance(f, jnp.ufunc) and repr(f) == "<jnp.ufunc '<lambda>'>"
    np.testing.assert_array_equal(f(np.arange(3), 2), [1, 3, 5])
    np.testing.assert_array_equal(f.reduce(np.arange(1, 4)), 16)
    np.testing.assert_array_equal(f.accumulate(np.arange(1, 4)), [1, 3, 10])
    assert f.outer(np.arange(2), np.arange(3)).shape == (2, 3)
    pair = jnp.frompyfunc(lambda a: (a, -a), 1, 2)(np.arange(3))
    np.testing.assert_array_equal(pair[1], [0, -1, -2])


def test_unary_at_applies_once_per_occurrence():
    out = jnp.negative.at(np.arange(3.0), np.array([1, 1, 2]), inplace=False)
    np.testing.assert_array_equal(out, [0.0, 1.0, -2.0])


def test_ufunc_attributes_are_jaxs():
    assert (jnp.add.nin, jnp.add.nout, jnp.add.nargs, jnp.add.identity) == (2, 1, 2, 0)
    assert jnp.bitwise_and.identity == -1 and jnp.maximum.identity is None
    assert jnp.logaddexp.identity == -np.inf and jnp.negative.nin == 1


@pytest.mark.parametrize("call,error,match", [
    (lambda: jnp.add.at(np.zeros(3), np.array([0]), 1.0), NotImplementedError, "immutable"),
    (lambda: jnp.add(np.ones(2), np.ones(2), out=np.ones(2)), NotImplementedError, "out arg"),
    (lambda: jnp.negative.reduce(np.ones(2)), ValueError, "only supported for binary"),
    (lambda: jnp.maximum.reduce(np.ones(3), where=np.ones(3, bool)), ValueError, "identity"),
    (lambda: jnp.subtract.reduce(np.zeros(0)), ValueError, "zero-size array"),
    (lambda: jnp.add(np.ones(2)), TypeError, "takes 2 positional arguments"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
