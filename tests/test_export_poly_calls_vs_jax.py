"""Polymorphic artifacts called with symbolic shapes, against real JAX 0.10.2: an `Exported`
with dimension variables called while exporting another polymorphic function (its variables
become expressions of the outer ones, with JAX's errors where a condition is not provably
true), the outer artifact crossing both ways; `vmap` of a call (JAX has no batching rule for
`call_exported`, polymorphic or not)."""

import laminax_core as lc
import laminax_export as le
import numpy as np
import pytest
from jaxref import requires_jax, run_jax
from laminax_core import numpy as lnp
from laminax_dispatch import jit

pytestmark = requires_jax

_NESTED = """
def go(mod, jnp, jit, sds, cases):
    out = []
    for s_in, s_out in cases:
        inner = mod.export(jit(lambda x: x.sum(0) * x.shape[0]))(
            sds(mod.symbolic_shape(s_in), np.float32))
        try:
            outer = mod.export(jit(lambda x: inner.call(x) + 1))(
                sds(mod.symbolic_shape(s_out), np.float32))
            out.append([repr(a) for a in outer.out_avals])
        except ValueError as err:
            out.append(str(err))
    return out
"""
CASES = [("b, 3", "a, 3"), ("b, 3", "2*a, 3"), ("2*b, 3", "a, 3"), ("2*b, 3", "4*a, 3"),
         ("b+1, 3", "a, 3"), ("b+1, 3", "a+3, 3"), ("b, b", "a, c"), ("b, b", "a, a"),
         ("b, 3", "a, 4"), ("b, 3", "5, 3"), ("b, c", "a, 2*a"), ("3*b + 1, 3", "6*a + 4, 3")]


def test_nested_polymorphic_calls_solve_and_check_as_jax():
    scope = {"np": np}
    exec(_NESTED, scope)
    mine = scope["go"](le, lnp, jit, lc.ShapeDtypeStruct, CASES)
    theirs = run_jax(_NESTED + "result = go(jax.export, jnp, jax.jit, jax.ShapeDtypeStruct, "
                     "cases)", cases=CASES)
    assert mine == theirs


_INNER = """
def inner_fn(x, y):
    return jnp.tanh(x) @ y, x.sum(axis=0)
"""
_OUTER = """
def make_outer(inner):
    def outer(x, y):
        a, s = inner.call(jnp.concatenate([x, x], axis=0), y)
        return a.sum(axis=1) + s.sum() + x.shape[0]
    return outer
"""
XS = [np.random.default_rng(n).standard_normal((n, 4)).astype(np.float32) for n in (1, 3)]
Y = np.random.default_rng(9).standard_normal((4, 5)).astype(np.float32)


def _laminax_outer(inner):
    scope = {"jnp": lnp}
    exec(_OUTER, scope)
    a, = le.symbolic_shape("a")
    return le.export(jit(scope["make_outer"](inner)))(
        lc.ShapeDtypeStruct((a, 4), np.float32), lc.ShapeDtypeStruct((4, 5), np.float32))


def _laminax_inner():
    scope = {"jnp": lnp}
    exec(_INNER, scope)
    b, = le.symbolic_shape("b")
    return le.export(jit(scope["inner_fn"]))(
        lc.ShapeDtypeStruct((b, 4), np.float32), lc.ShapeDtypeStruct((4, 5), np.float32))


_JAX_SIDE = """
def inner_art():
    scope = {"jnp": jnp}
    exec(inner_src, scope)
    b, = jax.export.symbolic_shape("b")
    return jax.export.export(jax.jit(scope["inner_fn"]))(
        jax.ShapeDtypeStruct((b, 4), np.float32), jax.ShapeDtypeStruct((4, 5), np.float32))
def outer_art(inner):
    scope = {"jnp": jnp}
    exec(outer_src, scope)
    a, = jax.export.symbolic_shape("a")
    return jax.export.export(jax.jit(scope["make_outer"](inner)))(
        jax.ShapeDtypeStruct((a, 4), np.float32), jax.ShapeDtypeStruct((4, 5), np.float32))
"""


def test_outer_artifact_of_a_nested_call_crosses_both_ways():
    # JAX's inner artifact inside laminax's outer export, which JAX then runs; and laminax's
    # inner artifact inside JAX's outer export, which laminax then runs
    got = run_jax(_JAX_SIDE + """
mine = jax.export.deserialize(bytearray(blob))
theirs = outer_art(jax.export.deserialize(bytearray(inner_blob)))
result = dict(inner=bytes(inner_art().serialize()), outer=bytes(theirs.serialize()),
              avals=[repr(a) for a in (*theirs.in_avals, *theirs.out_avals)],
              ref=[outer_art(inner_art()).call(x, y) for x in xs],
              runs=[mine.call(x, y) for x in xs], jit_runs=[jax.jit(mine.call)(x, y) for x in xs])
""", blob=_laminax_outer(_laminax_inner()).serialize(), inner_blob=_laminax_inner().serialize(),
        inner_src=_INNER, outer_src=_OUTER, xs=XS, y=Y)
    from_jax_inner = _laminax_outer(le.deserialize(got["inner"]))
    assert [repr(a) for a in (*from_jax_inner.in_avals, *from_jax_inner.out_avals)] == got["avals"]
    theirs = le.deserialize(got["outer"])
    for x, ref, run, jrun in zip(XS, got["ref"], got["runs"], got["jit_runs"], strict=True):
        assert ref.shape == (2 * x.shape[0],)
        for out in (run, jrun, from_jax_inner.call(x, Y), theirs.call(x, Y),
                    jit(theirs.call)(x, Y)):
            np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def test_vmap_of_a_polymorphic_call_is_refused_as_in_jax():
    src = """
def go(mod, vmap, jnp, jit, sds):
    b, = mod.symbolic_shape("b")
    exp = mod.export(jit(lambda x: jnp.sin(x) * 2))(sds((b, 3), np.float32))
    try:
        vmap(exp.call)(np.ones((2, 4, 3), np.float32))
    except NotImplementedError as err:
        return str(err)
"""
    scope = {"np": np}
    exec(src, scope)
    theirs = run_jax(src + "result = go(jax.export, jax.vmap, jnp, jax.jit, jax.ShapeDtypeStruct)")
    assert theirs == "Batching rule for 'call_exported' not implemented"
    # core's message adds how to register a rule
    assert scope["go"](le, lc.vmap, lnp, jit, lc.ShapeDtypeStruct).startswith(theirs)
