"""Indexing and the `.at` update API against NumPy, including JAX's out-of-bounds rules
(gathers clamp, scatters drop), boolean masks, None/Ellipsis, negative steps, traced indices,
take/take_along_axis and nonzero with `size`."""

import laminax_core.numpy as jnp
import numpy as np
import pytest
from laminax_core import errors, grad, make_jaxpr, vmap
from laminax_core.numpy._indexing import IndexUpdateHelper, getitem

X = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
IX = np.array([2, 0, -1])

INDICES = [
    1, -1, (1, 2), (0, -1, 3), slice(1, None), slice(None, None, -1), slice(None, None, 2),
    (slice(None), slice(3, 0, -2)), (Ellipsis, 1), (1, Ellipsis), (None, 1), (1, None, 2),
    (Ellipsis, None), (slice(None), None, Ellipsis, None), IX, (IX,), (slice(None), IX),
    (IX, IX), (IX, slice(None), IX), (slice(None), IX, IX), (1, IX), (IX, 1), (slice(None), 1, IX),
    (1, slice(None), IX), (np.array([[0], [2]]), np.array([[1, 3]])), (Ellipsis, IX),
    (None, IX, None), (IX, None, IX), X[:, 0, 0] > 10, X[:, :, 0] > 12, (X[..., 0] > 20,),
    (1, X[0, :, 0] > 1), (slice(None), [1, 3]), ([0, 1],), (True,), (False,), (),
    (slice(None, None, -1), IX), (slice(10, None),), (slice(-10, 2),),
]  # fmt: skip


@pytest.mark.parametrize("idx", INDICES, ids=[str(i) for i in range(len(INDICES))])
def test_getitem_matches_numpy(idx):
    expected = X[idx if not isinstance(idx, list) else tuple(np.asarray(idx)[None])]
    actual = getitem(X, idx)
    assert actual.shape == expected.shape
    np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize("idx", [i for i in INDICES if not (isinstance(i, np.ndarray) and
                                                             i.dtype == bool)
                                 and not (isinstance(i, tuple) and any(
                                     isinstance(j, np.ndarray) and j.dtype == bool
                                     for j in i))],
                         ids=lambda i: str(type(i).__name__))
def test_getitem_on_a_tracer_matches_numpy(idx):
    expected = X[idx if not isinstance(idx, list) else tuple(np.asarray(idx)[None])]
    out = vmap(lambda x: x[idx])(np.stack([X, X + 1]))
    np.testing.assert_array_equal(out[0], expected)
    np.testing.assert_array_equal(out[1], expected + 1)


def test_out_of_bounds_gathers_clamp_like_jax():
    x = np.arange(5.0, dtype=np.float32)
    np.testing.assert_array_equal(getitem(x, np.array([7, -9, 4])), [4.0, 0.0, 4.0])
    np.testing.assert_array_equal(IndexUpdateHelper(x)[np.array([7])].get(mode="fill"),
                                  [np.nan])
    np.testing.assert_array_equal(
        IndexUpdateHelper(x)[np.array([7, 1])].get(mode="fill", fill_value=-1.0), [-1, 1])
    # static ints clamp too, as in JAX; only an empty axis has nothing to clamp to
    assert getitem(x, 5) == 4.0 and getitem(x, -9) == 0.0
    with pytest.raises(IndexError, match="index 0 is out of bounds for axis 0 with size 0"):
        getitem(x[:0], 0)


def test_traced_scalar_index_uses_dynamic_slice_and_clamps():
    closed = make_jaxpr(lambda x, i: x[i])(X, np.int32(1))
    assert "dynamic_slice" in [e.primitive.name for e in closed.eqns]
    out = vmap(lambda i: getitem(X[0, 0], i))(np.array([0, -1, 9], np.int32))
    np.testing.assert_array_equal(out, [0.0, 4.0, 4.0])


def test_traced_boolean_mask_raises_non_concrete_boolean_index_error():
    with pytest.raises(errors.NonConcreteBooleanIndexError, match="boolean indices must be "
                                                                  "concrete"):
        make_jaxpr(lambda x: x[x > 0])(X)


def test_index_errors_are_clear():
    with pytest.raises(IndexError, match="Too many indices for array"):
        getitem(X, (0, 0, 0, 0))
    with pytest.raises(IndexError, match="single ellipsis"):
        getitem(X, (Ellipsis, Ellipsis))
    with pytest.raises(TypeError, match="Indexing with a float"):  # JAX's type
        getitem(X, 1.5)
    with pytest.raises(TypeError, match="dtype float32 is not supported"):
        getitem(X, np.array([1.0], np.float32))
    with pytest.raises(TypeError, match="non-tuple sequence"):
        getitem(X, [0, 1])
    with pytest.raises(IndexError, match="boolean index did not match"):
        getitem(X, np.array([True, False]))


