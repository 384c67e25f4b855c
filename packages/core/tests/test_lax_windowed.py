"""Windowed reductions: padding strings, dilations, the generic body, pooling derivatives
through select_and_gather_add / select_and_scatter_add, batching, and errors."""

import numpy as np
import pytest
from laminax_core import grad, lax, make_jaxpr, vmap
from laminax_core.testing import check_grads

RNG = np.random.RandomState(0)
X = RNG.standard_normal((1, 5, 6, 2)).astype(np.float32)
PADDINGS = ["VALID", "SAME", ((0, 0), (1, 0), (0, 2), (0, 0))]


@pytest.mark.parametrize("fun", [lax.reduce_window_sum, lax.reduce_window_max,
                                 lax.reduce_window_min])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("strides", [(1, 1, 1, 1), (1, 2, 2, 1)])
def test_pooling_derivatives_second_order(fun, padding, strides):
    check_grads(lambda v: fun(v, (1, 2, 3, 1), strides, padding), (X,), order=2)


def test_dilations_shape_and_sum_gradient():
    g = lambda v: lax.reduce_window_sum(v, (1, 2, 2, 1), (1, 1, 1, 1), "VALID",  # noqa: E731
                                        base_dilation=(1, 2, 1, 1), window_dilation=(1, 1, 2, 1))
    assert g(X).shape == (1, 8, 4, 2)
    check_grads(g, (X,), order=1)


def test_padtype_to_pads():
    assert lax.padtype_to_pads((5, 6), (2, 3), (1, 2), "SAME") == [(0, 1), (0, 1)]
    assert lax.padtype_to_pads((5,), (2,), (1,), "SAME_LOWER") == [(1, 0)]
    with pytest.raises(ValueError, match="Unknown padding type"):
        lax.padtype_to_pads((5,), (2,), (1,), "FULL")


def test_monoids_choose_specialized_primitives_and_others_the_generic_one():
    ones = np.ones((2, 3), np.float32)
    assert "reduce_window_max[" in str(make_jaxpr(
        lambda v: lax.reduce_window(v, -np.inf, lax.max, (1, 2), (1, 1), "VALID"))(ones))
    text = str(make_jaxpr(lambda v: lax.reduce_window(v, 1.0, lax.mul, (1, 2), (1, 1),
                                                      "VALID"))(ones))
    assert "reduce_window[" in text and "consts=()" in text and "mul" in text
    out = lax.reduce_window(np.arange(6, dtype=np.float32).reshape(2, 3), 1.0, lax.mul, (1, 2),
                            (1, 1), "VALID")
    np.testing.assert_array_equal(out, [[0, 2], [12, 20]])


def test_max_pool_gradient_goes_to_the_maximum():
    x = np.array([[1, 5], [3, 2]], np.float32)
    g = grad(lambda v: lax.reduce_sum(lax.reduce_window_max(v, (2, 2), (2, 2), "VALID"),
                                      (0, 1)))(x)
    np.testing.assert_array_equal(g, [[0, 1], [0, 0]])
    text = str(make_jaxpr(grad(lambda v: lax.reduce_sum(
        lax.reduce_window_max(v, (2, 2), (1, 1), "SAME"), (0, 1))))(x))
    assert "select_and_scatter_add[" in text and "select_prim=ge" in text


@pytest.mark.parametrize("fun", [lax.reduce_window_sum, lax.reduce_window_max])
def test_batching_matches_loop(fun):
    f = lambda v: fun(v, (2, 3, 1), (2, 1, 1), "SAME")  # noqa: E731
    out = vmap(f, in_axes=2)(X[0][..., None])
    expected = np.stack([f(X[0][:, :, k:k + 1]) for k in range(2)])
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    g = grad(lambda v: lax.reduce_sum(vmap(lambda u: lax.reduce_window_max(
        u, (2, 2), (1, 1), "VALID"))(v), (0, 1, 2)))(X[0, :, :, :2].transpose(2, 0, 1))
    assert g.shape == (2, 5, 6)


@pytest.mark.parametrize("fun,error,match", [
    (lambda: lax.reduce_window_sum(X, (1, 2), (1, 1), "VALID"), TypeError,
     "reduce_window_sum: window_dimensions"),
    (lambda: lax.reduce_window_max(X, (1, 9, 1, 1), (1, 1, 1, 1), "VALID"), TypeError,
     "reduce_window_max: the window"),
    (lambda: lax.reduce_window_sum(np.ones(3, np.bool_), (2,), (1,), "VALID"), TypeError,
     "reduce_window_sum does not accept dtype bool"),
    (lambda: lax.select_and_scatter_add(np.ones(2, np.float32), np.ones(4, np.float32),
                                        lax.ge_p, (2,), (1,), "VALID"), TypeError,
     r"select_and_scatter_add: source f32\[2\] must have the windowed shape \(3,\)"),
])
def test_errors(fun, error, match):
    with pytest.raises(error, match=match):
        fun()
