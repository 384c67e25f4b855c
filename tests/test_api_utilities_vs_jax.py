"""`flatten_util.ravel_pytree`, `test_util.check_grads`, `linear_transpose`, `typeof`,
`named_scope`/`named_call` and `ensure_compile_time_eval` against real JAX 0.10.2."""

from __future__ import annotations

import re

import numpy as np
import pytest
from exprcompare import JAX_SNIPPET, compare, run_laminax
from jaxref import requires_jax, run_jax

R = np.random.RandomState(0)
F = R.randn(3, 4).astype(np.float32)
V = R.randn(4).astype(np.float32)
SQ = R.randn(4, 4).astype(np.float32)
I32 = np.arange(5, dtype=np.int32)
C64 = (R.randn(3) + 1j * R.randn(3)).astype(np.complex64)
INPUTS = dict(F=F, V=V, SQ=SQ, I32=I32, C64=C64)

RAVEL = "jax.flatten_util.ravel_pytree"
ROUND_TRIP = f"(lambda fu: fu[1](fu[0]))({RAVEL}"
EXPRS = [
    f"{RAVEL}({{'a': F, 'b': V}})[0]",
    f"{RAVEL}([F, (V, F[0])])[0]",
    f"{ROUND_TRIP}({{'a': F, 'b': [V, F]}}))",
    f"{RAVEL}((F, I32))[0]",
    f"{ROUND_TRIP}((F, I32)))",
    f"{RAVEL}((I32, I32 > 2))[0]",
    f"{ROUND_TRIP}((I32, I32 > 2)))",
    f"{RAVEL}((C64, F))[0]",
    f"{ROUND_TRIP}((C64, V)))",
    f"{RAVEL}([])[0]",
    f"{RAVEL}([1.0, 2])[0]",
    f"{RAVEL}(np.float32(3))[0]",
    f"{RAVEL}({{'z': np.zeros((0, 3), np.float32), 'v': V}})[0]",
    f"(lambda fu: fu[1](fu[0].astype(np.int32)))({RAVEL}((F, V)))",  # dtype-polymorphic
    f"(lambda fu: fu[1](fu[0].astype(np.int32)))({RAVEL}((F, I32)))",  # TypeError
    f"jax.grad(lambda p: jnp.sum({RAVEL}(p)[0] ** 2))({{'a': F, 'b': V}})",
    f"jax.vmap(lambda x: {RAVEL}((x, 2 * x))[0])(F)",
    "jax.linear_transpose(lambda x: 2.0 * x, F)(F)",
    "jax.linear_transpose(lambda x: SQ @ x, V)(V)",
    "jax.linear_transpose(lambda x: jnp.sum(x, axis=0), F)(V)",
    "jax.linear_transpose(lambda x, y: (x[::2] + y, jnp.cumsum(y)), V, V[:2])((V[:2], V[:2]))",
    "jax.linear_transpose(lambda x: {'a': x.T, 'b': jnp.fft.fft(x).real}, F)"
    "({'a': F.T, 'b': F})",
    "jax.linear_transpose(lambda x: x * SQ[0], V)(V)",
    "jax.linear_transpose(lambda x: x + 1.0, V)(V)",  # affine: transposes the linear part
    "jax.linear_transpose(lambda x: 3 * x, I32)(I32)",
    "jax.linear_transpose(lambda x: x.astype(np.float32), I32)(V)",  # TypeError: int -> float
    "jax.linear_transpose(lambda x: 2.0 * x, V)(F)",  # TypeError: cotangent shape
    "jax.linear_transpose(lambda x: 2.0 * x, V)(I32[:4])",  # TypeError: cotangent dtype
    "jax.linear_transpose(lambda x: (x, x), V)(V)",  # TypeError: cotangent tree
    "jax.linear_transpose(lambda x: 2.0 * x, V, reduce_axes=('i',))(V)",
    "jax.linear_transpose(lambda x: C64 * x, C64)(C64)",
]


@pytest.fixture(scope="module")
def jax_outcomes():
    return run_jax("import jax.flatten_util\n" + JAX_SNIPPET, exprs=EXPRS, inputs=INPUTS)


@requires_jax
@pytest.mark.parametrize("index", range(len(EXPRS)), ids=EXPRS)
@pytest.mark.parametrize("jit", [False, True])
def test_matches_jax(jax_outcomes, index, jit):
    expr = EXPRS[index]
    compare(expr, run_laminax(expr, INPUTS, jit), jax_outcomes[index][jit], rtol=1e-5, atol=1e-5)


