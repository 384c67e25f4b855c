"""jvp and linearize: values, symbolic zeros, float0 tangents, nesting, errors."""

import numpy as np
import pytest
from laminax_core import dtypes, jvp, lax, linearize, make_jaxpr
from laminax_core.testing import check_grads

X = np.array([0.5, 1.0, 2.0], np.float32)


def test_jvp_of_sin_is_cos():
    y, t = jvp(lax.sin, (X,), (np.ones_like(X),))
    np.testing.assert_allclose(y, np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(t, np.cos(X), rtol=1e-6)


def test_jvp_of_pytree_function():
    def fun(p):
        return {"out": p["w"] * p["b"], "w": p["w"]}

    primals = ({"w": X, "b": np.float32(2)},)
    tangents = ({"w": np.ones_like(X), "b": np.float32(0)},)
    out, tan = jvp(fun, primals, tangents)
    np.testing.assert_allclose(tan["out"], np.full(3, 2.0))
    np.testing.assert_allclose(tan["w"], np.ones(3))


def test_jvp_has_aux():
    y, t, aux = jvp(lambda x: (x * x, "aux"), (np.float32(3),), (np.float32(1),), has_aux=True)
    assert (y, t, aux) == (9.0, 6.0, "aux")


def test_integer_inputs_take_float0_tangents():
    y, t = jvp(lambda x, n: x * n, (np.float32(2), 3), (np.float32(1), np.zeros((), dtypes.float0)))
    assert y == 6.0 and t == 3.0


def test_integer_outputs_get_float0_tangents():
    _, t = jvp(lambda x: lax.convert_element_type(x, np.int32), (X,), (X,))
    assert t.dtype == dtypes.float0 and t.shape == (3,)


def test_jvp_input_errors():
    with pytest.raises(TypeError, match="must be tuples or lists"):
        jvp(lax.sin, X, X)
    with pytest.raises(TypeError, match="dtypes must be equal"):
        jvp(lax.sin, (X,), (X.astype(np.float16),))
    with pytest.raises(TypeError, match="tangent dtype must be float0"):
        jvp(lambda n: n, (np.int32(1),), (np.float32(1),))
    with pytest.raises(ValueError, match="different primal and tangent shapes"):
        jvp(lax.sin, (X,), (np.ones(2, np.float32),))
    with pytest.raises(TypeError, match="same tree structure"):
        jvp(lambda a, b: a, (X, X), (X,))


def test_nested_jvp_gives_second_derivative():
    def dsin(x):
        return jvp(lax.sin, (x,), (np.ones_like(x),))[1]

    _, second = jvp(dsin, (X,), (np.ones_like(X),))
    np.testing.assert_allclose(second, -np.sin(X), rtol=1e-5)


def test_nested_jvp_keeps_perturbations_apart():
    # d/dx [x * d/dy (x + y)] = d/dx [x] = 1 (perturbation confusion would give 2)
    def inner(x):
        return jvp(lambda y: x + y, (np.float32(1),), (np.float32(1),))[1]

    _, t = jvp(lambda x: x * inner(x), (np.float32(3),), (np.float32(1),))
    assert t == 1.0


def test_jvp_jaxpr_matches_jax_structure():
    closed = make_jaxpr(lambda x: jvp(lax.sin, (x,), (x,)))(X)
    assert [e.primitive.name for e in closed.eqns] == ["sin", "cos", "mul"]


def test_symbolic_zeros_emit_no_tangent_equations():
    # y is closed over, so its tangent is a symbolic zero: no tangent work for exp(y)
    closed = make_jaxpr(lambda x, y: jvp(lambda a: lax.sin(a) * lax.exp(y), (x,), (x,))[1])(X, X)
    names = [e.primitive.name for e in closed.eqns]
    assert names == ["sin", "cos", "mul", "exp", "mul", "mul"]
    assert "add_any" not in names


def test_linearize_matches_jvp_and_stages_only_linear_work():
    y, f_jvp = linearize(lambda x: lax.sin(x) * x, X)
    np.testing.assert_allclose(y, np.sin(X) * X, rtol=1e-6)
    t = np.array([1.0, 2.0, 3.0], np.float32)
    expected = jvp(lambda x: lax.sin(x) * x, (X,), (t,))[1]
    np.testing.assert_allclose(f_jvp(t), expected, rtol=1e-6)


def test_linearize_with_python_control_flow_on_concrete_values():
    def fun(x):
        return lax.sin(x) if x.sum() > 0 else lax.cos(x)

    _, f_jvp = linearize(fun, X)
    np.testing.assert_allclose(f_jvp(np.ones_like(X)), np.cos(X), rtol=1e-6)


def test_linearize_has_aux_and_checks_tangents():
    y, f_jvp, aux = linearize(lambda x: (x * 2.0, 7), X, has_aux=True)
    assert aux == 7
    with pytest.raises(TypeError, match="dtypes must be equal"):
        f_jvp(X.astype(np.int32))


@pytest.mark.parametrize(
    "fun",
    [
        lambda x: lax.tanh(x) * lax.exp(-x * x),
        lambda x: lax.logistic(x).sum() * x,
        lambda x: lax.dot_general(x[:, None], x[None, :], (((1,), (0,)), ((), ()))).sum(0),
        lambda x: lax.reduce_max(x * x, (0,)) + lax.sqrt(x + 3.0),
        lambda x: lax.concatenate([x, lax.sin(x)], 0)[1:5],
    ],
)
def test_compositions_match_finite_differences(fun):
    check_grads(fun, (X,), order=2)
