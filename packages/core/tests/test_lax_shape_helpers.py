"""lax.broadcast_shapes, lax.broadcast_like and lax.empty."""

import numpy as np
import pytest
from laminax_core import lax, make_jaxpr


@pytest.mark.parametrize(
    "shapes,expected",
    [([(2, 1), (3,)], (2, 3)), ([(), (2,)], (2,)), ([(1, 4), (5, 1, 1)], (5, 1, 4)), ([], ())],
)
def test_broadcast_shapes_matches_numpy(shapes, expected):
    assert lax.broadcast_shapes(*shapes) == expected
    if shapes:
        assert np.broadcast_shapes(*shapes) == expected


def test_broadcast_shapes_rejects_incompatible_dims():
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: shapes=\[\(2,\)"):
        lax.broadcast_shapes((2,), (3,))


def test_broadcast_like_keeps_the_dtype():
    like = np.zeros((2, 3), np.float32)
    out = lax.broadcast_like(np.arange(3, dtype=np.int32), like)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [[0, 1, 2], [0, 1, 2]])
    np.testing.assert_array_equal(lax.broadcast_like(np.ones((2, 1), np.float32), like),
                                  np.ones((2, 3)))
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        lax.broadcast_like(np.ones(4, np.float32), like)


def test_empty_has_the_shape_and_dtype_and_stages_no_operands():
    out = lax.empty((2, 3), np.int32)
    assert out.shape == (2, 3) and out.dtype == np.int32
    jaxpr = make_jaxpr(lambda: lax.empty((4,), np.float32))()
    assert jaxpr.out_avals[0].shape == (4,)