# ----- check_grads: the same verdict (pass, or AssertionError) as JAX's on right and wrong
# derivatives, in both modes and at orders 1 and 2

GRAD_CASES = {
    "sin": ("lambda x: jnp.sin(x)", "(F,)"),
    "poly": ("lambda x, y: x ** 3 * y + jnp.tanh(y)", "(V, V[::-1])"),
    "tree": ("lambda p: {'s': jnp.sum(p['a'] * p['b'][0])}", "({'a': V, 'b': [V + 1]},)"),
    "complex": ("lambda z: z * jnp.conj(z) + jnp.sin(z)", "(C64,)"),
    "f64_scalar": ("lambda x: jnp.exp(x) * x", "(1.5,)"),
    "stop_gradient": ("lambda x: jax.lax.stop_gradient(x) * x", "(V,)"),
    "wrong_jvp": ("WRONG", "(V,)"),
    "wrong_second_order": ("WRONG2", "(V,)"),
}
_WRONG = """
@jax.custom_jvp
def WRONG(x):
    return jnp.sin(x)
WRONG.defjvp(lambda p, t: (jnp.sin(p[0]), 1.1 * jnp.cos(p[0]) * t[0]))

@jax.custom_jvp
def WRONG2(x):
    return x ** 3
WRONG2.defjvp(lambda p, t: (p[0] ** 3, 3 * jax.lax.stop_gradient(p[0] ** 2) * t[0]))
"""
_CHECK = """
def _verdict(fun, args, order, modes):
    try:
        jax.test_util.check_grads(eval(fun, G), eval(args, G), order, modes=modes)
        return "pass"
    except AssertionError:
        return "AssertionError"
"""


def _grad_snippet():
    return ("import jax.test_util\nG = dict(jax=jax, jnp=jnp, np=np, **inputs)\n"
            f"exec({_WRONG!r}, G)\n{_CHECK}\n"
            "result = {(k, o, m): _verdict(f, a, o, m) for k, (f, a) in cases.items()"
            " for o in (1, 2) for m in (('fwd',), ('rev',))}")


@requires_jax
def test_check_grads_verdicts_match_jax():
    import laminax as jax
    import laminax.numpy as jnp

    expected = run_jax(_grad_snippet(), cases=GRAD_CASES, inputs=INPUTS)
    g = dict(jax=jax, jnp=jnp, np=np, **INPUTS)
    exec(_WRONG, g)  # noqa: S102 (the same source defines the wrong derivatives on both sides)
    namespace = {"jax": jax, "G": g}
    exec(_CHECK, namespace)  # noqa: S102
    got = {(k, o, m): namespace["_verdict"](f, a, o, m) for k, (f, a) in GRAD_CASES.items()
           for o in (1, 2) for m in (("fwd",), ("rev",))}
    assert got == expected
    assert "AssertionError" in got.values() and "pass" in got.values()


@requires_jax
def test_check_jvp_and_check_vjp_take_jax_signatures():
    import laminax as jax
    import laminax.numpy as jnp

    f = jnp.tanh
    jax.test_util.check_jvp(f, lambda a, t: jax.jvp(f, a, t), (V,))
    jax.test_util.check_vjp(f, lambda *a: jax.vjp(f, *a), (V,))
    with pytest.raises(AssertionError):
        jax.test_util.check_vjp(f, lambda *a: jax.vjp(jnp.sinh, *a), (V,))
    with pytest.raises(AssertionError):
        jax.test_util.check_jvp(f, lambda a, t: (f(*a), 2 * t[0]), (V,))
    expected = run_jax("import jax.test_util\n"
                       "try:\n"
                       "    jax.test_util.check_vjp(jnp.tanh, lambda *a: jax.vjp(jnp.sinh, *a),"
                       " (V,))\n    result = 'pass'\n"
                       "except AssertionError:\n    result = 'AssertionError'", V=V)
    assert expected == "AssertionError"


# ----- typeof, scopes, compile-time evaluation, live arrays


