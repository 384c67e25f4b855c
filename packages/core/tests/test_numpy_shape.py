"""laminax_core.numpy's shape manipulation and array creation against NumPy."""

import laminax_core.numpy as jnp
import numpy as np
import pytest
from laminax_core import config, eval_shape, make_jaxpr

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
V = np.arange(5, dtype=np.int32)

# (description, laminax call, numpy call)
SHAPE_CASES = [
    ("reshape", lambda m: m.reshape(X, (4, -1)), lambda: X.reshape(4, -1)),
    ("reshape_F", lambda m: m.reshape(X, (6, 4), order="F"), lambda: X.reshape((6, 4), order="F")),
    ("ravel", lambda m: m.ravel(X), lambda: X.ravel()),
    ("transpose", lambda m: m.transpose(X), lambda: X.transpose()),
    ("transpose_axes", lambda m: m.transpose(X, (1, 2, 0)), lambda: X.transpose(1, 2, 0)),
    ("permute_dims", lambda m: m.permute_dims(X, (2, 0, 1)), lambda: X.transpose(2, 0, 1)),
    ("moveaxis", lambda m: m.moveaxis(X, 0, -1), lambda: np.moveaxis(X, 0, -1)),
    ("moveaxis_multi", lambda m: m.moveaxis(X, (0, 1), (2, 0)),
     lambda: np.moveaxis(X, (0, 1), (2, 0))),
    ("swapaxes", lambda m: m.swapaxes(X, 0, 2), lambda: np.swapaxes(X, 0, 2)),
    ("squeeze", lambda m: m.squeeze(X[:1, :, :1]), lambda: np.squeeze(X[:1, :, :1])),
    ("squeeze_axis", lambda m: m.squeeze(X[:1], 0), lambda: np.squeeze(X[:1], 0)),
    ("expand_dims", lambda m: m.expand_dims(X, (0, -1)), lambda: np.expand_dims(X, (0, -1))),
    ("broadcast_to", lambda m: m.broadcast_to(V, (3, 5)), lambda: np.broadcast_to(V, (3, 5))),
    ("atleast_1d", lambda m: m.atleast_1d(np.float32(1)), lambda: np.atleast_1d(np.float32(1))),
    ("atleast_2d", lambda m: m.atleast_2d(V), lambda: np.atleast_2d(V)),
    ("atleast_3d", lambda m: m.atleast_3d(V), lambda: np.atleast_3d(V)),
    ("atleast_3d_2d", lambda m: m.atleast_3d(X[0]), lambda: np.atleast_3d(X[0])),
    ("concatenate", lambda m: m.concatenate([X, X], axis=1), lambda: np.concatenate([X, X], 1)),
    ("concatenate_none", lambda m: m.concatenate([X, V], axis=None),
     lambda: np.concatenate([X, V], axis=None).astype(np.float32)),
    ("stack", lambda m: m.stack([V, V, V], axis=1), lambda: np.stack([V, V, V], axis=1)),
    ("stack_neg", lambda m: m.stack([X, X], axis=-1), lambda: np.stack([X, X], axis=-1)),
    ("vstack", lambda m: m.vstack([V, V]), lambda: np.vstack([V, V])),
    ("hstack", lambda m: m.hstack([X, X]), lambda: np.hstack([X, X])),
    ("hstack_1d", lambda m: m.hstack([V, V]), lambda: np.hstack([V, V])),
    ("dstack", lambda m: m.dstack([X[0], X[1]]), lambda: np.dstack([X[0], X[1]])),
    ("column_stack", lambda m: m.column_stack([V, V * 2]), lambda: np.column_stack([V, V * 2])),
    ("tile", lambda m: m.tile(X[0], (2, 1, 2)), lambda: np.tile(X[0], (2, 1, 2))),
    ("tile_int", lambda m: m.tile(V, 3), lambda: np.tile(V, 3)),
    ("repeat", lambda m: m.repeat(X, 2, axis=1), lambda: np.repeat(X, 2, axis=1)),
    ("repeat_flat", lambda m: m.repeat(X[0], 3), lambda: np.repeat(X[0], 3)),
    ("repeat_array", lambda m: m.repeat(V, np.array([1, 0, 2, 1, 3])),
     lambda: np.repeat(V, np.array([1, 0, 2, 1, 3]))),
    ("flip", lambda m: m.flip(X), lambda: np.flip(X)),
    ("flip_axis", lambda m: m.flip(X, (0, 2)), lambda: np.flip(X, (0, 2))),
    ("fliplr", lambda m: m.fliplr(X), lambda: np.fliplr(X)),
    ("flipud", lambda m: m.flipud(X), lambda: np.flipud(X)),
    ("rot90", lambda m: m.rot90(X[0]), lambda: np.rot90(X[0])),
    ("rot90_k3", lambda m: m.rot90(X, 3, (1, 2)), lambda: np.rot90(X, 3, (1, 2))),
    ("rot90_k2", lambda m: m.rot90(X, -2), lambda: np.rot90(X, -2)),
    ("roll", lambda m: m.roll(V, 2), lambda: np.roll(V, 2)),
    ("roll_neg_axis", lambda m: m.roll(X, -1, axis=1), lambda: np.roll(X, -1, axis=1)),
    ("roll_flat", lambda m: m.roll(X, 7), lambda: np.roll(X, 7)),
    ("roll_multi", lambda m: m.roll(X, (1, 2), (0, 2)), lambda: np.roll(X, (1, 2), (0, 2))),
    ("append", lambda m: m.append(V, np.array([9], np.int32)),
     lambda: np.append(V, np.array([9], np.int32))),
    ("append_axis", lambda m: m.append(X, X, axis=2), lambda: np.append(X, X, axis=2)),
    ("pad_constant", lambda m: m.pad(X, ((0, 1), (2, 0), (1, 1))),
     lambda: np.pad(X, ((0, 1), (2, 0), (1, 1)))),
    ("pad_values", lambda m: m.pad(V, (2, 3), constant_values=(7, 9)),
     lambda: np.pad(V, (2, 3), constant_values=(7, 9))),
    ("pad_edge", lambda m: m.pad(X, 2, mode="edge"), lambda: np.pad(X, 2, mode="edge")),
    ("pad_wrap", lambda m: m.pad(V, (7, 3), mode="wrap"), lambda: np.pad(V, (7, 3), mode="wrap")),
    ("pad_reflect", lambda m: m.pad(V, (6, 2), mode="reflect"),
     lambda: np.pad(V, (6, 2), mode="reflect")),
    ("pad_reflect_long", lambda m: m.pad(V[:3], (9, 11), mode="reflect"),
     lambda: np.pad(V[:3], (9, 11), mode="reflect")),
    ("pad_symmetric_long", lambda m: m.pad(V[:2], (5, 6), mode="symmetric"),
     lambda: np.pad(V[:2], (5, 6), mode="symmetric")),
    ("pad_single_reflect", lambda m: m.pad(V[:1], 3, mode="reflect"),
     lambda: np.pad(V[:1], 3, mode="reflect")),
    ("pad_symmetric", lambda m: m.pad(X, ((1, 2), (3, 0), (0, 5)), mode="symmetric"),
     lambda: np.pad(X, ((1, 2), (3, 0), (0, 5)), mode="symmetric")),
    ("diagonal", lambda m: m.diagonal(X, 1, 1, 2), lambda: np.diagonal(X, 1, 1, 2)),
    ("diagonal_neg", lambda m: m.diagonal(X[0], -1), lambda: np.diagonal(X[0], -1)),
    ("trace", lambda m: m.trace(X, 0, 1, 2), lambda: np.trace(X, 0, 1, 2)),
    ("diag_1d", lambda m: m.diag(V, 2), lambda: np.diag(V, 2)),
    ("diag_1d_neg", lambda m: m.diag(V, -1), lambda: np.diag(V, -1)),
    ("diag_2d", lambda m: m.diag(X[0], 1), lambda: np.diag(X[0], 1)),
    ("diagflat", lambda m: m.diagflat(X[0, :2, :2]), lambda: np.diagflat(X[0, :2, :2])),
    ("tril", lambda m: m.tril(X), lambda: np.tril(X)),
    ("triu", lambda m: m.triu(X, 1), lambda: np.triu(X, 1)),
    ("tril_neg", lambda m: m.tril(X[0], -1), lambda: np.tril(X[0], -1)),
]


