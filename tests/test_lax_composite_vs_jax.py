"""`lax.composite` against real JAX 0.10.2: values eagerly and under jit, the printed jaxpr
(attributes, decomposition, name, version), the `stablehlo.composite` op and its attributes,
and the errors JAX raises (no jvp, no batching, tracers as attributes)."""

from __future__ import annotations

import laminax as jax
import laminax.numpy as jnp
import numpy as np
import pytest
from jaxref import requires_jax, run_jax
from laminax import lax

X = np.linspace(-1, 1, 4).astype(np.float32)
DEFS = """
tangent = lax.composite(lambda x: jnp.sin(x) / jnp.cos(x), "my.tangent", version=3)
scaled = lax.composite(lambda x, y, *, k, axis, rows: (x * k + y, jnp.sum(x, axis)), "my.scaled")
pair = lax.composite(lambda p: {"a": p[0] * 2, "b": p[1]}, "my.pair")
"""
CALLS = [
    "tangent(x)", "scaled(x, 1.0, k=2.0, axis=0, rows=np.arange(3))",
    "scaled(x, x, k=3, axis=None, rows='names')", "pair((x, x[:2]))",
    "jax.grad(lambda x: tangent(x).sum())(x)", "jax.vmap(tangent)(x[None])",
    "jax.jit(lambda x: lax.composite(lambda y, *, z: y * z, 'bad')(x, z=x))(x)",
]
_SNIPPET = DEFS + """
from jax import lax
def outcome(call, jit):
    try:
        fn = (lambda x: eval(call)) if not jit else jax.jit(lambda x: eval(call))
        return ('ok', [np.asarray(v) for v in jax.tree_util.tree_leaves(fn(x))])
    except Exception as err:
        return ('error', type(err).__name__, str(err))
result = [[outcome(c, j) for j in (False, True)] for c in calls]
"""


def _scope():
    scope = dict(jax=jax, jnp=jnp, lax=lax, np=np)
    exec(DEFS, scope)  # noqa: S102 (the same definitions JAX runs)
    return scope


def _outcome(call, jit):
    scope = _scope()
    try:
        fn = (lambda x: eval(call, {**scope, "x": x}))  # noqa: S307
        out = (jax.jit(fn) if jit else fn)(X)
        return ("ok", [np.asarray(v) for v in jax.tree_util.tree_leaves(out)])
    except Exception as err:  # noqa: BLE001 (the error type is what is compared)
        return ("error", type(err).__name__, str(err))


@pytest.fixture(scope="module")
def jax_outcomes():
    return run_jax("from jax import lax\n" + _SNIPPET, calls=CALLS, x=X)


@requires_jax
@pytest.mark.parametrize("index", range(len(CALLS)), ids=CALLS)
@pytest.mark.parametrize("jit", [False, True])
def test_matches_jax(jax_outcomes, index, jit):
    want, got = jax_outcomes[index][jit], _outcome(CALLS[index], jit)
    assert got[0] == want[0], (CALLS[index], got, want)
    if want[0] == "error":
        assert got[1] == want[1], (CALLS[index], got, want)
        return
    for g, w in zip(got[1], want[1], strict=True):
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


@requires_jax
@pytest.mark.parametrize("call", CALLS[:4])
def test_jaxpr_and_composite_op_match_jax(call):
    source = ("fn = lambda x: " + call + "\n"
              "result = [str(jax.make_jaxpr(fn)(x)), jax.jit(fn).lower(x).as_text()]")
    want_jaxpr, want_hlo = run_jax("from jax import lax\n" + DEFS + source, x=X)
    fn = lambda x: eval(call, {**_scope(), "x": x})  # noqa: E731,S307
    assert str(jax.make_jaxpr(fn)(X)) == want_jaxpr

    def composites(text):
        return [line.strip() for line in text.splitlines() if "stablehlo.composite" in line]

    assert composites(jax.jit(fn).lower(X).as_text()) == composites(want_hlo)
