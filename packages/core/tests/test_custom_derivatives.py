"""custom_jvp and custom_vjp under every transformation, with nondiff_argnums and errors."""

import numpy as np
import pytest
from laminax_core import (
    custom_jvp,
    custom_vjp,
    grad,
    jacfwd,
    jacrev,
    jvp,
    lax,
    make_jaxpr,
    value_and_grad,
    vmap,
)

X = np.array([0.5, 1.0, 2.0], np.float32)


@custom_jvp
def twice_sin(x):
    return lax.sin(x)


@twice_sin.defjvp
def _twice_sin_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return twice_sin(x), t * 2.0


def test_custom_jvp_value_is_the_function():
    np.testing.assert_allclose(twice_sin(X), np.sin(X), rtol=1e-6)


def test_custom_jvp_rule_is_used_by_jvp_grad_and_jacobians():
    assert jvp(twice_sin, (np.float32(1),), (np.float32(1),))[1] == 2.0
    assert grad(twice_sin)(np.float32(1)) == 2.0
    np.testing.assert_allclose(jacfwd(twice_sin)(X), 2 * np.eye(3))
    np.testing.assert_allclose(jacrev(twice_sin)(X), 2 * np.eye(3))


def test_custom_jvp_under_vmap_keeps_the_rule():
    np.testing.assert_allclose(vmap(twice_sin)(X), np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(vmap(grad(twice_sin))(X), [2, 2, 2])
    np.testing.assert_allclose(grad(lambda x: vmap(twice_sin)(x).sum())(X), [2, 2, 2])


def test_custom_jvp_prints_as_custom_jvp_call():
    text = str(make_jaxpr(twice_sin)(np.float32(1)))
    assert text == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = custom_jvp_call[\n"
        "      name=twice_sin\n"
        "      call_jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c in (d,) }\n"
        "      jvp=_twice_sin_jvp\n"
        "      symbolic_zeros=False\n"
        "    ] a\n"
        "  in (b,) }"
    )


def test_custom_jvp_defjvps_and_nondiff_argnums():
    @custom_jvp
    def f(x, y):
        return x * y

    f.defjvps(lambda t, ans, x, y: t * 10.0, None)
    assert grad(f, argnums=(0, 1))(np.float32(2), np.float32(3)) == (10.0, 0.0)

    def apply(fn, x):
        return fn(x)

    g = custom_jvp(apply, nondiff_argnums=(0,))
    g.defjvp(lambda fn, primals, tangents: (apply(fn, *primals), tangents[0] * 7.0))
    assert grad(lambda x: g(lax.sin, x))(np.float32(1)) == 7.0


def test_custom_jvp_pytree_arguments_and_closure_over_outer_tracer():
    @custom_jvp
    def norm(p):
        return (p["a"] * p["a"]).sum()

    @norm.defjvp
    def _norm_jvp(primals, tangents):
        (p,), (t,) = primals, tangents
        return norm(p), (2.0 * p["a"] * t["a"]).sum()

    np.testing.assert_allclose(grad(norm)({"a": X})["a"], 2 * X)

    def outer(s):
        @custom_jvp
        def scaled(x):
            return x * s

        scaled.defjvp(lambda p, t: (scaled(p[0]), t[0] * s))
        return grad(scaled)(np.float32(1.0))

    assert vmap(outer)(X).tolist() == X.tolist()


def test_custom_jvp_errors():
    @custom_jvp
    def f(x):
        return x

    with pytest.raises(AttributeError, match="No JVP defined"):
        f(np.float32(1))
    f.defjvp(lambda p, t: (p[0], (t[0], t[0])))
    with pytest.raises(TypeError, match="equal container"):
        jvp(f, (np.float32(1),), (np.float32(1),))


@custom_vjp
def clip_gradient(x):
    return x


def _clip_fwd(x):
    return x, None


def _clip_bwd(res, ct):
    return (lax.max(lax.min(ct, 1.0), -1.0),)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def test_custom_vjp_rule_is_used_by_grad():
    assert grad(lambda x: clip_gradient(x) * 5.0)(np.float32(1)) == 1.0
    assert value_and_grad(lambda x: clip_gradient(x) * -5.0)(np.float32(2)) == (-10.0, -1.0)


def test_custom_vjp_with_residuals_pytrees_and_none_cotangents():
    @custom_vjp
    def f(x, y):
        return lax.sin(x) * y

    def fwd(x, y):
        return f(x, y), (lax.cos(x), y)

    def bwd(res, ct):
        cos_x, y = res
        return (cos_x * y * ct, None)

    f.defvjp(fwd, bwd)
    gx, gy = grad(f, argnums=(0, 1))(np.float32(0.5), np.float32(3))
    np.testing.assert_allclose(gx, np.cos(0.5) * 3, rtol=1e-6)
    assert gy == 0.0


def test_custom_vjp_under_vmap_and_jacrev():
    np.testing.assert_allclose(vmap(grad(lambda x: clip_gradient(x) * 5.0))(X), [1, 1, 1])
    np.testing.assert_allclose(grad(lambda x: (vmap(clip_gradient)(x) * 5.0).sum())(X), [1, 1, 1])
    np.testing.assert_allclose(jacrev(lambda x: clip_gradient(x) * 0.5)(X), 0.5 * np.eye(3))


def test_custom_vjp_shared_argument_under_vmap_sums_cotangents():
    @custom_vjp
    def f(x, w):
        return x * w

    f.defvjp(lambda x, w: (f(x, w), (x, w)), lambda res, ct: (ct * res[1], ct * res[0]))
    g = grad(lambda w: vmap(f, in_axes=(0, None))(X, w).sum())(np.float32(2))
    np.testing.assert_allclose(g, X.sum(), rtol=1e-6)


def test_custom_vjp_nondiff_argnums():
    def scale(k, x):
        return x * k

    f = custom_vjp(scale, nondiff_argnums=(0,))
    f.defvjp(lambda k, x: (scale(k, x), None), lambda k, res, ct: (ct * (k + 1.0),))
    assert grad(lambda x: f(2.0, x))(np.float32(1)) == 3.0


def test_custom_vjp_forward_mode_and_missing_rule_errors():
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        jvp(clip_gradient, (np.float32(1),), (np.float32(1),))

    @custom_vjp
    def f(x):
        return x

    with pytest.raises(AttributeError, match="No VJP defined"):
        f(np.float32(1))
    f.defvjp(lambda x: (x, None), lambda res, ct: (ct, ct))
    with pytest.raises(TypeError, match="tuple of length equal to the number of primal"):
        grad(f)(np.float32(1))


def test_custom_vjp_prints_as_custom_vjp_call():
    text = str(make_jaxpr(clip_gradient)(np.float32(1)))
    assert "custom_vjp_call[\n      name=clip_gradient\n      bwd=_clip_bwd" in text


# ----- symbolic zeros -----------------------------------------------------------------------

from laminax_core._custom_derivatives import (  # noqa: E402
    CustomVJPPrimal,
    SymbolicZero,
    custom_vjp_primal_tree_values,
    zero_from_primal,
)


def _scaled_product(seen):
    @custom_jvp
    def f(x, y):
        return x * y

    def f_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        seen.append(tuple(isinstance(t, SymbolicZero) for t in tangents))
        out = f(x, y)
        if isinstance(tx, SymbolicZero):
            return out, x * ty * 3
        if isinstance(ty, SymbolicZero):
            return out, tx * y * 2
        return out, tx * y * 2 + x * ty * 3

    f.defjvp(f_jvp, symbolic_zeros=True)
    return f


def test_custom_jvp_symbolic_zeros_mark_the_undifferentiated_inputs():
    seen = []
    f = _scaled_product(seen)
    x, y = np.float32(2), np.float32(5)
    assert grad(f)(x, y) == 10 and grad(f, argnums=1)(x, y) == 6
    assert jvp(f, (x, y), (np.float32(1), np.float32(1)))[1] == 16
    assert seen == [(False, True), (True, False), (False, False)]


def test_custom_jvp_symbolic_zeros_carry_the_aval_and_survive_vmap():
    seen, avals = [], []
    f = _scaled_product(seen)
    probe = custom_jvp(lambda x, y: x * y)
    probe.defjvp(lambda p, t: (avals.append(t[1].aval) or probe(*p), t[0] * p[1]),
                 symbolic_zeros=True)
    grad(lambda x: probe(x, np.ones(2, np.float32)).sum())(np.ones(2, np.float32))
    assert avals[0].shape == (2,) and avals[0].dtype == np.float32
    xs = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(grad(lambda a: vmap(f, in_axes=(0, None))(a, 5.0).sum())(xs),
                               [10, 10, 10])
    np.testing.assert_allclose(vmap(grad(f), in_axes=(0, None))(xs, np.float32(5)), [10] * 3)
    assert set(seen) == {(False, True)}


def test_custom_jvp_rule_may_return_a_symbolic_zero():
    @custom_jvp
    def f(x):
        return lax.floor(x)

    f.defjvp(lambda p, t: (f(p[0]), SymbolicZero.from_primal_value(p[0])), symbolic_zeros=True)
    assert grad(lambda x: f(x) + x)(np.float32(1.5)) == 1.0
    assert "mul" not in str(make_jaxpr(grad(f))(np.float32(1.5)))


def _symbolic_vjp(log):
    @custom_vjp
    def h(x, y):
        return x * y, x + y

    def fwd(x, y):
        log.append(("fwd", x.perturbed, y.perturbed))
        xv, yv = custom_vjp_primal_tree_values((x, y))
        return h(xv, yv), (xv, yv)

    def bwd(res, cts):
        (xv, yv), (c1, c2) = res, cts
        log.append(("bwd", isinstance(c1, SymbolicZero), isinstance(c2, SymbolicZero)))
        if isinstance(c1, SymbolicZero):
            return c2, c2
        if isinstance(c2, SymbolicZero):
            return c1 * yv, SymbolicZero.from_primal_value(yv)
        return c1 * yv + c2, c1 * xv + c2

    h.defvjp(fwd, bwd, symbolic_zeros=True)
    return h


def test_custom_vjp_symbolic_zeros_in_fwd_and_bwd():
    log = []
    h = _symbolic_vjp(log)
    x, y = np.float32(2), np.float32(5)
    assert grad(lambda a, b: h(a, b)[0])(x, y) == 5
    assert grad(lambda a, b: h(a, b)[1], argnums=(0, 1))(x, y) == (1, 1)
    assert log == [("fwd", True, False), ("bwd", False, True), ("fwd", True, True),
                   ("bwd", True, False)]


def test_custom_vjp_symbolic_zeros_under_vmap():
    log = []
    h = _symbolic_vjp(log)
    xs = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(grad(lambda a: vmap(lambda u: h(u, 5.0)[1])(a).sum())(xs), [1] * 3)
    np.testing.assert_allclose(grad(lambda a: vmap(lambda u: h(u, 5.0)[0])(a).sum())(xs), [5] * 3)
    gx, gy = vmap(grad(lambda a, b: h(a, b)[1], argnums=(0, 1)), in_axes=(0, None))(xs, 5.0)
    np.testing.assert_allclose(gx, [1] * 3)
    np.testing.assert_allclose(gy, [1] * 3)


def test_symbolic_zero_helpers():
    z = SymbolicZero.from_primal_value(np.ones((2, 3), np.float32))
    assert (z.shape, z.dtype, z.ndim, repr(z)) == ((2, 3), np.float32, 2, "SymbolicZero")
    assert isinstance(zero_from_primal({"a": np.int32(1)}, symbolic_zeros=True)["a"], SymbolicZero)
    np.testing.assert_array_equal(zero_from_primal([np.ones(2, np.float32)])[0], [0, 0])
    assert custom_vjp_primal_tree_values([CustomVJPPrimal(1.0, True)]) == [1.0]
    with pytest.raises(TypeError, match="CustomVJPPrimal leaves"):
        custom_vjp_primal_tree_values([1.0])


def test_custom_vjp_bwd_symbolic_zero_of_the_wrong_type_raises():
    @custom_vjp
    def f(x):
        return x * 2

    f.defvjp(lambda x: (f(x), None), lambda r, g: (SymbolicZero.from_primal_value(np.ones(2)),))
    with pytest.raises(ValueError, match=r"produced a SymbolicZero of type f32\[2\]"):
        grad(f)(np.float32(1))
