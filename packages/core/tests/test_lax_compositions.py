"""lax functions that JAX writes as compositions of primitives: select, reciprocal, full,
broadcast helpers, the *_in_dim slicing helpers, conv_transpose and conv_with_general_padding.
Values against NumPy, the primitives they stage, derivatives, and errors."""

import numpy as np
import pytest
from laminax_core import lax, make_jaxpr, vmap
from laminax_core.testing import check_grads

X = np.arange(12, dtype=np.float32).reshape(3, 4)


def _primitives(fun, *args):
    return [e.primitive.name for e in make_jaxpr(fun)(*args).eqns]


def test_select_and_reciprocal():
    np.testing.assert_array_equal(lax.select(X > 5, X, -X), np.where(X > 5, X, -X))
    np.testing.assert_allclose(lax.reciprocal(X + 1), 1 / (X + 1))
    assert _primitives(lambda v: lax.reciprocal(v), X) == ["integer_pow"]
    check_grads(lambda a, b: lax.select(X > 5, a, b), (X, X * 2), order=2)


def test_full_and_broadcast_helpers():
    assert lax.full((2, 3), 1.5).dtype == np.float32
    np.testing.assert_array_equal(lax.full((2,), 3, np.int8), np.full(2, 3, np.int8))
    assert lax.full_like(X, 2).dtype == np.float32 and lax.full_like(X, 2, np.int32)[0, 0] == 2
    assert lax.broadcast(X, (2,)).shape == (2, 3, 4)
    assert lax.broadcast_to_rank(X, 4).shape == (1, 1, 3, 4)
    np.testing.assert_array_equal(lax.collapse(X, 0, 2), X.reshape(12))
    with pytest.raises(TypeError, match="scalar fill_value"):
        lax.full((2,), np.ones(2, np.float32))


def test_in_dim_helpers_match_numpy():
    np.testing.assert_array_equal(lax.index_in_dim(X, -1, 1, keepdims=False), X[:, -1])
    np.testing.assert_array_equal(lax.slice_in_dim(X, 1, None, 2, axis=1), X[:, 1::2])
    np.testing.assert_array_equal(lax.dynamic_slice_in_dim(X, np.int32(2), 2, 1), X[:, 2:4])
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(X, np.int32(1), 0, False), X[1])
    out = lax.dynamic_update_index_in_dim(X, np.zeros(4, np.float32), np.int32(2), 0)
    np.testing.assert_array_equal(out, np.concatenate([X[:2], np.zeros((1, 4))]))
    out = lax.dynamic_update_slice_in_dim(X, np.zeros((3, 2), np.float32), np.int32(1), 1)
    np.testing.assert_array_equal(out[:, 1:3], 0)
    with pytest.raises(IndexError, match="out of bounds"):
        lax.index_in_dim(X, 3, 0)


def test_in_dim_helpers_under_vmap_with_traced_indices():
    idx = np.array([0, 2, 1], np.int32)
    out = vmap(lambda i: lax.dynamic_index_in_dim(X, i, 1, keepdims=False))(idx)
    np.testing.assert_array_equal(out, X[:, idx].T)


@pytest.mark.parametrize("padding", ["SAME", "VALID", [(1, 2)]])
def test_conv_transpose_is_the_input_gradient_of_a_strided_conv(padding):
    x = np.random.RandomState(0).standard_normal((1, 3, 2)).astype(np.float32)
    w = np.random.RandomState(1).standard_normal((3, 2, 4)).astype(np.float32)
    out = lax.conv_transpose(x, w, (2,), padding)
    assert out.shape[0] == 1 and out.shape[2] == 4
    check_grads(lambda a, b: lax.conv_transpose(a, b, (2,), padding), (x, w), order=1)


def test_conv_with_general_padding():
    x = np.ones((1, 1, 5), np.float32)
    out = lax.conv_with_general_padding(x, np.ones((1, 1, 3), np.float32), (1,), [(1, 1)],
                                        None, None)
    np.testing.assert_array_equal(out[0, 0], [2, 3, 3, 3, 2])


def test_tile_stack_unstack_errors_match_jax_wording():
    with pytest.raises(TypeError, match=r"reps length must be equal to the ndim of x, got "
                                        r"len\(reps\)=1 and x.ndim=2"):
        lax.tile(X, (2,))
    with pytest.raises(ValueError, match=r"All input arrays must have the same shape. Got "
                                         r"\(3, 4\), \(4, 3\)"):
        lax.stack([X, X.T])
    with pytest.raises(TypeError, match="lax.stack requires arguments to have the same dtypes, "
                                        "got float32, int32"):
        lax.stack([X, X.astype(np.int32)])
    assert len(lax.unstack(X, -1)) == 4 and lax.stack([X, X], -1).shape == (3, 4, 2)
