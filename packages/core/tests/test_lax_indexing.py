"""gather and the scatter family: dimension numbers (windows, point gathers, batching dims),
out-of-bounds modes, derivatives (with duplicate indices), batching, and errors."""

import numpy as np
import pytest
from laminax_core import grad, jvp, lax, make_jaxpr, vmap
from laminax_core.testing import check_grads

GDN, SDN, MODE = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers, lax.GatherScatterMode
X = np.arange(20, dtype=np.float32).reshape(4, 5)
ROWS = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
ROW_UPDATES = SDN(update_window_dims=(1,), inserted_window_dims=(0,),
                  scatter_dims_to_operand_dims=(0,))


def test_point_gather_and_windows():
    points = GDN(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1))
    idx = np.array([[0, 1], [3, 4]], np.int32)
    np.testing.assert_array_equal(lax.gather(X, idx, points, (1, 1)), [X[0, 1], X[3, 4]])
    windows = GDN(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 1))
    out = lax.gather(X, np.array([[1, 2]], np.int32), windows, (2, 3))
    np.testing.assert_array_equal(out[0], X[1:3, 2:5])


def test_offset_dims_place_the_window_before_the_batch():
    dn = GDN(offset_dims=(0,), collapsed_slice_dims=(1,), start_index_map=(1,))
    out = lax.gather(X, np.array([[4], [0], [2]], np.int32), dn, (4, 1))
    np.testing.assert_array_equal(out, X[:, [4, 0, 2]])


def test_gather_with_operand_batching_dims_is_take_along_axis():
    dn = GDN(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
             operand_batching_dims=(0,), start_indices_batching_dims=(0,))
    idx = np.array([[[4], [0]], [[1], [1]], [[2], [3]], [[0], [0]]], np.int32)
    out = lax.gather(X, idx, dn, (1, 1))
    np.testing.assert_array_equal(out, np.take_along_axis(X, idx[..., 0], 1))


@pytest.mark.parametrize("mode,fill,expected_last", [
    ("clip", None, X[3]), ("fill", None, np.full(5, np.nan)), ("fill", -1.0, np.full(5, -1.0)),
    (MODE.PROMISE_IN_BOUNDS, None, X[3]),
])
def test_gather_out_of_bounds_modes(mode, fill, expected_last):
    out = lax.gather(X, np.array([[1], [9]], np.int32), ROWS, (1, 5), mode=mode,
                     fill_value=fill)
    np.testing.assert_array_equal(out[0], X[1])
    np.testing.assert_array_equal(out[1], expected_last)


def test_default_mode_promises_in_bounds_and_clamps():
    out = lax.gather(X, np.array([[9]], np.int32), ROWS, (1, 5))
    np.testing.assert_array_equal(out[0], X[3])
    assert "mode=GatherScatterMode.PROMISE_IN_BOUNDS" in str(make_jaxpr(
        lambda v: lax.gather(v, np.array([[1]], np.int32), ROWS, (1, 5)))(X))


def test_fill_defaults_for_integers():
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = lax.gather(ints, np.array([[5]], np.int32), ROWS, (1, 3), mode="fill")
    np.testing.assert_array_equal(out, np.full((1, 3), np.iinfo(np.int32).min))


def test_one_hot_scatter_drops_out_of_bounds_updates():
    upd = np.ones((2, 5), np.float32)
    out = lax.scatter_add(X, np.array([[0], [7]], np.int32), upd, ROW_UPDATES, mode="one_hot")
    np.testing.assert_array_equal(out, X + np.eye(4, 1, dtype=np.float32)[:, :1])


def test_scatter_modes_drop_or_clip_windows():
    upd = np.ones((2, 5), np.float32)
    dropped = lax.scatter_add(X, np.array([[0], [7]], np.int32), upd, ROW_UPDATES)
    np.testing.assert_array_equal(dropped, X + np.eye(4, 1, dtype=np.float32)[:, :1])
    clipped = lax.scatter_add(X, np.array([[0], [7]], np.int32), upd, ROW_UPDATES, mode="clip")
    np.testing.assert_array_equal(clipped[3], X[3] + 1)


def test_scatter_family_values_with_duplicates():
    idx = np.array([[1], [1]], np.int32)
    upd = np.stack([np.full(5, 2.0), np.full(5, 3.0)]).astype(np.float32)
    np.testing.assert_array_equal(lax.scatter_add(X, idx, upd, ROW_UPDATES)[1], X[1] + 5)
    np.testing.assert_array_equal(lax.scatter_mul(X, idx, upd, ROW_UPDATES)[1], X[1] * 6)
    np.testing.assert_array_equal(lax.scatter_min(X, idx, upd, ROW_UPDATES)[1],
                                  np.minimum(X[1], 2))
    np.testing.assert_array_equal(lax.scatter_max(X, idx, upd, ROW_UPDATES)[1],
                                  np.maximum(X[1], 3))
    assert set(lax.scatter(X, idx, upd, ROW_UPDATES)[1]) <= {2.0, 3.0}