UPDATES = [
    (1, 5.0), ((0, 1), np.arange(5.0)), (slice(None, None, 2), -1.0), (IX, 3.0),
    ((IX, 0), np.arange(5.0)), ((Ellipsis, 1), 7.0), ((slice(None), IX, IX), 9.0),
    (X > 30, 0.0), ((None, 2), 1.0), ((slice(None, None, -1), 0, 0), np.array([1.0, 2, 3])),
]


@pytest.mark.parametrize("idx,values", UPDATES, ids=[str(i) for i in range(len(UPDATES))])
def test_at_set_and_add_match_numpy(idx, values):
    expected = X.copy()
    expected[idx] = values
    np.testing.assert_array_equal(IndexUpdateHelper(X)[idx].set(values), expected)
    expected = X.copy()
    has_none = isinstance(idx, tuple) and any(i is None for i in idx)
    np.add.at(expected, idx[1:] if has_none else idx, values)
    np.testing.assert_array_equal(IndexUpdateHelper(X)[idx].add(values), expected)


def test_at_with_repeated_indices_combines():
    x = np.zeros(4, np.float32)
    idx = np.array([1, 1, 3, 1])
    expected = x.copy()
    np.add.at(expected, idx, 2.0)
    np.testing.assert_array_equal(IndexUpdateHelper(x)[idx].add(2.0), expected)
    ones = np.ones(4, np.float32)
    np.testing.assert_array_equal(IndexUpdateHelper(ones)[idx].multiply(2.0), [1, 8, 1, 2])
    np.testing.assert_array_equal(IndexUpdateHelper(ones)[idx].min(np.array([0.5, -1, 3, 2])),
                                  [1, -1, 1, 1])
    np.testing.assert_array_equal(IndexUpdateHelper(ones)[idx].max(np.array([5.0, 2, 3, 4])),
                                  [1, 5, 1, 3])


def test_at_out_of_bounds_updates_are_dropped_or_clipped():
    x = np.zeros(3, np.float32)
    np.testing.assert_array_equal(IndexUpdateHelper(x)[np.array([5, -7, 1])].set(1.0),
                                  [0, 1, 0])
    np.testing.assert_array_equal(IndexUpdateHelper(x)[5].add(1.0), [0, 0, 0])
    np.testing.assert_array_equal(IndexUpdateHelper(x)[5].add(1.0, mode="clip"), [0, 0, 1])


def test_at_other_methods():
    x = np.full(3, 2.0, np.float32)
    h = IndexUpdateHelper(x)
    np.testing.assert_array_equal(h[0].subtract(1.0), [1, 2, 2])
    np.testing.assert_array_equal(h[1].divide(4.0), [2, 0.5, 2])
    np.testing.assert_array_equal(h[2].power(3), [2, 2, 8])
    np.testing.assert_array_equal(h[:2].apply(lambda v: -v), [-2, -2, 2])
    np.testing.assert_array_equal(h[1].get(), 2.0)
    assert h[0].set(1).dtype == np.float32  # values take the array's dtype
    np.testing.assert_array_equal(IndexUpdateHelper(np.zeros(3, np.int32))[0].set(2.7),
                                  [2, 0, 0])


def test_at_on_tracers_and_its_gradient():
    def f(x):
        return x.at[np.array([0, 0, 2])].add(x[1] * 2.0).sum() + x.at[1].set(0.0).sum()

    g = grad(f)(np.ones(3, np.float32))
    np.testing.assert_allclose(g, [2.0, 7.0, 2.0])
    out = vmap(lambda x, i: x.at[i].set(-1.0))(np.zeros((2, 3), np.float32),
                                               np.array([0, 2], np.int32))
    np.testing.assert_array_equal(out, [[-1, 0, 0], [0, 0, -1]])


def test_at_values_that_do_not_broadcast_raise():
    with pytest.raises(ValueError, match="cannot be broadcast to the indexed shape"):
        IndexUpdateHelper(X)[0].set(np.ones(3))


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_take_matches_numpy(axis):
    idx = np.array([[0, 2], [1, 1]])
    np.testing.assert_array_equal(jnp.take(X, idx, axis=axis), np.take(X, idx, axis=axis))


def test_take_out_of_bounds_fills_by_default():
    out = jnp.take(np.arange(3.0), np.array([5, 1]))
    assert np.isnan(out[0]) and out[1] == 1.0
    out = jnp.take(np.arange(3), np.array([5]))
    assert out[0] == np.iinfo(np.int32).min
    np.testing.assert_array_equal(jnp.take(np.arange(3), np.array([5, -1]), mode="clip"), [2, 0])


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_take_wrap_counts_indices_modulo_the_axis_length(axis):
    idx = np.array([-7, -1, 0, 4, 5, 12])
    np.testing.assert_array_equal(jnp.take(X, idx, axis=axis, mode="wrap"),
                                  np.take(X, idx, axis=axis, mode="wrap"))