@pytest.mark.parametrize("name,fun,reference", SHAPE_CASES, ids=[c[0] for c in SHAPE_CASES])
def test_shape_function_matches_numpy(name, fun, reference):
    expected = reference()
    actual = fun(jnp)
    assert actual.shape == expected.shape
    np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize("name,fun,reference", SHAPE_CASES, ids=[c[0] for c in SHAPE_CASES])
def test_shape_function_traces_to_the_same_aval(name, fun, reference):
    out = eval_shape(lambda: fun(jnp))
    assert out.shape == reference().shape


def test_split_family_matches_numpy():
    for ours, theirs in [
        (jnp.split(X, 2), np.split(X, 2)),
        (jnp.split(X, [1, 3], axis=2), np.split(X, [1, 3], axis=2)),
        (jnp.array_split(V, 3), np.array_split(V, 3)),
        (jnp.array_split(X, 3, axis=2), np.array_split(X, 3, axis=2)),
        (jnp.hsplit(X, 3), np.hsplit(X, 3)),
        (jnp.vsplit(X, 2), np.vsplit(X, 2)),
        (jnp.dsplit(X, [1]), np.dsplit(X, [1])),
        (jnp.split(V, [-2]), np.split(V, [-2])),
    ]:
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="does not result in an equal division"):
        jnp.split(V, 2)
    assert [u.shape for u in jnp.unstack(X, axis=1)] == [(2, 4)] * 3


