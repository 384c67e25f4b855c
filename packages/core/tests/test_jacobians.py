"""jacfwd, jacrev and hessian: agreement with each other and closed forms, pytrees, argnums."""

import numpy as np
import pytest
from laminax_core import hessian, jacfwd, jacrev, lax

X = np.array([0.5, 1.0, 2.0], np.float32)


def _f(x):
    return lax.sin(x) * x[::-1] if False else lax.sin(x) * lax.exp(x)


@pytest.mark.parametrize("jac", [jacfwd, jacrev])
def test_jacobian_of_elementwise_is_diagonal(jac):
    expected = np.diag(np.cos(X) * np.exp(X) + np.sin(X) * np.exp(X))
    np.testing.assert_allclose(jac(_f)(X), expected, rtol=1e-5)


@pytest.mark.parametrize("jac", [jacfwd, jacrev])
def test_jacobian_of_matvec_is_the_matrix(jac):
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = jac(lambda x: lax.dot_general(w, x, (((1,), (0,)), ((), ()))))(X)
    np.testing.assert_allclose(out, w)


@pytest.mark.parametrize("jac", [jacfwd, jacrev])
def test_jacobian_pytrees_and_argnums(jac):
    def fun(p, s):
        return {"y": p["a"] * s, "z": (p["b"] * p["b"]).sum()}

    params = {"a": X, "b": np.ones(2, np.float32)}
    out = jac(fun)(params, np.float32(2))
    assert out["y"]["a"].shape == (3, 3) and out["y"]["b"].shape == (3, 2)
    assert out["z"]["a"].shape == (3,) and out["z"]["b"].shape == (2,)
    np.testing.assert_allclose(out["y"]["a"], 2 * np.eye(3))
    np.testing.assert_allclose(out["z"]["b"], [2, 2])
    ja, js = jac(fun, argnums=(0, 1))(params, np.float32(2))["y"]
    np.testing.assert_allclose(js, X)


def test_jacfwd_and_jacrev_agree_on_matrix_input():
    x = np.random.RandomState(0).standard_normal((2, 3)).astype(np.float32)
    fun = lambda m: lax.tanh(m @ m.T)  # noqa: E731
    np.testing.assert_allclose(jacfwd(fun)(x), jacrev(fun)(x), rtol=1e-5, atol=1e-6)
    assert jacfwd(fun)(x).shape == (2, 2, 2, 3)


def test_hessian_of_cubic():
    np.testing.assert_allclose(hessian(lambda x: (x * x * x).sum())(X), np.diag(6 * X))


def test_hessian_of_quadratic_form():
    a = np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)
    fun = lambda x: (x * (a @ x)).sum()  # noqa: E731
    np.testing.assert_allclose(hessian(fun)(np.ones(2, np.float32)), 2 * a, rtol=1e-6)


def test_jacobian_has_aux_and_input_checks():
    jac, aux = jacrev(lambda x: (x * 2.0, "aux"), has_aux=True)(X)
    assert aux == "aux"
    np.testing.assert_allclose(jac, 2 * np.eye(3))
    with pytest.raises(TypeError, match="jacfwd requires real- or complex-valued inputs"):
        jacfwd(lambda x: x)(np.arange(3))
