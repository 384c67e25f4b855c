"""Ordered effects in exported functions, against real JAX 0.10.2.

JAX 0.10.2's only public ordered effects are host callbacks (`debug.print`/`debug.callback`
with `ordered=True`, `io_callback(ordered=True)`), which cannot be exported: both refuse them
alike. The calling convention for ordered effects is compared with a testing effect defined
on both sides under the same name (as JAX's own export tests do): the `ordered_effects`
field, the token arguments and results of the module's `main` and of the wrapped function it
calls, and calls (eager, under jit) of artifacts crossing both ways."""

import re

import laminax_core as lc
import laminax_export as le
import numpy as np
import pytest
from jaxlib.mlir.dialects import stablehlo as hlo
from jaxref import requires_jax, run_jax
from laminax_core.internal import (
    Effect,
    Primitive,
    control_flow_allowed_effects,
    lowerable_effects,
    ordered_effects,
)
from laminax_dispatch import jit
from laminax_dispatch.internal import register_lowering
from laminax_hostcb import debug_callback, debug_print, io_callback

pytestmark = requires_jax


@pytest.mark.parametrize("kind", ["debug_print", "debug_callback", "io_callback"])
def test_ordered_host_callbacks_cannot_be_exported_as_in_jax(kind):
    got = run_jax("""
import jax.experimental
def f(x):
    if kind == "debug_print":
        jax.debug.print("x={}", x, ordered=True)
    elif kind == "debug_callback":
        jax.debug.callback(lambda v: None, x, ordered=True)
    else:
        jax.experimental.io_callback(lambda v: None, None, x, ordered=True)
    return x * 2
result = []
for disabled in ([], [jax.export.DisabledSafetyCheck.custom_call("xla_ffi_python_cpu_callback")]):
    try:
        jax.export.export(jax.jit(f), disabled_checks=disabled)(
            jax.ShapeDtypeStruct((3,), np.float32))
        result.append(None)
    except Exception as e:
        result.append((type(e).__name__, str(e)))
""", kind=kind)

    def f(x):
        if kind == "debug_print":
            debug_print("x={}", x, ordered=True)
        elif kind == "debug_callback":
            debug_callback(lambda v: None, x, ordered=True)
        else:
            io_callback(lambda v: None, None, x, ordered=True)
        return x * 2

    checks = [le.DisabledSafetyCheck.custom_call("xla_ffi_python_cpu_callback")]
    for (type_name, message), disabled in zip(got, ([], checks), strict=True):
        with pytest.raises(NotImplementedError) as info:
            le.export(jit(f), disabled_checks=disabled)(lc.ShapeDtypeStruct((3,), np.float32))
        assert type(info.value).__name__ == type_name
        assert str(info.value).startswith(message)


# ----- a testing ordered effect, the same on both sides ---------------------------------------

_JAX_EFFECT = """
from jax._src import core as jcore, effects as jeffects
from jax.interpreters import mlir as jmlir
from jax._src.lib.mlir.dialects import hlo as jhlo

class TestingOrderedEffect(jeffects.Effect):
    __eq__ = lambda self, other: type(self) is type(other)
    __hash__ = lambda self: hash(type(self))
TestingOrderedEffect.__module__ = "laminax_testing_effects"
for s in (jeffects.ordered_effects, jeffects.lowerable_effects,
          jeffects.control_flow_allowed_effects):
    s.add_type(TestingOrderedEffect)
EFF = TestingOrderedEffect()
testing_p = jcore.Primitive("testing_effect")
testing_p.def_effectful_abstract_eval(lambda x: (x, {EFF}))
def _lower(ctx, x):
    ctx.set_tokens_out(jmlir.TokenSet({EFF: ctx.tokens_in.get(EFF)}))
    return [jhlo.add(x, x)]
jmlir.register_lowering(testing_p, _lower)
"""


class TestingOrderedEffect(Effect):
    __eq__ = lambda self, other: type(self) is type(other)  # noqa: E731
    __hash__ = lambda self: hash(type(self))  # noqa: E731


# the same `str(type)` as JAX's class: serialization names an effect by it
TestingOrderedEffect.__module__ = "laminax_testing_effects"
for _set in (ordered_effects, lowerable_effects, control_flow_allowed_effects):
    _set.add_type(TestingOrderedEffect)
EFF = TestingOrderedEffect()
testing_p = Primitive("testing_effect")
testing_p.def_effectful_abstract_eval(lambda x: (x, {EFF}))


def _lower(ctx, x):
    ctx.tokens_out = {**ctx.tokens_in, EFF: ctx.tokens_in[EFF]}
    return [hlo.add(x, x)]


register_lowering(testing_p, _lower)


