"""Mutable array references in core, on the NumPy reference interpreter: eager reads and writes,
the printed equations, effects (dead-code elimination keeps writes), discharging a jaxpr into a
functional one, loops and conds that close over references, and jvp / grad / vmap through them.
NumPy computes every expected value."""

import numpy as np
import pytest
from laminax_core import grad, jvp, lax, make_jaxpr, vmap
from laminax_core import numpy as jnp
from laminax_core.internal import AbstractRef, Ref, dce_jaxpr, discharge_jaxpr, eval_jaxpr
from laminax_core.ref import addupdate, empty_ref, free_ref, freeze, get, new_ref, swap

X = np.arange(6, dtype=np.float32).reshape(2, 3)


def test_eager_reads_and_writes_follow_numpy_indexing():
    r, want = new_ref(X), X.copy()
    r[0, 1:] = np.float32([7, 8])
    want[0, 1:] = [7, 8]
    r[:, 0] += 1.0
    want[:, 0] += 1
    assert swap(r, (1, 2), np.float32(-1)) == want[1, 2]
    want[1, 2] = -1
    addupdate(r, ..., np.ones((2, 3), np.float32))
    want += 1
    np.testing.assert_array_equal(get(r, 1), want[1])
    np.testing.assert_array_equal(r[::2, -1], want[::2, -1])
    np.testing.assert_array_equal(freeze(r), want)
    assert isinstance(r, Ref) and r.shape == (2, 3) and r.dtype == np.float32 and len(r) == 2
    assert str(r.aval) == "Ref{float32[2,3]}" and r.aval.inner_aval.shape == (2, 3)


def test_printed_equations_and_effects():
    def f(x, i):
        r = new_ref(x)
        old = swap(r, (i, slice(1, None)), jnp.zeros(2, np.float32))
        r[0, 1:] += old
        r.addupdate(x)
        free_ref(new_ref(x))
        return freeze(r)

    closed = make_jaxpr(f)(X, 1)
    text = str(closed)
    assert "c:Ref{f32[2,3]} = new_ref[kind=None memory_space=None] a" in text
    assert "e:f32[2], c[b,1:] <- c[b,1:], d" in text
    assert "f:f32[2] <- c[0,1:]" in text and "c[0,1:] <- g" in text
    assert "c[...] += a" in text and "free_ref h" in text
    ref_ops = {"new_ref", "swap", "get", "addupdate", "free_ref", "freeze"}
    assert all(bool(e.effects) == (e.primitive.name in ref_ops) for e in closed.jaxpr.eqns)
    pruned, _ = dce_jaxpr(closed.jaxpr, [False])  # writes and frees survive dead-code removal
    assert {e.primitive.name for e in pruned.eqns} >= {"new_ref", "swap", "addupdate",
                                                        "free_ref"}


def test_discharged_jaxpr_is_functional_and_returns_final_values():
    def f(r, y):
        r[1] = r[0] * y
        return r[...].sum()

    ref_aval = AbstractRef(make_jaxpr(lambda x: x)(X).in_avals[0])
    closed = make_jaxpr(f)(new_ref(X), np.float32(2))
    assert closed.in_avals[0] == ref_aval
    discharged, keys = discharge_jaxpr(closed)
    assert keys == [0] and discharged.in_avals[0] == ref_aval.inner_aval
    assert not any(isinstance(a, AbstractRef) for a in discharged.out_avals)
    total, final = eval_jaxpr(discharged.jaxpr, discharged.consts, X, np.float32(2))
    want = X.copy()
    want[1] = X[0] * 2
    np.testing.assert_array_equal(final, want)
    np.testing.assert_allclose(total, want.sum())


def test_loops_and_cond_close_over_references():
    def f(x):
        acc, hits = new_ref(np.float32(0)), new_ref(np.zeros(3, np.float32))

        def body(c, xi):
            acc[...] += xi
            return c, ()

        lax.scan(body, np.float32(0), x)
        lax.fori_loop(0, 3, lambda i, c: (hits.__setitem__(i, jnp.take(x, i) * 2), c)[1],
                      0)
        lax.cond(x[0] > 100, lambda: acc.__setitem__(..., np.float32(-1)), lambda: None)
        lax.while_loop(lambda i: i < 2, lambda i: (hits.addupdate(np.float32(1), i), i + 1)[1], 0)
        return acc[...], freeze(hits)

    x = np.float32([1, 2, 3])
    total, hits = f(x)
    assert total == 6
    np.testing.assert_array_equal(hits, [3, 5, 6])
    closed = make_jaxpr(f)(x)
    discharged, _ = discharge_jaxpr(closed)
    assert "Ref" not in str(discharged)
    got = eval_jaxpr(discharged.jaxpr, discharged.consts, x)
    np.testing.assert_array_equal(got[1], [3, 5, 6])


def test_jvp_grad_vmap_through_internal_references():
    def f(x):
        r = new_ref(jnp.zeros_like(x))
        r[...] = jnp.sin(x)
        r[0] = r[0] * 3
        return jnp.sum(r[...])

    x = np.float32([0.5, 1.0, 2.0])
    want_grad = np.cos(x) * np.float32([3, 1, 1])
    np.testing.assert_allclose(grad(f)(x), want_grad, rtol=1e-6)
    _, tangent = jvp(f, (x,), (np.ones(3, np.float32),))
    np.testing.assert_allclose(tangent, want_grad.sum(), rtol=1e-6)
    xs = np.stack([x, 2 * x])
    want = [np.sin(v).sum() + 2 * np.sin(v[0]) for v in xs]
    np.testing.assert_allclose(vmap(f)(xs), want, rtol=1e-6)


def test_errors():
    r = new_ref(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="Invalid dtype for `swap`"):
        r[...] = np.zeros(3, np.int32)
    with pytest.raises(ValueError, match="Invalid shape for `swap`"):
        r[...] = np.float32(1)
    with pytest.raises(ValueError, match="Out of bound indexer"):
        r[3]
    with pytest.raises(ValueError, match="must not be longer"):
        r[0, 0]
    with pytest.raises(ValueError, match="mutable array reference"):
        lax.scan(lambda c, _: (c, None), r, length=2)
    with pytest.raises(Exception, match="unbatched array reference"):
        vmap(lambda v: r.__setitem__(..., v))(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="new_ref"):
        new_ref([1, 2])


def test_empty_ref_and_weak_values():
    from laminax_core import ShapeDtypeStruct

    e = empty_ref(ShapeDtypeStruct((2,), np.float32))
    e[1] = 4.0  # a Python float is stored in the reference's dtype
    np.testing.assert_array_equal(freeze(e), [0, 4])
    b = new_ref(np.zeros(2, np.int8))
    b[0] = 3
    assert freeze(b).dtype == np.int8
    text = str(make_jaxpr(lambda: freeze(empty_ref(ShapeDtypeStruct((2,), np.float32))))())
    assert "empty_ref[memory_space=None ty=float32[2]]" in text
