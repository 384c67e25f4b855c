"""cond, switch, while_loop, fori_loop, scan and map: values, every transformation, errors."""

import numpy as np
import pytest
from laminax_core import (
    Effect,
    Primitive,
    eval_jaxpr,
    grad,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    lax,
    linearize,
    make_jaxpr,
    vjp,
    vmap,
)
from laminax_core.lax import cond, fori_loop, map, scan, switch, while_loop
from laminax_core.testing import check_grads

X = np.array([0.5, -1.0, 2.0], np.float32)


def _branchy(x):
    return cond(x.sum() > 0, lambda v: lax.sin(v) * v, lambda v: lax.cos(v), x)


def test_cond_picks_the_branch():
    np.testing.assert_allclose(_branchy(X), np.sin(X) * X, rtol=1e-6)
    np.testing.assert_allclose(_branchy(-X), np.cos(-X), rtol=1e-6)


def test_cond_prints_like_jax():
    text = str(make_jaxpr(lambda x: cond(x > 0, lax.sin, lax.cos, x))(np.float32(1)))
    assert text == (
        "{ lambda ; a:f32[]. let\n"
        "    b:bool[] = gt a 0.0:f32[]\n"
        "    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b\n"
        "    d:f32[] = cond[\n"
        "      branches=(\n"
        "        { lambda ; e:f32[]. let f:f32[] = cos e in (f,) }\n"
        "        { lambda ; g:f32[]. let h:f32[] = sin g in (h,) }\n"
        "      )\n"
        "    ] c a\n"
        "  in (d,) }"
    )


@pytest.mark.parametrize("x", [X, -X])
def test_cond_derivatives(x):
    check_grads(_branchy, (x,), order=2)
    np.testing.assert_allclose(jacfwd(_branchy)(x), jacrev(_branchy)(x), rtol=1e-5)


def test_cond_under_vmap_with_batched_and_unbatched_predicate():
    xs = np.stack([X, -X])
    np.testing.assert_allclose(vmap(_branchy)(xs), np.stack([_branchy(X), _branchy(-X)]), rtol=1e-6)
    out = vmap(lambda x: cond(True, lambda v: v * 2.0, lambda v: v, x))(xs)
    np.testing.assert_allclose(out, xs * 2)
    np.testing.assert_allclose(
        vmap(grad(lambda x: _branchy(x).sum()))(xs),
        np.stack([grad(lambda x: _branchy(x).sum())(x) for x in xs]),
        rtol=1e-6,
    )


def test_cond_closes_over_outer_tracers_and_pytrees():
    def fun(x, y):
        return cond(x > 0, lambda p: {"a": p["a"] * y}, lambda p: {"a": p["a"] + y}, {"a": x})

    assert grad(lambda x, y: fun(x, y)["a"], argnums=1)(np.float32(2), np.float32(3)) == 2.0
    assert grad(lambda x, y: fun(x, y)["a"], argnums=1)(np.float32(-2), np.float32(3)) == 1.0


def test_a_value_several_branches_close_over_is_one_operand():
    def fun(x, y):
        return cond(x > 0, lambda v: v * y, lambda v: v + y, x)

    closed = make_jaxpr(fun)(np.float32(1), np.float32(2))
    assert len(closed.eqns[-1].invars) == 3  # index, y, x
    assert grad(fun, argnums=1)(np.float32(1), np.float32(2)) == 1.0
    assert grad(fun, argnums=1)(np.float32(-1), np.float32(2)) == 1.0


def test_an_output_every_branch_returns_unchanged_skips_the_cond():
    def fun(x):
        return cond(x > 0, lambda v: (lax.sin(v), v), lambda v: (v * 2.0, v), x)

    closed = make_jaxpr(fun)(np.float32(1))
    assert len(closed.eqns[-1].outvars) == 1
    assert closed.jaxpr.outvars[1] is closed.jaxpr.invars[0]
    np.testing.assert_allclose(fun(np.float32(-1)), (-2.0, -1.0))


