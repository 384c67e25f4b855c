"""lax reductions over empty axes: max and min give their identities (the dtype's lowest and
highest values), as JAX's do, and jnp.max/jnp.min honour `initial` there."""

import ml_dtypes
import numpy as np
import pytest
from laminax_core import lax
from laminax_core import numpy as jnp

DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16, np.int32, np.int8, np.uint8, np.bool_]


def _extremes(dtype):
    if dtype == np.bool_:
        return False, True
    if np.issubdtype(dtype, np.integer):
        return np.iinfo(dtype).min, np.iinfo(dtype).max
    return -np.inf, np.inf


@pytest.mark.parametrize("dtype", DTYPES)
def test_empty_max_and_min_give_the_dtype_identities(dtype):
    x = np.zeros((0, 3), dtype)
    lowest, highest = _extremes(dtype)
    out_max, out_min = lax.reduce_max(x, (0,)), lax.reduce_min(x, (0,))
    assert out_max.dtype == dtype and out_max.shape == (3,)
    np.testing.assert_array_equal(out_max.astype(np.float64), np.full(3, lowest, np.float64))
    np.testing.assert_array_equal(out_min.astype(np.float64), np.full(3, highest, np.float64))


def test_max_over_all_axes_of_an_empty_array():
    assert lax.reduce_max(np.zeros((2, 0), np.float32), (0, 1)) == -np.inf
    assert lax.reduce_min(np.zeros((0,), np.int32), (0,)) == np.iinfo(np.int32).max


def test_non_empty_reductions_are_unchanged():
    x = np.random.RandomState(0).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_array_equal(lax.reduce_max(x, (1,)), x.max(1))
    np.testing.assert_array_equal(lax.reduce_min(x, (0, 1)), x.min())


def test_numpy_max_of_an_empty_axis_uses_initial():
    empty = np.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(jnp.max(empty, axis=0, initial=2.0), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(jnp.min(empty.astype(np.int32), axis=0, initial=5), [5, 5, 5])
    assert jnp.max(np.zeros((2, 0), np.float32), axis=0).shape == (0,)


def test_numpy_max_of_an_empty_axis_without_initial_raises():
    with pytest.raises(ValueError, match="zero-size array"):
        jnp.max(np.zeros((0, 3), np.float32), axis=0)