@pytest.mark.parametrize("mode,error,match", [
    ("raise", NotImplementedError, "mode='raise' is not supported"),
    ("promise_in_bounds", ValueError, "invalid mode 'promise_in_bounds'"),
    ("nearest", ValueError, "invalid mode 'nearest'"),
])
def test_take_rejects_modes_jax_rejects(mode, error, match):
    with pytest.raises(error, match=match):
        jnp.take(X, np.array([1]), mode=mode)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, None])
def test_take_along_axis_matches_numpy(axis):
    idx = np.argsort(X, axis=axis) if axis is not None else np.argsort(X, axis=None)
    idx = idx[..., ::-1] if axis is not None else idx
    np.testing.assert_array_equal(jnp.take_along_axis(X, idx, axis),
                                  np.take_along_axis(X, idx, axis))
    small = np.array([[0], [3], [1]])
    np.testing.assert_array_equal(jnp.take_along_axis(X[:, :, 0], small, 1),
                                  np.take_along_axis(X[:, :, 0], small, 1))


def test_nonzero_family_matches_numpy():
    x = np.array([[0, 3, 0], [4, 0, 5]])
    for ours, theirs in zip(jnp.nonzero(x), np.nonzero(x), strict=True):
        np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(jnp.flatnonzero(x), np.flatnonzero(x))
    np.testing.assert_array_equal(jnp.argwhere(x), np.argwhere(x))
    np.testing.assert_array_equal(jnp.where(x)[1], np.where(x)[1])


def test_nonzero_with_size_works_under_tracing():
    x = np.array([[0, 3, 0], [4, 0, 5]])
    rows, cols = make_jaxpr(lambda v: jnp.nonzero(v, size=5, fill_value=-1))(x).out_avals
    assert rows.shape == cols.shape == (5,)
    rows, cols = vmap(lambda v: jnp.nonzero(v, size=4, fill_value=-1))(np.stack([x, x * 0]))
    np.testing.assert_array_equal(rows[0], [0, 1, 1, -1])
    np.testing.assert_array_equal(cols[0], [1, 0, 2, -1])
    np.testing.assert_array_equal(rows[1], [-1] * 4)
    np.testing.assert_array_equal(jnp.nonzero(x, size=2)[1], [1, 0])
    with pytest.raises(errors.ConcretizationTypeError, match="size argument of jnp.nonzero"):
        make_jaxpr(jnp.nonzero)(x)


def test_tracer_methods_come_from_numpy():
    def f(x):
        return (x.sum(axis=0), x.mean(), x.std(), x.reshape(-1, 5).T, x.astype(np.int32),
                x.argmax(axis=1), x.cumsum(), x.clip(0, 3), x.round(1), x.max(keepdims=True),
                x.at[0].add(1.0), x[x.shape[0] - 1], x.ravel(), x.squeeze(), x.flatten(),
                x.any(), x.all(), x.prod(axis=(0, 2)), x.mT, x.transpose(1, 0, 2),
                x.swapaxes(0, 1), x.take(np.array([1]), axis=1), x.nonzero(size=2),
                x.argsort(axis=-1), x.sort(axis=0), x.diagonal(), x.trace(), x.ptp(),
                x.argmin(), x.min(), x.dot(np.ones(5)), x.real, x.imag, x.conj(),
                x.repeat(2, axis=0), x.searchsorted(1.0) if False else x.sum(), x.copy())

    x = X[:2] / 10
    traced = vmap(f)(np.stack([x, x]))
    eager = f(x) if hasattr(x, "at") else None
    assert eager is None  # NumPy arrays are core's eager values and have NumPy's own methods
    assert len(traced) == 37


def test_tracer_operators_follow_numpy_semantics():
    def f(x, i):
        return (x // 2, x % 3, divmod(x, 4), x ** 2, 2 ** i, i & 3, i | 8, i ^ 1, ~i, i << 1,
                i >> 1, x == 1, x != 1, -x, +x, abs(x), x @ np.ones(5, np.float32),
                True + (i > 1), x[i])

    x = np.arange(10, dtype=np.float32).reshape(2, 5) - 4
    i = np.int32(3)
    out = make_jaxpr(f)(x, i)
    assert out.out_avals[-1].shape == (5,)
    from laminax_core import eval_jaxpr

    values = eval_jaxpr(out.jaxpr, out.consts, x, i)
    np.testing.assert_array_equal(values[0], x // 2)
    np.testing.assert_array_equal(values[1], x % 3)
    np.testing.assert_array_equal(values[8], 3 ^ 1)  # divmod gave two outputs
    np.testing.assert_array_equal(values[-2], True)  # booleans add as logical or