def test_cond_errors():
    with pytest.raises(TypeError, match="Pred must be a scalar"):
        cond(X > 0, lambda v: v, lambda v: v, X)
    with pytest.raises(TypeError, match="must have identical types"):
        cond(True, lambda v: v, lambda v: v.astype(np.int32), X)
    with pytest.raises(TypeError, match="same type structure"):
        cond(True, lambda v: (v, v), lambda v: v, X)


def test_switch_clamps_and_differentiates():
    branches = [lambda v: v, lambda v: v * 2.0, lambda v: v * 3.0]
    assert switch(1, branches, np.float32(1)) == 2.0
    assert switch(7, branches, np.float32(1)) == 3.0
    assert switch(-3, branches, np.float32(1)) == 1.0
    assert grad(lambda x, i: switch(i, branches, x))(np.float32(1), 2) == 3.0
    out = vmap(lambda i: switch(i, branches, np.float32(1)))(np.array([0, 1, 2], np.int32))
    np.testing.assert_array_equal(out, [1, 2, 3])
    with pytest.raises(ValueError, match="Empty branch sequence"):
        switch(0, [], X)


def _names(jaxpr):
    return [e.primitive.name for e in jaxpr.eqns]


def test_grad_of_switch_shares_residual_slots_between_branches():
    branches = [lax.sin, lambda v: lax.cos(v) * v, lax.exp]
    closed = make_jaxpr(grad(lambda x, i: switch(i, branches, x)))(np.float32(0.5), 2)
    # a weak index is converted, clamped; then the known cond and the staged (transposed) one
    assert _names(closed) == ["convert_element_type", "clamp", "cond", "cond"]
    known = closed.eqns[2]
    # sin's cos(x), cos's (x, sin(x), cos(x)) and exp's exp(x): three f32[] slots in all
    assert len(known.outvars) == 1 + 3
    assert [_names(b.jaxpr).count("empty2") for b in known.params["branches"]] == [3, 3, 3]
    for i in range(3):
        expected = grad(branches[i])(np.float32(0.5))
        np.testing.assert_allclose(
            grad(lambda x, i: switch(i, branches, x))(np.float32(0.5), i), expected, rtol=1e-6
        )


def test_cond_residual_slots_of_other_shapes_are_filled_with_broadcast_empties():
    fun = lambda x, p: cond(p, lambda v: lax.sin(v).sum(), lambda v: (v * 2.0).sum(), x)  # noqa: E731
    closed = make_jaxpr(grad(fun))(X, True)
    known = next(e for e in closed.eqns if e.primitive.name == "cond")
    assert [v.aval.shape for v in known.outvars] == [(), (3,)]
    false_branch = known.params["branches"][0].jaxpr  # saves nothing: fills the f32[3] slot
    assert _names(false_branch)[-2:] == ["empty2", "broadcast_in_dim"]
    np.testing.assert_allclose(grad(fun)(X, True), np.cos(X), rtol=1e-6)
    np.testing.assert_allclose(grad(fun)(X, False), np.full(3, 2.0), rtol=1e-6)


def test_vmap_of_cond_with_batched_predicate_selects_like_jax():
    closed = make_jaxpr(vmap(lambda x: cond(x > 0, lax.sin, lax.cos, x)))(X)
    per_branch = ["eq", "stop_gradient", "select_n"]
    assert _names(closed) == [
        "gt", "convert_element_type", *per_branch, "cos", *per_branch, "sin", "select_n",
    ]  # fmt: skip
    # the select against stop_gradient keeps the untaken branch out of the gradient
    sq_log = lambda u: lax.log(u * u)  # noqa: E731
    g = grad(lambda x: vmap(lambda v: cond(v > 0, sq_log, lambda u: u, v))(x).sum())(X)
    np.testing.assert_allclose(g, np.where(X > 0, 2 / X, 1.0), rtol=1e-6)


def _count_doublings(x):
    return while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * x), (0, np.float32(1)))[1]


def test_while_loop_values_and_forward_mode():
    assert _count_doublings(np.float32(2)) == 32.0
    assert jvp(_count_doublings, (np.float32(2),), (np.float32(1),))[1] == 80.0
    assert linearize(_count_doublings, np.float32(2))[1](np.float32(1)) == 80.0
    assert jacfwd(_count_doublings)(np.float32(2)) == 80.0


