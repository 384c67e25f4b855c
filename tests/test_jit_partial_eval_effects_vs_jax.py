"""Partial evaluation of `jit` calls whose body has effects or float0 values, against JAX.

`linearize`, `grad` and `vjp` split a jitted call into a known call (run at once) and a staged
one. A debug callback reading known values belongs to the known call, so the primal outputs stay
concrete and the callback runs once, as in JAX (staging the whole effectful call made the
primals leak out of `linearize` as tracers). Residuals of float0 dtype (tangents of integer
values, custom_vjp residuals) cross the two calls as JAX passes them: as bool buffers.
"""

import numpy as np
import pytest
from jaxref import JaxReferenceError, requires_jax, run_jax

import laminax as jax

# Each program defines `f(x)` (one float32 argument) with `record(v)` a debug callback that
# appends float(v) to `calls`.
PROGRAMS = {
    "callback_then_sin": """
@jax.jit
def f(x):
    jax.debug.callback(record, x)
    return jnp.sin(x) * 2
""",
    "callback_in_while": """
@jax.jit
def f(x):
    def body(c):
        jax.debug.callback(record, c[0])
        return c[0] + 1, c[1] * 1.5
    return jax.lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1]
""",
    "callback_in_scan": """
@jax.jit
def f(x):
    def body(c, t):
        jax.debug.callback(record, c)
        return jnp.cos(c) * t, c
    return jax.lax.scan(body, x, jnp.arange(1.0, 4.0))[0]
""",
    "callback_in_cond": """
@jax.jit
def f(x):
    def yes(x):
        jax.debug.callback(record, x)
        return x ** 2
    return jax.lax.cond(x > 0, yes, lambda x: -x, x)
""",
    "nested_jit_callback": """
@jax.jit
def g(x):
    jax.debug.callback(record, x + 1)
    return jnp.exp(x)
@jax.jit
def f(x):
    return g(x) * jnp.tanh(x)
""",
    "int_output_beside": """
@jax.jit
def f(x):
    jax.debug.callback(record, x)
    return x * jnp.sum(jnp.arange(3)), jnp.arange(3)
""",
}

MODES = ("linearize", "grad", "vjp", "jvp")

DRIVER = """
calls = []
def record(v):
    calls.append(float(v))
{program}
x = np.float32({x})
mode = {mode!r}
if mode == "linearize":
    out, lin = jax.linearize(f, x)
    concrete = all(not isinstance(o, jax.core.Tracer) for o in jax.tree.leaves(out))
    res = (jax.tree.map(np.asarray, out), jax.tree.map(np.asarray, lin(np.float32(1.0))))
elif mode == "grad":
    concrete = True
    res = np.asarray(jax.grad(lambda x: jax.tree.leaves(f(x))[0])(x))
elif mode == "vjp":
    out, pull = jax.vjp(lambda x: jax.tree.leaves(f(x))[0], x)
    concrete = not isinstance(out, jax.core.Tracer)
    res = (np.asarray(out), np.asarray(pull(np.float32(1.0))[0]))
else:
    out, tan = jax.jvp(f, (x,), (np.float32(1.0),))
    concrete = True
    res = (jax.tree.map(np.asarray, out), jax.tree.map(np.asarray, tan))
jax.effects_barrier()
result = (res, concrete, calls)
"""


def _run_laminax(program: str, mode: str, x: float):
    scope = {"jax": jax, "jnp": jax.numpy, "np": np}
    exec(DRIVER.format(program=program, mode=mode, x=x), scope)
    return scope["result"]


def _same_tree(a, b):
    la, lb = jax.tree.leaves(a), jax.tree.leaves(b)
    assert len(la) == len(lb)
    for u, v in zip(la, lb):
        u, v = np.asarray(u), np.asarray(v)
        if u.dtype == jax.dtypes.float0 or v.dtype == jax.dtypes.float0:
            assert u.dtype == v.dtype and u.shape == v.shape
        else:
            np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-6)


@requires_jax
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_effectful_jit_under_autodiff_matches_jax(name, mode):
    x = 0.7
    try:
        expected = run_jax(DRIVER.format(program=PROGRAMS[name], mode=mode, x=x))
    except JaxReferenceError as e:  # e.g. reverse mode through a while loop: JAX's error
        with pytest.raises(Exception) as info:
            _run_laminax(PROGRAMS[name], mode, x)
        assert type(info.value).__name__ == e.type_name
        return
    got = _run_laminax(PROGRAMS[name], mode, x)
    _same_tree(got[0], expected[0])
    assert got[1] is True and expected[1] is True  # primal outputs are concrete values
    assert sorted(got[2]) == sorted(expected[2])  # each callback ran as often, on the same values


FLOAT0_RESIDUAL = """
@jax.custom_vjp
def h(x, i):
    return x * 2
def h_fwd(x, i):
    return x * 2, (np.zeros(i.shape, jax.dtypes.float0), x * 3, i)
def h_bwd(res, g):
    return g * res[1] + res[2].sum(), np.zeros(res[0].shape, jax.dtypes.float0)
h.defvjp(h_fwd, h_bwd)
f = jax.jit(lambda x, i: h(x, i) + jnp.sum(i))
result = [np.asarray(jax.grad(lambda x: f(x, jnp.arange(n)))(np.float32(2.0)))
          for n in (0, 1, 3)]
result.append(np.asarray(jax.jit(jax.grad(lambda x: f(x, jnp.arange(4))))(np.float32(1.5))))
result.append(np.asarray(jax.vmap(jax.grad(lambda x: f(x, jnp.arange(2))))(jnp.arange(3.0))))
"""


@requires_jax
def test_float0_residuals_cross_the_split_jit_as_jax():
    scope = {"jax": jax, "jnp": jax.numpy, "np": np}
    exec(FLOAT0_RESIDUAL, scope)
    expected = run_jax(FLOAT0_RESIDUAL)
    assert len(scope["result"]) == len(expected)
    for got, want in zip(scope["result"], expected):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_linearize_never_returns_staged_primals():
    # the primal outputs of linearize are values of the caller's trace, whatever the body holds
    @jax.jit
    def f(x):
        jax.debug.callback(lambda v: None, x)
        return jax.numpy.sin(x)

    out, lin = jax.linearize(f, 0.5)
    assert not isinstance(out, jax.core.Tracer)
    np.testing.assert_allclose(out, np.sin(0.5), rtol=1e-6)
    np.testing.assert_allclose(lin(1.0), np.cos(0.5), rtol=1e-6)
