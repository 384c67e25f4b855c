"""Control flow and checkpoint compiled by XLA: cond with shared residual slots (`empty2`), while
loops with a batched predicate (reduced with `or`, finished examples keep their carry), and the
staged remat of a checkpoint's backward pass (an optimization barrier before its recompute)."""

import numpy as np
from laminax_core import checkpoint, checkpoint_policies, grad, jvp, lax, make_jaxpr, vmap
from laminax_dispatch import jit

F32 = np.float32
X = np.array([0.5, -1.0, 2.0], F32)


def _count_up(x):
    return lax.while_loop(lambda c: c < 5.0, lambda c: c + 1.5, x)


def _numpy_count_up(x):
    while x < 5.0:
        x = x + F32(1.5)
    return x


def test_batched_predicate_while_runs_until_every_example_is_done():
    fun = vmap(_count_up)
    assert make_jaxpr(fun)(X).eqns[0].params["cond_jaxpr"].out_avals[0].shape == (3,)
    expected = [_numpy_count_up(x) for x in X]
    np.testing.assert_allclose(jit(fun)(X), expected)
    np.testing.assert_allclose(fun(X), expected)
    text = jit(fun).lower(X).as_text()
    assert "stablehlo.or" in text and "stablehlo.select" in text


def test_batched_predicate_while_keeps_finished_carries_of_any_rank():
    def fun(x):
        init = (F32(0), np.ones(2, F32))
        return lax.while_loop(lambda c: c[0] < x, lambda c: (c[0] + 1.0, c[1] * 2.0), init)

    xs = np.array([[1, 2, 4], [2, 4, 8]], F32)
    counts, powers = jit(vmap(vmap(fun)))(xs)
    np.testing.assert_allclose(counts, xs)
    np.testing.assert_allclose(powers, np.broadcast_to((2.0**xs)[..., None], (2, 3, 2)))


def test_jvp_and_fori_loop_under_a_batched_predicate():
    def doubling(x):
        return jvp(
            lambda v: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, v), (x,), (F32(1),)
        )

    primals, tangents = jit(vmap(doubling))(np.abs(X))
    np.testing.assert_allclose(primals, [16, 16, 16])
    np.testing.assert_allclose(tangents, [32, 16, 8])
    loop = vmap(lambda n: lax.fori_loop(0, n, lambda i, c: c * 2.0, np.ones(2, F32)))
    np.testing.assert_allclose(jit(loop)(np.array([1, 3], np.int32)), [[2, 2], [8, 8]])


def test_grad_of_switch_with_shared_residual_slots_compiles():
    branches = [
        lambda v: lax.sin(v).sum(),
        lambda v: (v * v).sum(),
        lambda v: lax.exp(v[0]),
    ]
    fun = grad(lambda x, i: lax.switch(i, branches, x * np.ones(3, F32)))
    expected = [3 * np.cos(F32(0.5)), 3.0, np.exp(F32(0.5))]
    for i, value in enumerate(expected):
        np.testing.assert_allclose(jit(fun)(F32(0.5), i), value, rtol=1e-6)
    assert "empty2" in str(make_jaxpr(fun)(F32(0.5), 0))


def test_staged_remat_of_the_backward_pass_compiles():
    def layer(w, x):
        return lax.tanh(w @ x).sum()

    w = np.arange(6, dtype=F32).reshape(2, 3) / 4
    expected = jit(grad(layer))(w, X)
    for policy in (None, checkpoint_policies.dots_saveable):
        fun = jit(grad(checkpoint(layer, policy=policy)))
        np.testing.assert_allclose(fun(w, X), expected, rtol=1e-6)
    assert "stablehlo.optimization_barrier" in jit(grad(checkpoint(layer))).lower(w, X).as_text()

    def rnn(xs):
        return lax.scan(lambda c, y: (lax.sin(c * y), c), F32(1), xs)[0]

    np.testing.assert_allclose(jit(grad(checkpoint(rnn)))(X), jit(grad(rnn))(X), rtol=1e-6)
