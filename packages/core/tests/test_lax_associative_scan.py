"""lax.associative_scan: prefix combinations of every length, reverse, axes, pytrees,
derivatives, and errors."""

import numpy as np
import pytest
from laminax_core import lax, vmap
from laminax_core.testing import check_grads


@pytest.mark.parametrize("n", range(0, 10))
@pytest.mark.parametrize("reverse", [False, True])
def test_sums_of_every_length_match_cumsum(n, reverse):
    x = np.arange(n, dtype=np.int32)
    expected = np.cumsum(x[::-1])[::-1] if reverse else np.cumsum(x)
    np.testing.assert_array_equal(lax.associative_scan(lax.add, x, reverse=reverse), expected)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_products_along_any_axis(axis):
    x = np.random.RandomState(0).uniform(0.5, 1.5, (5, 7)).astype(np.float32)
    out = lax.associative_scan(lax.mul, x, axis=axis)
    np.testing.assert_allclose(out, np.cumprod(x, axis=axis), rtol=1e-5)


def test_booleans_and_maxima():
    flags = np.array([0, 0, 1, 0, 1, 0], bool)
    np.testing.assert_array_equal(lax.associative_scan(lax.bitwise_or, flags),
                                  np.logical_or.accumulate(flags))
    x = np.random.RandomState(1).standard_normal(9).astype(np.float32)
    np.testing.assert_array_equal(lax.associative_scan(lax.max, x), np.maximum.accumulate(x))


def test_pytree_elements_compose_affine_maps():
    # (a, b) represents x -> a x + b; composing two maps is associative
    def compose(f, g):
        return lax.mul(g[0], f[0]), lax.add(lax.mul(g[0], f[1]), g[1])

    a = np.random.RandomState(2).uniform(0.5, 1.5, 6).astype(np.float32)
    b = np.random.RandomState(3).standard_normal(6).astype(np.float32)
    out_a, out_b = lax.associative_scan(compose, (a, b))
    state, expected = 0.0, []
    for ai, bi in zip(a, b, strict=True):
        state = ai * state + bi
        expected.append(state)
    np.testing.assert_allclose(out_b, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out_a, np.cumprod(a), rtol=1e-5)


def test_derivatives_and_vmap():
    x = np.random.RandomState(4).uniform(0.5, 1.5, (3, 6)).astype(np.float32)
    check_grads(lambda v: lax.associative_scan(lax.mul, v, axis=1), (x,), order=2)
    batched = vmap(lambda v: lax.associative_scan(lax.add, v))(x)
    np.testing.assert_allclose(batched, np.cumsum(x, 1), rtol=1e-5)


def test_errors():
    with pytest.raises(ValueError, match="same length along axis 0"):
        lax.associative_scan(lambda a, b: a, (np.ones(3), np.ones(4)))
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        lax.associative_scan(lax.add, np.ones((2, 2)), axis=2)
    with pytest.raises(TypeError, match="fn must return the structure of elems"):
        lax.associative_scan(lambda a, b: (a, b), np.ones(3))