def test_broadcast_arrays_and_shapes():
    a, b = jnp.broadcast_arrays(np.ones((2, 1)), np.ones(3, np.int32))
    assert a.shape == b.shape == (2, 3)
    assert jnp.broadcast_shapes((2, 1), (1, 3), ()) == (2, 3)
    with pytest.raises(ValueError, match="incompatible shapes"):
        jnp.broadcast_shapes((2,), (3,))
    with pytest.raises(ValueError, match="broadcast_to: incompatible shapes"):
        jnp.broadcast_to(np.ones(3), (2, 4))


def test_shape_errors_name_the_function():
    # As JAX: a NumPy array is reshaped by NumPy's own method (NumPy's ValueError); a laminax
    # value gets jnp's TypeError.
    with pytest.raises(ValueError, match="cannot reshape array of size 24 into shape"):
        jnp.reshape(X, (5, -1))
    for shape, message in [((5, -1), "cannot reshape an array of size 24 into shape"),
                           ((5, 5), "the sizes differ"),
                           ((-1, -1), "only specify one unknown")]:
        with pytest.raises(TypeError, match=message):
            make_jaxpr(lambda x, shape=shape: jnp.reshape(x, shape))(X)
    with pytest.raises(TypeError, match="not a permutation"):
        jnp.transpose(X, (0, 0, 1))
    with pytest.raises(ValueError, match="cannot select an axis to squeeze out"):
        jnp.squeeze(X, 1)
    with pytest.raises(ValueError, match="all input arrays must have the same shape"):
        jnp.stack([V, V[:2]])
    with pytest.raises(TypeError, match="same number of dimensions"):
        jnp.concatenate([X, V])
    with pytest.raises(NotImplementedError, match="mode 'median' is not supported"):
        jnp.pad(V, 1, mode="median")
    with pytest.raises(TypeError, match="concatenate requires ndarray or scalar arguments"):
        jnp.concatenate([V, "a"])


def test_concatenate_promotes_dtypes():
    out = jnp.concatenate([np.ones(2, np.int8), np.ones(2, np.float16)])
    assert out.dtype == np.float16
    assert jnp.stack([1, 2.5]).dtype == np.float32


def test_flip_traces_to_rev_and_roll_to_slices():
    assert "rev[dimensions=(0,)]" in str(make_jaxpr(jnp.flip)(V))
    prims = [e.primitive.name for e in make_jaxpr(lambda v: jnp.roll(v, 1))(V).eqns]
    assert prims == ["slice", "slice", "concatenate"]


# ----- creation ---------------------------------------------------------------------------

