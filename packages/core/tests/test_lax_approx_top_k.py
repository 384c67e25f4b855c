"""lax.approx_max_k / approx_min_k: exact results off TPU (NaN and tie order as XLA's
fallback), derivatives, vmap, output sizes, and errors."""

import numpy as np
import pytest
from laminax_core import grad, lax, vmap

X = np.random.RandomState(0).standard_normal((3, 10)).astype(np.float32)


def test_max_and_min_k_are_exact_along_any_dimension():
    values, indices = lax.approx_max_k(X, 3)
    np.testing.assert_array_equal(values, -np.sort(-X, 1)[:, :3])
    np.testing.assert_array_equal(np.take_along_axis(X, indices, 1), values)
    values, indices = lax.approx_min_k(X, 2, reduction_dimension=0)
    np.testing.assert_array_equal(values, np.sort(X, 0)[:2])
    assert indices.dtype == np.int32


def test_nans_and_ties():
    x = np.array([[1.0, 3.0, 3.0, 2.0, np.nan]], np.float32)
    values, indices = lax.approx_max_k(x, 3)
    assert np.isnan(values[0, 0]) and indices.tolist() == [[4, 1, 2]]
    values, indices = lax.approx_min_k(x, 3)
    assert values.tolist() == [[1.0, 2.0, 3.0]] and indices.tolist() == [[0, 3, 1]]


def test_gradient_flows_to_the_selected_entries():
    g = grad(lambda v: lax.approx_max_k(v, 3)[0].sum())(X)
    expected = np.zeros_like(X)
    np.put_along_axis(expected, np.argsort(-X, 1)[:, :3], 1.0, 1)
    np.testing.assert_array_equal(g, expected)


def test_vmap_matches_rows():
    out = vmap(lambda v: lax.approx_max_k(v, 2)[1])(X)
    np.testing.assert_array_equal(out, np.argsort(-X, 1)[:, :2])


def test_unaggregated_output_size_is_xlas():
    assert lax.approx_max_k(np.zeros((2, 6), np.float32), 3, aggregate_to_topk=False)[0].shape \
        == (2, 6)
    assert lax.approx_max_k(np.zeros((2, 3000), np.float32), 3,
                            aggregate_to_topk=False)[0].shape == (2, 256)


@pytest.mark.parametrize("call,match", [
    (lambda: lax.approx_max_k(X, 11), "k must be smaller than the size of reduction_dim 10"),
    (lambda: lax.approx_max_k(X, 0), "k must be positive"),
    (lambda: lax.approx_max_k(X.astype(np.int32), 2), "operand must be a floating type"),
    (lambda: lax.approx_max_k(X, 2, reduction_dimension=2), "out of bounds"),
])
def test_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()