def test_while_loop_reverse_mode_raises_like_jax():
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        grad(_count_doublings)(np.float32(2))


def test_while_loop_under_vmap_with_batched_predicate():
    def power(n, x):
        return while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * x), (0, np.float32(1)))[1]

    out = vmap(power)(np.array([2, 3, 0], np.int32), np.array([3.0, 2.0, 5.0], np.float32))
    np.testing.assert_array_equal(out, [9, 8, 1])
    np.testing.assert_array_equal(vmap(_count_doublings)(np.array([1, 2], np.float32)), [1, 32])
    # as in JAX, the predicate stays batched in one while equation: no masking in the body
    closed = make_jaxpr(vmap(power))(np.array([2, 3, 0], np.int32), np.ones(3, np.float32))
    (eqn,) = closed.eqns[-1:]
    assert eqn.params["cond_jaxpr"].out_avals[0].shape == (3,)
    assert "select_n" not in _names(eqn.params["body_jaxpr"].jaxpr)


def test_while_loop_errors():
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
        while_loop(lambda c: c, lambda c: c, np.float32(1))
    with pytest.raises(TypeError, match="body_fun output and input must have identical types"):
        while_loop(lambda c: c < 1, lambda c: c.astype(np.int32), np.float32(1))


def test_fori_loop_static_bounds_is_a_reverse_differentiable_scan():
    fun = lambda x: fori_loop(0, 3, lambda i, c: c * x + i, np.float32(1))  # noqa: E731
    assert fun(np.float32(2)) == 12.0
    assert grad(fun)(np.float32(2)) == 13.0
    assert [e.primitive.name for e in make_jaxpr(fun)(np.float32(2)).eqns] == ["scan"]


def test_fori_loop_traced_bounds_is_a_while_loop():
    fun = lambda n: fori_loop(0, n, lambda i, c: c * 2.0, np.float32(1))  # noqa: E731
    np.testing.assert_array_equal(vmap(fun)(np.array([1, 3], np.int32)), [2, 8])
    assert [e.primitive.name for e in make_jaxpr(fun)(np.int32(3)).eqns] == ["while"]


def _rnn(w, xs):
    def step(c, x):
        h = lax.tanh(c * w + x)
        return h, h * h

    return scan(step, np.float32(0.5), xs)


def test_scan_values_and_reverse():
    carry, ys = scan(lambda c, x: (c + x, c), np.float32(0), X)
    assert carry == X.sum()
    np.testing.assert_allclose(ys, [0.0, 0.5, -0.5])
    carry, ys = scan(lambda c, x: (c + x, c), np.float32(0), X, reverse=True)
    np.testing.assert_allclose(ys, [1.0, 2.0, 0.0])
    carry, ys = scan(lambda c, _: (c * 2.0, c), np.float32(1), None, length=3)
    np.testing.assert_allclose(ys, [1, 2, 4])


def test_scan_derivatives_orders_1_and_2():
    check_grads(lambda w, xs: _rnn(w, xs)[0] + _rnn(w, xs)[1].sum(), (np.float32(0.7), X), order=2)
    check_grads(
        lambda xs: scan(lambda c, x: (c * x, c + x), np.float32(1), xs, reverse=True), (X,), order=2
    )


def test_scan_jacobians_and_vmap():
    jf = jacfwd(lambda xs: _rnn(np.float32(0.7), xs)[1])(X)
    jr = jacrev(lambda xs: _rnn(np.float32(0.7), xs)[1])(X)
    np.testing.assert_allclose(jf, jr, rtol=1e-5, atol=1e-6)
    ws = np.array([0.1, 0.7], np.float32)
    np.testing.assert_allclose(
        vmap(lambda w: _rnn(w, X)[1])(ws), np.stack([_rnn(w, X)[1] for w in ws]), rtol=1e-6
    )
    xs2 = np.stack([X, X * 2], 1)
    np.testing.assert_allclose(
        vmap(lambda xs: _rnn(np.float32(0.7), xs)[0], in_axes=1)(xs2),
        [_rnn(np.float32(0.7), X)[0], _rnn(np.float32(0.7), X * 2)[0]],
        rtol=1e-6,
    )
    h = hessian(lambda w: _rnn(w, X)[1].sum())(np.float32(0.3))
    assert np.isfinite(h)


