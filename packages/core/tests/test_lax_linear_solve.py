"""lax.custom_linear_solve and lax.custom_root: values, implicit derivatives (jvp, grad in the
operator and the right-hand side, through iterative solvers that could not be differentiated
directly), vmap, pytrees, aux data, and errors."""

import numpy as np
import pytest
from laminax_core import grad, jvp, lax, make_jaxpr, vmap
from laminax_core import numpy as jnp

R = np.random.RandomState(0)
A = (R.standard_normal((3, 3)) + 4 * np.eye(3)).astype(np.float32)
B = R.standard_normal(3).astype(np.float32)


def _jacobi(matvec, b, diag):
    # an iterative solver: reverse mode cannot differentiate through its while_loop
    def body(state):
        i, x = state
        return i + 1, x + (b - matvec(x)) / diag

    return lax.while_loop(lambda s: s[0] < 60, body, (0, jnp.zeros_like(b)))[1]


def _solve_with(a, b):
    diag = jnp.diagonal(a)
    return lax.custom_linear_solve(
        lambda x: a @ x, b,
        solve=lambda mv, v: _jacobi(mv, v, diag),
        transpose_solve=lambda vm, v: _jacobi(vm, v, diag))


def test_value_is_the_solvers():
    np.testing.assert_allclose(_solve_with(A, B), np.linalg.solve(A, B), rtol=1e-4, atol=1e-5)


def test_gradients_are_implicit():
    ga, gb = grad(lambda a, b: _solve_with(a, b).sum(), argnums=(0, 1))(A, B)
    ga_ref, gb_ref = grad(lambda a, b: jnp.linalg.solve(a, b).sum(), argnums=(0, 1))(A, B)
    np.testing.assert_allclose(ga, ga_ref, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(gb, gb_ref, rtol=1e-3, atol=1e-4)


def test_jvp_in_the_operator():
    t = R.standard_normal((3, 3)).astype(np.float32)
    _, out = jvp(lambda a: _solve_with(a, B), (A,), (t,))
    _, ref = jvp(lambda a: jnp.linalg.solve(a, B), (A,), (t,))
    np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-4)


def test_vmap_over_b_and_over_the_operator():
    bs = R.standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(vmap(lambda b: _solve_with(A, b))(bs),
                               np.linalg.solve(A, bs.T).T, rtol=1e-4, atol=1e-5)
    a_batch = np.stack([A, A + np.eye(3, dtype=np.float32)])
    expected = np.stack([np.linalg.solve(a, B) for a in a_batch])
    np.testing.assert_allclose(vmap(lambda a: _solve_with(a, B))(a_batch), expected,
                               rtol=1e-4, atol=1e-5)


def test_symmetric_pytree_and_aux():
    spd = A @ A.T
    b = {"u": B[:2], "w": B[2:]}

    def matvec(x):
        flat = jnp.concatenate([x["u"], x["w"]])
        y = spd @ flat
        return {"u": y[:2], "w": y[2:]}

    def solve(mv, v):
        x = jnp.linalg.solve(spd, jnp.concatenate([v["u"], v["w"]]))
        return {"u": x[:2], "w": x[2:]}, jnp.sum(x)

    x, aux = lax.custom_linear_solve(matvec, b, lambda mv, v: solve(mv, v), symmetric=True,
                                     has_aux=True)
    expected = np.linalg.solve(spd, B)
    np.testing.assert_allclose(np.concatenate([x["u"], x["w"]]), expected, rtol=1e-4)
    np.testing.assert_allclose(aux, expected.sum(), rtol=1e-4)


def test_one_equation_with_the_operator_as_operands():
    jaxpr = make_jaxpr(_solve_with)(A, B)
    names = [e.primitive.name for e in jaxpr.jaxpr.eqns]
    assert names.count("custom_linear_solve") == 1


def test_reverse_mode_needs_transpose_solve():
    def solve(a, b):
        return lax.custom_linear_solve(lambda x: a @ x, b, lambda mv, v: jnp.linalg.solve(a, v))

    with pytest.raises(TypeError, match="transpose_solve is required"):
        grad(lambda b: solve(A, b).sum())(B)


def test_solve_output_must_match_b():
    with pytest.raises(ValueError, match="output shapes and dtypes must match"):
        lax.custom_linear_solve(lambda x: x, B, lambda mv, v: v[:2])


# ----- custom_root --------------------------------------------------------------------------


def _newton(f, x):
    return lax.fori_loop(0, 30, lambda i, x: x - f(x) / (2 * x), x)


def _sqrt(a):
    return lax.custom_root(lambda x: x * x - a, np.float32(1.0), _newton,
                           lambda g, y: y / g(np.float32(1.0)))


def test_root_value_and_implicit_derivative():
    np.testing.assert_allclose(_sqrt(np.float32(2.0)), np.sqrt(2.0), rtol=1e-6)
    np.testing.assert_allclose(grad(_sqrt)(np.float32(2.0)), 0.5 / np.sqrt(2.0), rtol=1e-5)
    _, t = jvp(_sqrt, (np.float32(4.0),), (np.float32(1.0),))
    np.testing.assert_allclose(t, 0.25, rtol=1e-5)


def test_root_under_vmap():
    a = np.array([4.0, 9.0, 16.0], np.float32)
    np.testing.assert_allclose(vmap(_sqrt)(a), [2, 3, 4], rtol=1e-6)
    np.testing.assert_allclose(vmap(grad(_sqrt))(a), [0.25, 1 / 6, 0.125], rtol=1e-5)


def test_root_with_aux_and_wrong_structure():
    root, aux = lax.custom_root(lambda x: x - 3.0, np.float32(0.0),
                                lambda f, x: (x - f(x), np.int32(7)), lambda g, y: y,
                                has_aux=True)
    assert float(root) == 3.0 and int(aux) == 7
    with pytest.raises(TypeError, match="f must return the structure of initial_guess"):
        lax.custom_root(lambda x: (x, x), np.float32(0.0), lambda f, x: x, lambda g, y: y)


def test_a_tangent_solve_that_misfits_fails_without_differentiating():
    p = np.full((2, 3), 2.0, np.float32)
    with pytest.raises(ValueError, match="different primal and tangent shapes"):
        lax.custom_root(lambda x: x * x - p, jnp.ones_like(p), lambda f, x: x,
                        lambda g, y: y / g(1.0))
