"""`jax.experimental.ode.odeint` against real JAX 0.10.2: solutions and their adjoint-method
gradients (with respect to the initial state, the times, extra arguments and closed-over
values) on a few ODEs, under jit and vmap, with `rtol`, `atol`, `mxstep` and `hmax`."""

from __future__ import annotations

import numpy as np
import pytest
from jaxref import requires_jax, run_jax

import laminax
import laminax.experimental.ode
import laminax.numpy as lnp

SNIPPET = """
odeint = jax.experimental.ode.odeint
tree = lambda v: jax.tree_util.tree_map(np.asarray, v)

def coupled(y, t, a):
    return {"u": -a * y["u"] + jnp.sin(t), "v": jnp.sum(y["u"]) * y["v"] * 0.1}

def lotka_volterra(y, t, params):
    prey, pred = y
    alpha, beta, gamma, delta = params
    return jnp.stack([alpha * prey - beta * prey * pred, delta * prey * pred - gamma * pred])

y0 = {"u": jnp.float32([1.0, 2.0]), "v": jnp.float32(0.5)}
ts = jnp.float32([0.0, 0.5, 1.3, 2.0])
lv0, lv_ts = jnp.float32([1.0, 0.5]), jnp.linspace(0.0, 3.0, 5, dtype=jnp.float32)
lv_params = jnp.float32([1.1, 0.4, 0.4, 0.1])

def coupled_loss(y0, ts, a):
    ys = odeint(coupled, y0, ts, a, rtol=1e-6, atol=1e-6)
    return jnp.sum(ys["u"] ** 2) + jnp.sum(ys["v"])

def lv_loss(y0, ts, params):
    return jnp.sum(odeint(lotka_volterra, y0, ts, params, rtol=1e-5, atol=1e-5) ** 2)

def closure_loss(k):
    return jnp.sum(odeint(lambda y, t: -k * y * jnp.cos(t), jnp.float32([1.0, -2.0]), ts))

result = {
    "coupled": tree(odeint(coupled, y0, ts, 0.7, rtol=1e-6, atol=1e-6)),
    "coupled_grad": tree(jax.grad(coupled_loss, (0, 1, 2))(y0, ts, jnp.float32(0.7))),
    "lv": tree(jax.jit(lambda y, p: odeint(lotka_volterra, y, lv_ts, p))(lv0, lv_params)),
    "lv_grad": tree(jax.jit(jax.grad(lv_loss, (0, 1, 2)))(lv0, lv_ts, lv_params)),
    "closure_grad": tree(jax.grad(closure_loss)(jnp.float32(0.3))),
    "vmap": tree(jax.vmap(lambda y: odeint(lotka_volterra, y, lv_ts, lv_params))(jnp.stack([lv0, 2 * lv0]))),
    "hmax": tree(odeint(lotka_volterra, lv0, lv_ts, lv_params, hmax=0.05)),
    "mxstep": tree(odeint(lotka_volterra, lv0, lv_ts, lv_params, mxstep=3)),
}
"""


def _laminax_result():
    scope = {"jax": laminax, "jnp": lnp, "np": np}
    exec(compile(SNIPPET, "<snippet>", "exec"), scope)  # noqa: S102 (our own test program)
    return scope["result"]


@pytest.fixture(scope="module")
def results():
    return _laminax_result(), run_jax("import jax.experimental.ode\n" + SNIPPET)


@requires_jax
@pytest.mark.parametrize("key", ["coupled", "coupled_grad", "lv", "lv_grad", "closure_grad",
                                 "vmap", "hmax", "mxstep"])
def test_odeint_matches_jax(results, key):
    ours, theirs = results
    ours_leaves = laminax.tree_util.tree_leaves(ours[key])
    theirs_leaves = laminax.tree_util.tree_leaves(theirs[key])
    assert laminax.tree_util.tree_structure(ours[key]) == laminax.tree_util.tree_structure(
        theirs[key])
    for a, b in zip(ours_leaves, theirs_leaves, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5, err_msg=key)


def test_odeint_errors():
    odeint = laminax.experimental.ode.odeint
    with pytest.raises(TypeError, match="must be arrays or scalars"):
        odeint(lambda y, t, s: y, lnp.ones(2), lnp.float32([0.0, 1.0]), "text")
    with pytest.raises(TypeError, match="t must be an array of floats"):
        odeint(lambda y, t: y, lnp.ones(2), lnp.int32([0, 1]))


ODE_HELPERS = """
import importlib
ode = importlib.import_module(jax.__name__ + ".experimental.ode")
ravel_pytree = importlib.import_module(jax.__name__ + ".flatten_util").ravel_pytree
lu = ode.lu
out = []
for args in [(jnp.arange(2), 1.0), (jnp.arange(2.0),), (1, 2), (jnp.ones(2, jnp.float16), 3)]:
    out.append([(str(jnp.asarray(a).dtype), bool(a.weak_type), isinstance(a, jax.Array))
                for a in ode.promote_dtypes_inexact(*args)])
try:
    ode.safe_zip([1], [1, 2])
except ValueError:
    out.append("ValueError")
out.append(ode.map(lambda a, b: a + b, [1, 2], [3, 4]))
out.append(ode.zip([1, 2], "ab"))
y = {"a": jnp.ones(2), "b": jnp.arange(3.0)}
flat, unravel = ravel_pytree(y)
field = lambda y, t: {"a": y["a"] * t, "b": y["b"] + t}
info = getattr(ode.api_util, "debug_info", None)  # JAX's wrap_init requires one
kw = {"debug_info": info("test", field, (y, 2.0), {})} if info else {}
g = ode.ravel_first_arg_(lu.wrap_init(field, **kw), unravel)
out.append(np.asarray(g.call_wrapped(flat, 2.0)))
out.append(sorted(n for n in ("api_util", "lu") if hasattr(ode, n)))
result = out
"""


@requires_jax
def test_ode_module_helpers_match_jax():
    scope = {"jax": laminax, "jnp": lnp, "np": np}
    exec(ODE_HELPERS, scope)
    expected = run_jax(ODE_HELPERS)
    got = scope["result"]
    assert got[:-2] == expected[:-2]
    np.testing.assert_allclose(got[-2], expected[-2])
    assert got[-1] == expected[-1]