CREATION_CASES = [
    ("zeros", lambda m: m.zeros((2, 3)), lambda: np.zeros((2, 3), np.float32)),
    ("zeros_int", lambda m: m.zeros(4, np.int8), lambda: np.zeros(4, np.int8)),
    ("ones", lambda m: m.ones((2,), bool), lambda: np.ones(2, bool)),
    ("full", lambda m: m.full((2, 2), 7.5), lambda: np.full((2, 2), 7.5, np.float32)),
    ("full_array", lambda m: m.full((2, 3), np.arange(3)),
     lambda: np.full((2, 3), np.arange(3, dtype=np.int32))),
    ("empty", lambda m: m.empty(3, np.int32), lambda: np.zeros(3, np.int32)),
    ("zeros_like", lambda m: m.zeros_like(X), lambda: np.zeros_like(X)),
    ("ones_like", lambda m: m.ones_like(V, dtype=np.float32), lambda: np.ones(5, np.float32)),
    ("full_like", lambda m: m.full_like(V, 3, shape=(2, 2)), lambda: np.full((2, 2), 3, np.int32)),
    ("arange", lambda m: m.arange(7), lambda: np.arange(7, dtype=np.int32)),
    ("arange_float", lambda m: m.arange(1.0, 3.0, 0.25),
     lambda: np.arange(1.0, 3.0, 0.25, dtype=np.float32)),
    ("arange_neg", lambda m: m.arange(10, 1, -3), lambda: np.arange(10, 1, -3, dtype=np.int32)),
    ("arange_dtype", lambda m: m.arange(4, dtype=np.float32),
     lambda: np.arange(4.0, dtype=np.float32)),
    ("linspace", lambda m: m.linspace(0, 1, 7), lambda: np.linspace(0, 1, 7, dtype=np.float32)),
    ("linspace_noend", lambda m: m.linspace(2.0, 3.0, 5, endpoint=False),
     lambda: np.linspace(2.0, 3.0, 5, endpoint=False, dtype=np.float32)),
    ("linspace_arrays", lambda m: m.linspace(np.zeros(2), np.array([1.0, 2.0]), 4, axis=1),
     lambda: np.linspace(np.zeros(2), np.array([1.0, 2.0]), 4, axis=1).astype(np.float32)),
    ("linspace_int", lambda m: m.linspace(0, 10, 4, dtype=np.int32),
     lambda: np.linspace(0, 10, 4, dtype=np.int32)),
    ("logspace", lambda m: m.logspace(0, 3, 4), lambda: np.logspace(0, 3, 4, dtype=np.float32)),
    ("logspace_base", lambda m: m.logspace(0, 3, 4, base=2.0),
     lambda: np.logspace(0, 3, 4, base=2.0, dtype=np.float32)),
    ("geomspace", lambda m: m.geomspace(1, 1000, 4),
     lambda: np.geomspace(1, 1000, 4).astype(np.float32)),
    ("eye", lambda m: m.eye(3, 4, k=1), lambda: np.eye(3, 4, k=1, dtype=np.float32)),
    ("eye_neg", lambda m: m.eye(3, k=-2, dtype=np.int32), lambda: np.eye(3, k=-2, dtype=np.int32)),
    ("identity", lambda m: m.identity(2), lambda: np.identity(2, np.float32)),
    ("tri", lambda m: m.tri(3, 4, 1), lambda: np.tri(3, 4, 1, np.float32)),
    ("array_list", lambda m: m.array([[1, 2], [3, 4]]),
     lambda: np.array([[1, 2], [3, 4]], np.int32)),
    ("array_mixed", lambda m: m.array([1, 2.5]), lambda: np.array([1, 2.5], np.float32)),
    ("array_ndmin", lambda m: m.array(V, ndmin=3), lambda: np.array(V, ndmin=3)),
    ("asarray_dtype", lambda m: m.asarray([1, 2], dtype=np.float16),
     lambda: np.array([1, 2], np.float16)),
    ("array_f64_to_f32", lambda m: m.array(np.ones(2)), lambda: np.ones(2, np.float32)),
]