def test_scatter_jvp_follows_the_winning_duplicate():
    idx = np.array([[1], [1], [2]], np.int32)
    upd = np.arange(15, dtype=np.float32).reshape(3, 5)
    out, t = jvp(lambda u: lax.scatter(X + 100, idx, u, ROW_UPDATES), (upd,), (upd * 10,))
    np.testing.assert_array_equal(t, np.where(out == X + 100, 0, out * 10))


def test_scatter_gradients_second_order():
    upd = np.random.RandomState(0).standard_normal((3, 5)).astype(np.float32)
    idx = np.array([[1], [1], [2]], np.int32)
    for fun in (lax.scatter_add, lax.scatter, lax.scatter_max, lax.scatter_min):
        check_grads(lambda x, u, f=fun: f(x, idx, u, ROW_UPDATES), (X / 10, upd), order=2)


def test_scatter_mul_update_gradient_needs_unique_indices():
    idx = np.array([[1], [1]], np.int32)
    upd = np.ones((2, 5), np.float32)
    with pytest.raises(NotImplementedError, match="unique_indices=True"):
        grad(lambda u: lax.reduce_sum(lax.scatter_mul(X, idx, u, ROW_UPDATES), (0, 1)))(upd)


@pytest.mark.parametrize("in_axes", [(0, 0), (None, 0), (0, None), (1, 0)])
def test_gather_batching_matches_loop(in_axes):
    xs = np.stack([X, X * 2, X + 1])
    ids = np.array([[[1], [3]], [[0], [0]], [[2], [1]]], np.int32)
    xs_in = np.moveaxis(xs, 0, in_axes[0]) if in_axes[0] is not None else X
    ids_in = ids if in_axes[1] is not None else ids[0]
    out = vmap(lambda x, i: lax.gather(x, i, ROWS, (1, 5)), in_axes=in_axes)(xs_in, ids_in)
    for b in range(3):
        x_b = xs[b] if in_axes[0] is not None else X
        i_b = ids[b] if in_axes[1] is not None else ids[0]
        np.testing.assert_array_equal(out[b], lax.gather(x_b, i_b, ROWS, (1, 5)))


@pytest.mark.parametrize("in_axes", [(0, 0, 0), (None, 0, 0), (0, None, None), (None, None, 1)])
def test_scatter_batching_matches_loop(in_axes):
    xs = np.stack([X, X * 2, X + 1])
    ids = np.array([[[1], [3]], [[0], [0]], [[2], [1]]], np.int32)
    upd = np.arange(30, dtype=np.float32).reshape(3, 2, 5)
    args = [xs, ids, upd]
    fixed = [X, ids[0], upd[0]]
    call = [a if ax is None and False else (np.moveaxis(a, 0, ax) if ax is not None else f)
            for a, f, ax in zip(args, fixed, in_axes, strict=True)]
    out = vmap(lambda x, i, u: lax.scatter_add(x, i, u, ROW_UPDATES), in_axes=in_axes)(*call)
    for b in range(3):
        row = [a[b] if ax is not None else f for a, f, ax in zip(args, fixed, in_axes,
                                                                 strict=True)]
        np.testing.assert_array_equal(out[b], lax.scatter_add(*row, ROW_UPDATES))


def test_params_and_printing_follow_jax():
    text = str(make_jaxpr(lambda x: lax.scatter_add(x, np.array([[1]], np.int32),
                                                    np.ones((1, 5), np.float32),
                                                    ROW_UPDATES))(X))
    assert "scatter-add[" in text and "mode=GatherScatterMode.FILL_OR_DROP" in text
    assert "update_jaxpr={ lambda ; " in text and "update_consts=()" in text
    assert repr(ROWS) == ("GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), "
                          "start_index_map=(0,), operand_batching_dims=(), "
                          "start_indices_batching_dims=())")
    assert MODE.from_any(None) is MODE.FILL_OR_DROP and MODE.from_any("clip") is MODE.CLIP


@pytest.mark.parametrize("fun,error,match", [
    (lambda: lax.gather(X, np.array([[1.0]], np.float32), ROWS, (1, 5)), TypeError,
     "gather: start_indices must be an integer array"),
    (lambda: lax.gather(X, np.array([[1]], np.int32), ROWS, (1, 9)), TypeError,
     r"slice_sizes \(1, 9\) must lie within the operand shape \(4, 5\)"),
    (lambda: lax.gather(X, np.array([[1, 2]], np.int32), ROWS, (1, 5)), TypeError,
     "start_index_map"),
    (lambda: lax.scatter_add(X, np.array([[1]], np.int32), np.ones((1, 5), np.int32),
                             ROW_UPDATES), TypeError,
     "scatter-add: updates dtype int32 must equal the operand dtype float32"),
    (lambda: lax.scatter(X, np.array([[1]], np.int32), np.ones((2, 5), np.float32),
                         ROW_UPDATES), TypeError, "scatter: the scatter dimensions of updates"),
    (lambda: MODE.from_any("wrap"), ValueError, "Unknown gather mode 'wrap'"),
    (lambda: lax.gather(X, np.array([[1]], np.int32), ROWS, (1, 5), mode="one_hot"), ValueError,
     "gather does not support mode ONE_HOT"),
])
def test_errors(fun, error, match):
    with pytest.raises(error, match=match):
        fun()
