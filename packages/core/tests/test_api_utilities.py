"""`ravel_pytree`, `test_util`, `linear_transpose` and the tracing scopes on core's reference
interpreter (NumPy is the oracle)."""

import numpy as np
import pytest
from laminax_core import (
    ensure_compile_time_eval,
    errors,
    grad,
    lax,
    linear_transpose,
    make_jaxpr,
    named_call,
    named_scope,
    typeof,
    vjp,
)
from laminax_core.flatten_util import ravel_pytree
from laminax_core.test_util import check_grads, check_jvp, check_vjp

R = np.random.RandomState(0)


@pytest.mark.parametrize("tree", [
    {"a": R.randn(2, 3).astype(np.float32), "b": [R.randn(4).astype(np.float32)]},
    (np.arange(3, dtype=np.int32), np.float32(2.5)),
    [np.zeros((0, 2), np.float32), np.ones(2, np.float16)],
    (np.array([True, False]), np.arange(2, dtype=np.int8)),
])
def test_ravel_pytree_round_trips_against_numpy(tree):
    flat, unravel = ravel_pytree(tree)
    leaves = [np.asarray(x) for x in (tree.values() if isinstance(tree, dict) else tree)]
    leaves = [x for leaf in leaves for x in (leaf if isinstance(leaf, list) else [leaf])]
    expected = np.concatenate([x.ravel() for x in leaves]).astype(np.result_type(*leaves))
    np.testing.assert_array_equal(flat, expected)
    back = unravel(flat)
    for got, leaf in zip(back.values() if isinstance(back, dict) else back,
                         tree.values() if isinstance(tree, dict) else tree, strict=True):
        got, leaf = (got[0], leaf[0]) if isinstance(leaf, list) else (got, leaf)
        assert np.asarray(got).dtype == np.asarray(leaf).dtype
        np.testing.assert_array_equal(got, leaf)


def test_unravel_rejects_wrong_length_and_dtype():
    flat, unravel = ravel_pytree((np.ones(2, np.float32), np.arange(3, dtype=np.int32)))
    with pytest.raises(TypeError, match="expected dtype float32"):
        unravel(np.ones(5, np.int32))
    with pytest.raises(ValueError, match="length 5"):
        unravel(np.ones(4, np.float32))


def test_check_grads_passes_and_fails():
    check_grads(lambda x, y: lax.sin(x) * y, (np.float32(0.3), np.ones(3, np.float32)), 2)
    with pytest.raises(AssertionError):
        check_grads(lambda x: lax.stop_gradient(x) * x, (np.float32(0.3),), 1, modes=("rev",))
    with pytest.raises(ValueError, match="unknown modes"):
        check_grads(lax.sin, (np.float32(0.3),), 1, modes=("sideways",))
    check_jvp(lax.exp, lambda a, t: (lax.exp(a[0]), lax.exp(a[0]) * t[0]), (np.float32(0.2),))
    check_vjp(lax.exp, lambda x: vjp(lax.exp, x), (np.float32(0.2),))


def test_linear_transpose_is_the_adjoint():
    a = R.randn(3, 4).astype(np.float32)
    x, y = R.randn(4).astype(np.float32), R.randn(3).astype(np.float32)
    (ct,) = linear_transpose(lambda v: lax.dot(a, v), x)(y)
    np.testing.assert_allclose(ct, a.T @ y, rtol=1e-5)
    with pytest.raises(TypeError, match="cotangent type"):
        linear_transpose(lambda v: lax.dot(a, v), x)(x)
    with pytest.raises(TypeError, match="only supports"):
        linear_transpose(lambda v: lax.convert_element_type(v, np.float32), np.int32(1))


def test_named_scopes_are_recorded_on_equations():
    def f(x):
        with named_scope("a"), named_scope("b"):
            y = lax.sin(x)
        return named_call(lax.cos, name="c")(y)

    eqns = make_jaxpr(f)(np.float32(1)).jaxpr.eqns
    assert [e.name_stack for e in eqns] == ["a/b", "c"]
    with pytest.raises(TypeError, match="must be a string"):
        with named_scope(3):
            pass


def test_compile_time_eval_computes_constants_while_tracing():
    def f(x):
        with ensure_compile_time_eval():
            n = int(lax.add(np.int32(2), np.int32(3)))
            y = lax.mul(x, np.float32(n))
        return y

    jaxpr = make_jaxpr(f)(np.float32(1))
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["mul"]
    assert float(grad(f)(np.float32(1))) == 5.0
    with pytest.raises(errors.ConcretizationTypeError):
        make_jaxpr(lambda x: int(lax.add(x, np.int32(1))))(np.int32(1))


def test_typeof_gives_avals():
    assert typeof(1.0).weak_type and typeof(np.ones((2, 3), np.int8)).shape == (2, 3)