def test_scan_errors():
    with pytest.raises(ValueError, match="different leading axis sizes"):
        scan(lambda c, x: (c, x), np.float32(0), (X, np.ones(2, np.float32)))
    with pytest.raises(TypeError, match="same pytree structure"):
        scan(lambda c, x: ((c, c), x), np.float32(0), X)
    with pytest.raises(TypeError, match="carry output must have identical types"):
        scan(lambda c, x: (c.astype(np.int32), x), np.float32(0), X)


def test_loops_forward_unchanged_carries_and_xs_like_jax():
    xs = np.ones(2, np.float32)
    closed = make_jaxpr(lambda x: scan(lambda c, y: (c, y), x, xs))(np.float32(1))
    (eqn,) = closed.eqns
    # the unchanged carry is a const; the y that is an x is not stacked again
    assert (eqn.params["num_consts"], eqn.params["num_carry"], len(eqn.outvars)) == (1, 0, 0)
    c, ys = scan(lambda c, y: (c, y), np.float32(3), xs)
    assert c == 3.0 and ys is not xs
    np.testing.assert_array_equal(ys, xs)

    def loop(x, step):
        return while_loop(lambda c: c[0] < 3.0, lambda c: (c[0] + c[1], c[1]), (x, step))

    (eqn,) = make_jaxpr(loop)(np.float32(1), np.float32(0.5)).eqns
    assert (eqn.params["body_nconsts"], len(eqn.outvars)) == (1, 1)
    assert loop(np.float32(1), np.float32(0.5)) == (3.0, 0.5)


def test_map_applies_over_leading_axis():
    np.testing.assert_allclose(map(lambda x: lax.sin(x) * 2.0, X), np.sin(X) * 2, rtol=1e-6)
    np.testing.assert_allclose(grad(lambda xs: map(lax.sin, xs).sum())(X), np.cos(X), rtol=1e-6)


# ----- scan's partial evaluation: loop-invariant residuals are not stacked -------------------

_T, _B, _H, _D = 5, 2, 4, 3
_RNG = np.random.RandomState(0)
_WH = (_RNG.randn(_H, _H) / 2).astype(np.float32)
_WX = _RNG.randn(_D, _H).astype(np.float32)
_BIAS = _RNG.randn(_H).astype(np.float32)
_XS = _RNG.randn(_T, _B, _D).astype(np.float32)
_M = (_RNG.randn(3, 3) / 2).astype(np.float32)


def _rnn_loss(wh, wx, b, xs):
    def step(h, x):
        h = lax.tanh(h @ wh + x @ wx + b)
        return h, h

    _, hs = scan(step, np.zeros((_B, _H), np.float32), xs)
    return (hs * hs).sum()


def _closed_over_loss(c0, xs):
    def step(c, x):
        c = lax.sin(_M @ c) * x
        return c, c.sum()

    c, ys = scan(step, c0, xs)
    return c.sum() + ys.sum()


def _scan_eqns(closed):
    return [e for e in closed.jaxpr.eqns if e.primitive.name == "scan"]


def _stacked_shapes(eqn):
    return [tuple(v.aval.shape) for v in eqn.outvars[eqn.params["num_carry"] :]]


_RNN_ARGS = (_WH, _WX, _BIAS, _XS)
_RNN_STAGINGS = {
    "grad": lambda *a: grad(_rnn_loss, argnums=(0, 1, 2, 3))(*a),
    "vjp": lambda *a: vjp(_rnn_loss, *a)[1](np.float32(1)),
    "linearize": lambda *a: linearize(_rnn_loss, *a)[1](*a),
}