@requires_jax
def test_typeof_matches_jax():
    import laminax as jax
    import laminax.numpy as jnp

    values = "[1.0, 2, True, 1j, np.float16(1), np.ones((2, 3)), jnp.arange(3), F, I32 > 1]"
    expected = run_jax(f"result = [(a.shape, str(a.dtype), a.weak_type) for a in "
                       f"map(jax.typeof, {values})]", F=F, I32=I32)
    avals = [jax.typeof(v) for v in eval(values, dict(np=np, jnp=jnp, F=F, I32=I32))]  # noqa: S307
    assert [(a.shape, str(a.dtype), a.weak_type) for a in avals] == expected
    traced = run_jax("result = []\n"
                     "jax.vmap(lambda x: result.append((jax.typeof(x).shape,"
                     " str(jax.typeof(x).dtype))) or x)(F)", F=F)
    seen = []
    jax.vmap(lambda x: seen.append((jax.typeof(x).shape, str(jax.typeof(x).dtype))) or x)(F)
    assert seen == [tuple(t) for t in traced]


_SCOPED = """
def g(x):
    with jax.named_scope('outer'):
        y = jnp.sin(x)
        with jax.named_scope('inner'):
            y = jnp.cos(y) * 2.0
    y = jax.named_call(lambda z: jnp.exp(z), name='named')(y)
    def helper(z):
        return jnp.tanh(z)
    return jax.named_call(helper)(y) + 1.0
"""


def _scope_names(hlo_text: str) -> list[str]:
    return sorted({n for n in re.findall(r'loc\("(jit\(g\)[^"]*)"', hlo_text) if "/" in n})


@requires_jax
def test_named_scopes_reach_hlo_locations_as_in_jax():
    import laminax as jax
    import laminax.numpy as jnp

    expected = run_jax(_SCOPED + "result = jax.jit(g).lower(np.float32(1)).as_text("
                       "debug_info=True)")
    namespace = {"jax": jax, "jnp": jnp}
    exec(_SCOPED, namespace)  # noqa: S102
    ours = jax.jit(namespace["g"]).lower(np.float32(1)).as_text(debug_info=True)
    assert _scope_names(ours) == _scope_names(expected)
    assert "jit(g)/outer/inner/cos" in _scope_names(ours)


@pytest.mark.parametrize("name", [1, None, b"x", ("a",)])
@requires_jax
def test_named_scope_rejects_non_strings_as_jax(name):
    import laminax as jax

    expected = run_jax("try:\n    with jax.named_scope(name): pass\n    result = None\n"
                       "except Exception as e:\n    result = type(e).__name__", name=name)
    with pytest.raises(Exception) as info:  # noqa: PT011 (the type is compared with JAX's)
        with jax.named_scope(name):
            pass
    assert type(info.value).__name__ == expected


_COMPILE_TIME = """
seen = []
@jax.jit
def f(x):
    with jax.ensure_compile_time_eval():
        c = jnp.sum(jnp.arange(5.0) ** 2)
        seen.append(float(c))  # concrete while tracing
        n = int(jnp.argmax(jnp.array([1, 7, 3])))
        y = x * c  # traced operand: still staged
        seen.append(isinstance(y, jax.core.Tracer) if hasattr(jax, 'core') else None)
    return y[n] if y.ndim else y + n
out = f(jnp.arange(3.0))
"""


@requires_jax
def test_ensure_compile_time_eval_matches_jax():
    import laminax as jax
    import laminax.numpy as jnp

    expected = run_jax(_COMPILE_TIME + "result = (np.asarray(out), seen[0])")
    namespace = {"jax": jax, "jnp": jnp}
    exec(_COMPILE_TIME, namespace)  # noqa: S102
    np.testing.assert_allclose(namespace["out"], expected[0])
    assert namespace["seen"][0] == expected[1]
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda x: float(jnp.sum(x)))(np.ones(3))  # outside the block: still abstract


@requires_jax
def test_live_arrays_track_arrays_as_jax():
    import laminax as jax
    import laminax.numpy as jnp

    x = jnp.arange(7.0)
    assert any(a is x for a in jax.live_arrays())
    assert any(a is x for a in jax.live_arrays("cpu"))
    x.delete()
    assert not any(a is x for a in jax.live_arrays())
    expected = run_jax("x = jnp.arange(7.0)\nbefore = any(a is x for a in jax.live_arrays())\n"
                       "x.delete()\nresult = (before, any(a is x for a in jax.live_arrays()))")
    assert tuple(expected) == (True, False)
