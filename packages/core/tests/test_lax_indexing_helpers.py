"""lax.index_take (wrapping multi-axis take) and lax.scatter_apply (a function applied once
per scatter hit), and x.at[idx].apply, which shares its counting."""

import numpy as np
import pytest
from laminax_core import lax, make_jaxpr
from laminax_core.numpy._indexing import IndexUpdateHelper

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
DN = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                 scatter_dims_to_operand_dims=(0,))


@pytest.mark.parametrize("idxs,axes", [
    ((np.array([1, 0, -1, 5]),), (0,)),
    ((np.array([2, -4]),), (1,)),
    ((np.array([1, 0, 3]), np.array([-1, 4, 2])), (0, 2)),
    ((np.array([0]), np.array([1]), np.array([7])), (0, 1, 2)),
])
def test_index_take_wraps_indices_like_numpy_take(idxs, axes):
    wrapped = [np.mod(i, X.shape[a]) for i, a in zip(idxs, axes, strict=True)]
    index = [slice(None)] * X.ndim
    for a, i in zip(axes, wrapped, strict=True):
        index[a] = i
    expected = X[tuple(index)]
    # numpy puts the advanced-index dim where the first indexed axis was; index_take puts it
    # first
    if axes[0] != 0 and len(axes) == 1:
        expected = np.moveaxis(expected, axes[0], 0)
    np.testing.assert_array_equal(lax.index_take(X, idxs, axes), expected)


def test_index_take_needs_one_index_array_per_axis():
    with pytest.raises(ValueError, match="got 1 index arrays for 2 axes"):
        lax.index_take(X, (np.array([0]),), (0, 1))


def test_scatter_apply_applies_once_per_hit():
    x = np.arange(5, dtype=np.float32)
    out = lax.scatter_apply(x, np.array([[1], [1], [3]]), lambda v: v * 2 + 1, DN,
                            update_shape=(3,))
    np.testing.assert_array_equal(out, [0, 7, 2, 7, 4])


def test_scatter_apply_modes():
    x = np.arange(5, dtype=np.float32)
    dropped = lax.scatter_apply(x, np.array([[1], [7]]), lambda v: -v, DN, update_shape=(2,),
                                mode="drop")
    np.testing.assert_array_equal(dropped, [0, -1, 2, 3, 4])
    clipped = lax.scatter_apply(x, np.array([[7]]), lambda v: -v, DN, update_shape=(1,),
                                mode="clip")
    np.testing.assert_array_equal(clipped, [0, 1, 2, 3, -4])


def test_at_apply_repeats_for_repeated_indices_and_stages_a_loop():
    x = np.arange(5, dtype=np.float32)
    out = IndexUpdateHelper(x)[np.array([1, 1, 3])].apply(lambda v: v * 2 + 1)
    np.testing.assert_array_equal(out, [0, 7, 2, 7, 4])
    np.testing.assert_allclose(IndexUpdateHelper(x)[1:3].apply(lax.sin),
                               [0, np.sin(1), np.sin(2), 3, 4], rtol=1e-6)
    jaxpr = make_jaxpr(lambda v: IndexUpdateHelper(v)[0].apply(lax.sin))(x)
    assert "while" in [e.primitive.name for e in jaxpr.jaxpr.eqns]
