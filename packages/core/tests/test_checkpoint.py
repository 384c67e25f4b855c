"""checkpoint / remat: same values and derivatives, recomputation in the backward pass,
policies, static_argnums, and composition with vmap and jvp."""

import numpy as np
from laminax_core import (
    checkpoint,
    checkpoint_policies,
    grad,
    jvp,
    lax,
    make_jaxpr,
    remat,
    vmap,
)
from laminax_core.testing import check_grads

X = np.array([0.5, -1.0, 2.0], np.float32)
W = np.arange(6, dtype=np.float32).reshape(2, 3) / 10


def _f(x):
    return lax.sin(lax.sin(x))


def _prims(closed):
    # every equation's primitive, those inside remat2's jaxpr included
    names = []
    for eqn in closed.eqns:
        names.append(eqn.primitive.name)
        if eqn.primitive.name == "remat2":
            names += _prims(eqn.params["jaxpr"])
    return names


def test_checkpoint_prints_as_remat2():
    assert str(make_jaxpr(checkpoint(_f))(np.float32(1))) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = remat2[\n"
        "      differentiated=False\n"
        "      jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c; e:f32[] = sin d in (e,) }\n"
        "      policy=None\n"
        "      prevent_cse=True\n"
        "    ] a\n"
        "  in (b,) }"
    )


def test_checkpoint_keeps_values_and_derivatives():
    np.testing.assert_allclose(checkpoint(_f)(X), _f(X), rtol=1e-6)
    np.testing.assert_allclose(
        grad(lambda x: checkpoint(_f)(x).sum())(X), grad(lambda x: _f(x).sum())(X), rtol=1e-6
    )
    check_grads(checkpoint(_f), (X,), order=2)
    assert remat is checkpoint


def test_backward_pass_recomputes_unsaved_values():
    closed = make_jaxpr(grad(checkpoint(_f)))(np.float32(0.5))
    # sin(x) is computed in the forward pass and again in the backward pass
    assert _prims(closed).count("sin") == 3
    plain = make_jaxpr(grad(_f))(np.float32(0.5))
    assert _prims(plain).count("sin") == 2


def test_policies_choose_what_is_saved():
    def layer(w, x):
        return lax.tanh(w @ x).sum()

    x = np.ones(3, np.float32)
    saved = make_jaxpr(grad(checkpoint(layer, policy=checkpoint_policies.dots_saveable)))(W, x)
    nothing = make_jaxpr(grad(checkpoint(layer)))(W, x)
    everything = make_jaxpr(
        grad(checkpoint(layer, policy=checkpoint_policies.everything_saveable))
    )(W, x)
    count = lambda c, name: _prims(c).count(name)  # noqa: E731
    assert count(nothing, "dot_general") == 3  # forward, recomputed, transposed
    assert count(saved, "dot_general") == 2
    assert count(everything, "tanh") == 1
    expected = grad(layer)(W, x)
    for policy in (
        None,
        checkpoint_policies.dots_saveable,
        checkpoint_policies.everything_saveable,
        checkpoint_policies.nothing_saveable,
    ):
        np.testing.assert_allclose(
            grad(checkpoint(layer, policy=policy))(W, x), expected, rtol=1e-6
        )


def test_static_argnums():
    fun = checkpoint(lambda x, n: x**n, static_argnums=(1,))
    assert grad(fun)(np.float32(2), 3) == 12.0


def test_checkpoint_under_vmap_and_jvp():
    np.testing.assert_allclose(vmap(checkpoint(_f))(X), _f(X), rtol=1e-6)
    np.testing.assert_allclose(
        jvp(checkpoint(_f), (X,), (np.ones_like(X),))[1],
        jvp(_f, (X,), (np.ones_like(X),))[1],
        rtol=1e-6,
    )
    np.testing.assert_allclose(vmap(grad(checkpoint(_f)))(X), vmap(grad(_f))(X), rtol=1e-6)


def test_checkpoint_of_scan_body():
    from laminax_core.lax import scan

    def rnn(w, xs):
        step = checkpoint(lambda c, x: (lax.tanh(c * w + x), c))
        return scan(step, np.float32(0.1), xs)[0]

    check_grads(rnn, (np.float32(0.7), X), order=1)


def test_backward_recomputation_is_staged_in_a_differentiated_remat():
    closed = make_jaxpr(grad(checkpoint(_f)))(np.float32(0.5))
    # the forward pass runs outside any remat; the backward pass is one remat2 equation
    assert [e.primitive.name for e in closed.eqns] == ["sin", "sin", "remat2"]
    remat_eqn = closed.eqns[-1]
    assert remat_eqn.params["differentiated"] is True
    assert _prims(remat_eqn.params["jaxpr"]) == ["sin", "cos", "cos", "mul", "mul"]


def test_jvp_keeps_the_differentiated_flag_and_the_policy_prints_like_jax():
    closed = make_jaxpr(lambda x: jvp(checkpoint(_f), (x,), (x,)))(np.float32(0.5))
    assert closed.eqns[0].params["differentiated"] is False
    assert repr(checkpoint_policies.dots_saveable) == "DotsSaveable(only_if_no_batch_dims=False)"
    assert checkpoint_policies.checkpoint_dots_with_no_batch_dims.only_if_no_batch_dims


def test_saved_residuals_are_rounded_to_their_dtype():
    def layer(w, x):
        return lax.tanh(w @ x).sum()

    policy = checkpoint_policies.dots_saveable
    closed = make_jaxpr(grad(checkpoint(layer, policy=policy)))(W, X)
    names = [e.primitive.name for e in closed.eqns]
    assert names == ["dot_general", "reduce_precision", "tanh", "reduce_sum", "remat2"]
    assert closed.eqns[1].params == {"exponent_bits": 8, "mantissa_bits": 23}
    # the saved dot is a residual of the remat: no dot_general is recomputed there
    assert _prims(closed.eqns[-1].params["jaxpr"]).count("dot_general") == 1
    np.testing.assert_allclose(grad(checkpoint(layer, policy=policy))(W, X), grad(layer)(W, X))


def test_transposed_remat_drops_zero_cotangents():
    def two(x, y):
        return lax.sin(x) * y, lax.cos(y)

    # only the first output gets a cotangent; only x is differentiated
    fun = lambda x, y: checkpoint(two)(x, y)[0]  # noqa: E731
    expected = grad(lambda x, y: two(x, y)[0])(np.float32(0.3), np.float32(2.0))
    assert grad(fun)(np.float32(0.3), np.float32(2.0)) == expected
    check_grads(checkpoint(two), (np.float32(0.3), np.float32(2.0)), order=2)


def test_higher_order_primitives_inside_checkpoint_are_split_like_jax():
    from laminax_core.lax import cond, scan

    def nested(x):
        return checkpoint(lax.sin)(lax.sin(x)) * x

    def with_cond(x):
        return cond(x > 0, lax.sin, lax.cos, lax.sin(x))

    def with_scan(xs):
        return scan(lambda c, y: (lax.sin(c * y), c), np.float32(1.0), xs)[0]

    x = np.float32(0.7)
    for fun, arg, n_eqns in [(nested, x, 4), (with_cond, x, 5), (with_scan, X, 2)]:
        # the primal part runs outside the staged remat, whose transpose recomputes the rest
        closed = make_jaxpr(grad(checkpoint(fun)))(arg)
        assert len(closed.eqns) == n_eqns and closed.eqns[-1].primitive.name == "remat2"
        np.testing.assert_allclose(grad(checkpoint(fun))(arg), grad(fun)(arg), rtol=1e-6)
    check_grads(checkpoint(with_scan), (X,), order=2)