@pytest.mark.parametrize("name,fun,reference", CREATION_CASES, ids=[c[0] for c in CREATION_CASES])
def test_creation_matches_numpy(name, fun, reference):
    expected = reference()
    actual = fun(jnp)
    assert np.asarray(actual).dtype == expected.dtype
    np.testing.assert_allclose(np.asarray(actual, np.float64), expected.astype(np.float64),
                               rtol=1e-6)


def test_meshgrid_matches_numpy():
    a, b, c = np.arange(3), np.arange(2), np.arange(4)
    for kwargs in ({}, {"indexing": "ij"}, {"sparse": True}, {"sparse": True, "indexing": "ij"}):
        ours, theirs = jnp.meshgrid(a, b, c, **kwargs), np.meshgrid(a, b, c, **kwargs)
        for x, y in zip(ours, theirs, strict=True):
            np.testing.assert_array_equal(x, y)


def test_linspace_retstep():
    values, step = jnp.linspace(0.0, 1.0, 5, retstep=True)
    assert float(step) == pytest.approx(0.25)
    np.testing.assert_allclose(values, np.linspace(0, 1, 5))


def test_creation_weak_types_follow_jax():
    assert eval_shape(lambda: jnp.full(3, 1.0)).weak_type
    assert not eval_shape(lambda: jnp.zeros(3)).weak_type
    assert not eval_shape(lambda: jnp.arange(3.0)).weak_type
    assert eval_shape(lambda: jnp.asarray(1.0)).weak_type
    assert not eval_shape(lambda: jnp.array([1.0])).weak_type
    assert not eval_shape(lambda: jnp.float32(3)).weak_type


def test_array_of_traced_values_stacks():
    out = make_jaxpr(lambda v: jnp.array([v, 2 * v, 1.0]))(np.float32(1))
    assert out.out_avals[0].shape == (3,)
    assert [e.primitive.name for e in out.eqns][-1] == "concatenate"


def test_creation_errors():
    with pytest.raises(TypeError, match="jnp.zeros: Shapes must be 1D sequences of concrete values of integer type"):
        jnp.zeros((2.5,))
    with pytest.raises(ValueError, match="the list is ragged"):
        jnp.array([[1, 2], [3]])
    with pytest.raises(ZeroDivisionError, match="step must not be zero"):
        jnp.arange(0, 3, 0)
    from laminax_core import errors

    with pytest.raises(errors.ConcretizationTypeError,
                       match="argument of jnp.arange must be a concrete value"):
        make_jaxpr(lambda n: jnp.arange(n))(np.int32(3))


def test_x64_mode_keeps_64_bit_dtypes():
    with config.enable_x64(True):
        assert jnp.zeros(2).dtype == np.float64
        assert jnp.arange(3).dtype == np.int64
        assert jnp.array(np.ones(2)).dtype == np.float64


def test_dtype_objects_are_constructors_and_dtypes():
    out = jnp.float32(3)
    assert out.dtype == np.float32 and out.shape == ()
    np.testing.assert_array_equal(jnp.int8([1, 300 % 256]), np.array([1, 44], np.int8))
    assert np.dtype(jnp.bfloat16) == jnp.bfloat16.dtype
    assert jnp.float32 == np.float32 and hash(jnp.float32) == hash(np.float32)
    assert jnp.zeros(2, jnp.int16).dtype == np.int16
    assert jnp.ones(1).astype(jnp.bool_).dtype == np.bool_ if hasattr(jnp.ones(1), "astype") \
        else True
    assert isinstance(np.float32(1), jnp.float32)
    assert jnp.int_ is jnp.int64 and jnp.bool_ is jnp.bool
    assert isinstance(np.zeros(2), jnp.ndarray) and not isinstance(1.0, jnp.ndarray)
    assert jnp.issubdtype(jnp.bfloat16, jnp.floating)
    assert jnp.result_type(jnp.int8, 1.0) == np.float32
    assert jnp.promote_types(jnp.int8, jnp.uint8) == np.int16
    assert jnp.finfo(jnp.float16).max == np.finfo(np.float16).max
    assert jnp.iinfo(jnp.int8).min == -128
    assert jnp.pi == np.pi and jnp.newaxis is None and np.isnan(jnp.nan) and jnp.inf == np.inf
