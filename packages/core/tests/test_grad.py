"""vjp, grad, value_and_grad: values, argnums, has_aux, holomorphic, allow_int, errors."""

import numpy as np
import pytest
from laminax_core import (
    dtypes,
    grad,
    jvp,
    lax,
    make_jaxpr,
    stop_gradient,
    value_and_grad,
    vjp,
    vmap,
)
from laminax_core.testing import check_grads

X = np.array([0.5, 1.0, 2.0], np.float32)


def test_grad_of_sum_of_sin():
    np.testing.assert_allclose(grad(lambda x: lax.sin(x).sum())(X), np.cos(X), rtol=1e-6)


def test_vjp_returns_one_cotangent_per_primal():
    y, pullback = vjp(lambda a, b: a * b, X, np.float32(2))
    ct_a, ct_b = pullback(np.ones_like(X))
    np.testing.assert_allclose(ct_a, np.full(3, 2.0))
    np.testing.assert_allclose(ct_b, X.sum())


def test_vjp_has_aux_and_structure_errors():
    _, pullback, aux = vjp(lambda x: (x * 2.0, {"a": 1}), X, has_aux=True)
    assert aux == {"a": 1}
    with pytest.raises(TypeError, match="does not match structure of primal output"):
        pullback((X, X))
    with pytest.raises(ValueError, match="cotangent of shape"):
        pullback(np.ones(2, np.float32))


def test_argnums_int_and_tuple():
    fun = lambda a, b, c: a * b + c  # noqa: E731
    assert grad(fun, argnums=1)(2.0, 3.0, 4.0) == 2.0
    ga, gc = grad(fun, argnums=(0, 2))(2.0, 3.0, 4.0)
    assert (ga, gc) == (3.0, 1.0)
    assert grad(fun, argnums=-1)(2.0, 3.0, 4.0) == 1.0


def test_argnums_errors():
    with pytest.raises(TypeError, match=r"argnums=\(2,\) requires at least 3 positional"):
        grad(lambda x: x, argnums=(2,))(1.0)
    with pytest.raises(TypeError, match="must be an int or a sequence of ints"):
        grad(lambda x: x, argnums="0")(1.0)


def test_grad_output_checks():
    with pytest.raises(TypeError, match="Gradient only defined for scalar-output functions"):
        grad(lambda x: x)(X)
    with pytest.raises(TypeError, match="grad requires real-valued outputs"):
        grad(lambda x: lax.convert_element_type(x, np.int32))(1.0)
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        grad(lambda x: x)(np.int32(1))


def test_allow_int_gives_float0_gradient():
    g = grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(np.float32(2), np.int32(3))
    assert g[0] == 3.0 and g[1].dtype == dtypes.float0


def test_has_aux_and_value_and_grad():
    g, aux = grad(lambda x: (x * x, x + 1), has_aux=True)(np.float32(3))
    assert (g, aux) == (6.0, 4.0)
    (v, aux), g = value_and_grad(lambda x: (x * x, "a"), has_aux=True)(np.float32(3))
    assert (v, aux, g) == (9.0, "a", 6.0)


def test_holomorphic_grad():
    z = np.complex64(1 + 2j)
    np.testing.assert_allclose(grad(lambda z: z * z, holomorphic=True)(z), 2 * z)
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with complex dtype"):
        grad(lambda z: z * z, holomorphic=True)(np.float32(1))


def test_grad_through_python_control_flow():
    def relu_ish(x):
        return x * x if x > 1 else -x

    assert grad(relu_ish)(np.float32(3)) == 6.0
    assert grad(relu_ish)(np.float32(0.5)) == -1.0


def test_stop_gradient_blocks_gradients():
    assert grad(lambda x: x * stop_gradient(x))(np.float32(3)) == 3.0


def test_unused_inputs_cost_nothing():
    closed = make_jaxpr(
        grad(lambda x, y: lax.sin(x) + y * 0.0 if False else lax.sin(x), argnums=(0, 1))
    )(np.float32(1), np.float32(2))
    assert [e.primitive.name for e in closed.eqns] == ["sin", "cos", "mul"]


def test_grad_jaxpr_matches_jax():
    text = str(make_jaxpr(grad(lambda x: lax.sin(x).sum()))(X))
    assert text == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = sin a\n"
        "    c:f32[3] = cos a\n"
        "    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n"
        "    d:f32[3] = broadcast_in_dim 1.0:f32[]\n"
        "    e:f32[3] = mul d c\n"
        "  in (e,) }"
    )


def test_grad_of_grad():
    np.testing.assert_allclose(grad(grad(lax.sin))(np.float32(0.5)), -np.sin(0.5), rtol=1e-6)
    np.testing.assert_allclose(grad(grad(grad(lambda x: x**4)))(np.float32(2)), 48.0)


def test_jvp_of_grad_and_grad_of_jvp():
    f = lambda x: lax.sin(x) * x  # noqa: E731
    _, t = jvp(grad(f), (np.float32(0.5),), (np.float32(1),))
    g = grad(lambda x: jvp(f, (x,), (np.float32(1),))[1])(np.float32(0.5))
    second = 2 * np.cos(0.5) - 0.5 * np.sin(0.5)
    np.testing.assert_allclose([t, g], [second, second], rtol=1e-5)


def test_grad_of_vmap_and_vmap_of_grad():
    f = lambda x: (lax.sin(x) * x).sum()  # noqa: E731
    per_example = vmap(grad(lambda x: lax.sin(x) * x))(X)
    np.testing.assert_allclose(per_example, grad(f)(X), rtol=1e-6)
    np.testing.assert_allclose(
        grad(lambda x: vmap(lambda v: lax.sin(v) * v)(x).sum())(X), grad(f)(X), rtol=1e-6
    )


@pytest.mark.parametrize(
    "fun",
    [
        lambda x, w: lax.tanh(lax.dot_general(w, x, (((1,), (0,)), ((), ())))).sum(),
        lambda x, w: (lax.logistic(w * x[None]) ** 2).sum(),
        lambda x, w: lax.reduce_max(lax.dot_general(w, x, (((1,), (0,)), ((), ()))), (0,)),
    ],
)
def test_mlp_like_functions_match_finite_differences(fun):
    w = np.random.RandomState(0).standard_normal((2, 3)).astype(np.float32)
    check_grads(fun, (X, w), order=2)