@pytest.mark.parametrize("how", list(_RNN_STAGINGS))
def test_scan_residuals_of_consts_are_not_stacked(how):
    forward, backward = _scan_eqns(make_jaxpr(_RNN_STAGINGS[how])(*_RNN_ARGS))
    stacked = _stacked_shapes(forward)
    # the ys, then h, tanh(.) and 1 - tanh(.) per step; no (T, 4, 4) copy of wh, none of wx
    assert stacked == [(_T, _B, _H)] * 4
    # the second scan (transposed, or the tangent scan for linearize) reads wh and wx once, as
    # loop constants in front of its own constants (the tangents of wh, wx, b for linearize)
    consts = backward.invars[: backward.params["num_consts"]]
    assert [v.aval.shape for v in consts[:2]] == [_WH.shape, _WX.shape]
    assert len(consts) == (5 if how == "linearize" else 2)


def test_scan_known_body_keeps_no_loop_invariant_work():
    closed = make_jaxpr(grad(_rnn_loss, argnums=(0, 1, 2, 3)))(*_RNN_ARGS)
    forward = _scan_eqns(closed)[0]
    body = forward.params["jaxpr"].jaxpr
    varying = {id(v) for v in body.invars[forward.params["num_consts"] :]}
    for eqn in body.eqns:
        assert any(id(v) in varying for v in eqn.invars), eqn.primitive.name
        varying.update(id(v) for v in eqn.outvars)
    # the bias broadcast runs once, before the loop
    top = [e.primitive.name for e in closed.jaxpr.eqns]
    assert top.index("broadcast_in_dim") < top.index("scan")


def test_scan_forwards_known_xs_and_closed_over_constants():
    closed = make_jaxpr(grad(_closed_over_loss, argnums=(0, 1)))(X, np.ones((4, 3), np.float32))
    forward, backward = _scan_eqns(closed)
    assert _stacked_shapes(forward) == [(4,), (4, 3), (4, 3)]  # ys, cos and sin per step
    assert [v.aval.shape for v in forward.invars[: forward.params["num_consts"]]] == [(3, 3)]
    xs_var = closed.jaxpr.invars[1]
    assert any(v is xs_var for v in backward.invars)  # xs read as-is, not re-stacked


def test_scan_residuals_that_vary_per_step_stay_stacked():
    def loss(a, xs):
        c, ys = scan(lambda c, x: (lax.sin(c * x) * a, lax.exp(c * a)), np.float32(0.3), xs)
        return c + ys.sum()

    forward, backward = _scan_eqns(make_jaxpr(grad(loss, argnums=(0, 1)))(np.float32(0.7), X))
    # ys, then c, cos(c x), sin(c x), exp(c a) per step; a and xs are forwarded
    assert _stacked_shapes(forward) == [(3,)] * 5
    assert backward.params["num_consts"] == 1


def test_scan_gradients_with_hoisted_residuals():
    check_grads(_rnn_loss, _RNN_ARGS, order=2, rtol=2e-2, atol=2e-2)
    check_grads(_closed_over_loss, (X, np.ones((4, 3), np.float32)), order=2, rtol=2e-2)
    eager = grad(_rnn_loss, argnums=(0, 1, 2))(*_RNN_ARGS)
    staged = make_jaxpr(grad(_rnn_loss, argnums=(0, 1, 2)))(*_RNN_ARGS)
    replayed = eval_jaxpr(staged.jaxpr, staged.consts, *_RNN_ARGS)
    for e, r in zip(eager, replayed, strict=True):
        np.testing.assert_allclose(e, r, rtol=1e-5, atol=1e-6)


class _LogEffect(Effect):
    pass


_LOG = []
_log_p = Primitive("test_scan_log")
_log_p.multiple_results = True
_log_p.def_impl(lambda x: _LOG.append(np.asarray(x)) or [])
_log_p.def_effectful_abstract_eval(lambda aval: ([], {_LogEffect()}))
_log_p.def_jvp(lambda primals, tangents: (_log_p.bind(*primals), []))


def test_scan_effect_on_a_const_still_runs_every_iteration():
    def loss(w, xs):
        def step(c, x):
            _log_p.bind(w * 2.0)
            return lax.sin(c * w + x), c

        return scan(step, np.float32(0.1), xs)[0]

    _LOG.clear()
    g = grad(loss)(np.float32(0.5), X)
    assert len(_LOG) == len(X)
    assert np.isfinite(g)
