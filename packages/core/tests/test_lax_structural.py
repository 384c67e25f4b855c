"""Dynamic slicing: negative start indices, `allow_negative_indices`, and the batching rules
that turn a vmapped dynamic_slice into a gather and a dynamic_update_slice into a scatter."""

import numpy as np
import pytest
from laminax_core import grad, jacrev, lax, make_jaxpr, vmap

X = np.arange(5, dtype=np.float32)
M = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7


def _prims(closed):
    return [e.primitive.name for e in closed.jaxpr.eqns]


def test_negative_start_counts_from_the_end():
    np.testing.assert_array_equal(lax.dynamic_slice(X, (-2,), (2,)), X[3:])
    np.testing.assert_array_equal(lax.dynamic_slice(X, (np.int32(-1),), (2,)), X[3:])  # clamped
    traced = make_jaxpr(lambda x, i: lax.dynamic_slice(x, (i,), (2,)))(X, np.int32(0))
    assert _prims(traced) == ["lt", "add", "select_n", "dynamic_slice"]
    out = vmap(lambda i: lax.dynamic_slice(X, (i,), (2,)))(np.array([-2, -5, -9], np.int32))
    np.testing.assert_array_equal(out, [X[3:], X[:2], X[:2]])
    updated = lax.dynamic_update_slice(np.zeros(4, np.float32), np.ones(2, np.float32), (-1,))
    np.testing.assert_array_equal(updated, [0, 0, 1, 1])


def test_allow_negative_indices_false():
    with pytest.raises(ValueError, match="allow_negative_indices=False"):
        lax.dynamic_slice(X, (-1,), (2,), allow_negative_indices=False)
    f = lambda i: lax.dynamic_slice(X, (i,), (2,), allow_negative_indices=False)  # noqa: E731
    assert _prims(make_jaxpr(f)(np.int32(0))) == ["dynamic_slice"]
    np.testing.assert_array_equal(f(np.array(-1, np.int32)), X[:2])  # out of bounds: clamped
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    closed = make_jaxpr(lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, axis=1))(m, np.int32(1))
    assert _prims(closed) == ["lt", "add", "select_n", "dynamic_slice"]  # only the sliced axis
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(m, -1, 1, keepdims=False), m[:, 2])
    with pytest.raises(ValueError, match="needs 2 start indices"):
        lax.dynamic_slice(m, (0,), (1, 1))


@pytest.mark.parametrize("in_axes", [(0, 0), (None, 0), (2, 0), (0, None)])
def test_vmapped_dynamic_slice_is_one_gather(in_axes):
    x = M if in_axes[0] is not None else M[0]
    size = 4 if in_axes[0] == 2 else 2
    idx = np.array([1, -1, 0, 2][:size], np.int32) if in_axes[1] is not None else np.int32(1)
    f = lambda a, i: lax.dynamic_slice(a, (i, 1), (2, 2))  # noqa: E731
    closed = make_jaxpr(vmap(f, in_axes=in_axes))(x, idx)
    assert _prims(closed).count("gather") == 1 and "dynamic_slice" not in _prims(closed)
    out = vmap(f, in_axes=in_axes)(x, idx)
    for b in range(size):
        a = x if in_axes[0] is None else np.moveaxis(x, in_axes[0], 0)[b]
        i = idx if in_axes[1] is None else idx[b]
        np.testing.assert_array_equal(out[b], f(a, i))


@pytest.mark.parametrize("in_axes", [(0, 0, 0), (None, 0, 0), (0, None, 0), (0, None, None)])
def test_vmapped_dynamic_update_slice_is_one_scatter(in_axes):
    x = M if in_axes[0] is not None else M[0]
    u = -M[:, :2, :2] if in_axes[1] is not None else -M[0, :2, :2]
    idx = np.array([2, -1], np.int32) if in_axes[2] is not None else np.int32(1)
    f = lambda a, v, i: lax.dynamic_update_slice(a, v, (i, 1))  # noqa: E731
    closed = make_jaxpr(vmap(f, in_axes=in_axes))(x, u, idx)
    assert _prims(closed).count("scatter") == 1
    out = vmap(f, in_axes=in_axes)(x, u, idx)
    for b in range(2):
        args = [a if d is None else a[b] for a, d in zip((x, u, idx), in_axes, strict=True)]
        np.testing.assert_array_equal(out[b], f(*args))


def test_gradients_of_vmapped_dynamic_slicing():
    idx = np.array([0, -1], np.int32)

    def loss(x, u):
        y = vmap(lambda a, v, i: lax.dynamic_update_slice(a, v, (i, 1)))(x, u, idx)
        return (vmap(lambda a, i: lax.dynamic_slice(a, (i, 0), (2, 3)))(y, idx) ** 2).sum()

    gx, gu = grad(loss, argnums=(0, 1))(M, M[:, :2, :2])
    expected_x, expected_u = np.zeros_like(M), np.zeros((2, 2, 2), np.float32)
    for b, i in enumerate((0, 1)):
        y = M[b].copy()
        y[i:i + 2, 1:3] = M[b, :2, :2]
        window = np.zeros_like(y)
        window[i:i + 2, 0:3] = 2 * y[i:i + 2, 0:3]
        expected_u[b] = window[i:i + 2, 1:3]
        window[i:i + 2, 1:3] = 0
        expected_x[b] = window
    np.testing.assert_allclose(gx, expected_x, rtol=1e-6)
    np.testing.assert_allclose(gu, expected_u, rtol=1e-6)


def test_select_n_jvp_makes_one_zeros_array():
    closed = make_jaxpr(grad(lambda x: lax.select_n(x > 0, x * x, x).sum()))(X - 2)
    assert _prims(closed).count("broadcast_in_dim") == 3  # dead zeros, ones, zeros
    g = grad(lambda x: lax.select_n(x > 0, x * x, x).sum())(X - 2)
    np.testing.assert_array_equal(g, np.where(X - 2 > 0, 1.0, 2 * (X - 2)))
    g = grad(lambda x: lax.select_n(x > 0, x * x, np.float32(3)).sum())(X - 2)
    np.testing.assert_array_equal(g, np.where(X - 2 > 0, 0.0, 2 * (X - 2)))


def test_psum_transpose_binds_a_psum_over_the_named_axes_only():
    f = jacrev(lambda x: vmap(lambda v: lax.psum(v * v, "i"), axis_name="i")(x))
    closed = make_jaxpr(f)(X[:3])
    psums = [e.params["axes"] for e in closed.jaxpr.eqns if e.primitive.name == "psum"]
    assert psums == [(0,), ()]
    np.testing.assert_array_equal(f(X[:3]), np.broadcast_to(2 * X[:3], (3, 3)))


@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_vmapped_split_keeps_the_batch_dimension_in_place(in_axis):
    f = lambda v: lax.split(v, (1, 2), axis=0)  # noqa: E731
    x = np.moveaxis(np.arange(24, dtype=np.float32).reshape(4, 3, 2), 0, in_axis)
    closed = make_jaxpr(vmap(f, in_axes=in_axis))(x)
    # one split where the batch dimension is; only moving the outputs to 0 transposes
    assert _prims(closed) == ["split"] + ["transpose"] * 2 * (in_axis != 0)
    outs = vmap(f, in_axes=in_axis)(x)
    for b in range(4):
        for got, want in zip(outs, f(np.moveaxis(x, in_axis, 0)[b]), strict=True):
            np.testing.assert_array_equal(got[b], want)
    with pytest.raises(ValueError, match="sum to dimension 0"):
        lax.split(np.ones((3, 4), np.float32), (1, 1), 0)