def f(x):
    return testing_p.bind(x) * 3


_SPECS = """
def specs(mod, sds):
    b, = mod.symbolic_shape("b")
    return [((sds((3,), np.float32),), ()), ((sds((b,), np.float32),), ("cpu", "cuda"))]
"""


def _public_main(text: str) -> str:
    """The signatures of `main` and of the wrapped function it calls, without locations."""
    lines = [ln for ln in text.splitlines()
             if "func.func public @main" in ln or "func.func private @_wrapped_jax" in ln]
    return "\n".join(re.sub(r" loc\([^()]*\)", "", ln) for ln in lines)


def _laminax_artifacts():
    scope = {"np": np}
    exec(_SPECS, scope)
    return [le.export(jit(f), platforms=platforms or None)(*args)
            for args, platforms in scope["specs"](le, lc.ShapeDtypeStruct)]


def test_ordered_effect_calling_convention_and_artifacts_both_ways():
    mine = _laminax_artifacts()
    x = np.arange(4, dtype=np.float32)
    got = run_jax(_JAX_EFFECT + _SPECS + """
def f(x):
    return testing_p.bind(x) * 3
theirs = [jax.export.export(jax.jit(f), platforms=p or None)(*a)
          for a, p in specs(jax.export, jax.ShapeDtypeStruct)]
xs = [x[:3], x]
mine_exp = [jax.export.deserialize(bytearray(b)) for b in blobs]
result = dict(
    blobs=[bytes(e.serialize()) for e in theirs],
    effects=[[str(type(e)) for e in t.ordered_effects] + [len(t.unordered_effects)]
             for t in theirs],
    mains=[t.mlir_module() for t in theirs],
    runs=[[e.call(v), jax.jit(e.call)(v)] for e, v in zip(theirs, xs)],
    mine=[[str(type(e)) for e in m.ordered_effects] for m in mine_exp],
    mine_runs=[[m.call(v), jax.jit(m.call)(v)] for m, v in zip(mine_exp, xs)],
    jaxpr_effects=[str(type(e)) for e in jax.make_jaxpr(theirs[0].call)(xs[0]).effects])
""",
                  fresh=True, blobs=[e.serialize() for e in mine], x=x)
    xs = [x[:3], x]
    assert [[str(type(e)) for e in m.ordered_effects] + [len(m.unordered_effects)]
            for m in mine] == got["effects"]
    assert got["mine"] == [e[:-1] for e in got["effects"]]
    assert [_public_main(m.mlir_module()) for m in mine] == [
        _public_main(t) for t in got["mains"]]
    assert "jax.token = true" in _public_main(got["mains"][0])
    for m, t, v, (ref, jref), (run, jrun) in zip(
            mine, [le.deserialize(b) for b in got["blobs"]], xs, got["runs"],
            got["mine_runs"], strict=True):
        np.testing.assert_allclose(ref, 6 * v)
        assert [type(e) for e in t.ordered_effects] == [TestingOrderedEffect]
        for out in (jref, run, jrun, m.call(v), jit(m.call)(v), t.call(v), jit(t.call)(v)):
            np.testing.assert_allclose(out, ref)
    # the call carries the artifact's effect, as JAX's
    assert [str(type(e)) for e in lc.make_jaxpr(mine[0].call)(xs[0]).effects] == (
        got["jaxpr_effects"]) == [str(TestingOrderedEffect)]


def test_unknown_effect_in_an_artifact_is_refused_as_in_jax():
    got = run_jax(_JAX_EFFECT + """
class ElsewhereEffect(jeffects.Effect):
    __eq__ = lambda self, other: type(self) is type(other)
    __hash__ = lambda self: hash(type(self))
ElsewhereEffect.__module__ = "nowhere_in_laminax"
jeffects.lowerable_effects.add_type(ElsewhereEffect)
import dataclasses
e = jax.export.export(jax.jit(lambda x: x + 1))(jax.ShapeDtypeStruct((3,), np.float32))
e = dataclasses.replace(e, unordered_effects=(ElsewhereEffect(),))
blob = bytes(e.serialize())
jeffects.lowerable_effects._effect_types.discard(ElsewhereEffect)
try:
    jax.export.deserialize(bytearray(blob))
    err = None
except Exception as ex:
    err = (type(ex).__name__, str(ex))
result = dict(blob=blob, err=err)
""", fresh=True)
    type_name, message = got["err"]
    with pytest.raises(NotImplementedError) as info:
        le.deserialize(got["blob"])
    assert type_name == "NotImplementedError"
    assert isinstance(info.value, ValueError)  # as every refusal of foreign bytes
    assert str(info.value).startswith(message)
