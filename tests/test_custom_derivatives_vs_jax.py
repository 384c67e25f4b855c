"""custom_jvp / custom_vjp with `symbolic_zeros=True` against real JAX 0.10.2: which tangents
and cotangents the user's rules see as symbolic zeros (and which inputs fwd sees perturbed),
under grad, jvp, vmap and their compositions, and the derivatives that come out."""

import laminax_core as lc
import numpy as np
import pytest
from jaxref import requires_jax, run_jax
from laminax_core.custom_derivatives import SymbolicZero, custom_vjp_primal_tree_values

# Runs under both libraries; `api` holds grad/jvp/vmap/jacrev/custom_jvp/custom_vjp,
# `SymbolicZero` and `custom_vjp_primal_tree_values`. Leaves `log` and `values`.
_PROGRAM = """
log = []

@custom_jvp
def f(x, y):
    return x * y

def f_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    log.append(("jvp",) + tuple(
        (tuple(t.shape), str(t.dtype)) if isinstance(t, SymbolicZero) else "array"
        for t in tangents))
    out = f(x, y)
    if isinstance(tx, SymbolicZero):
        return out, x * ty * 3
    if isinstance(ty, SymbolicZero):
        return out, tx * y * 2
    return out, tx * y * 2 + x * ty * 3

f.defjvp(f_jvp, symbolic_zeros=True)

@custom_vjp
def h(x, y):
    return x * y, x + y

def h_fwd(x, y):
    log.append(("fwd", type(x).__name__, x.perturbed, y.perturbed))
    xv, yv = custom_vjp_primal_tree_values((x, y))
    return h(xv, yv), (xv, yv)

def h_bwd(res, cts):
    (xv, yv), (c1, c2) = res, cts
    log.append(("bwd",) + tuple(isinstance(c, SymbolicZero) for c in cts))
    if isinstance(c1, SymbolicZero):
        return c2, c2
    if isinstance(c2, SymbolicZero):
        return c1 * yv, SymbolicZero.from_primal_value(yv)
    return c1 * yv + c2, c1 * xv + c2

h.defvjp(h_fwd, h_bwd, symbolic_zeros=True)

x, y = np.float32(2.0), np.float32(5.0)
xs = np.arange(3, dtype=np.float32)
m = np.ones((2, 3), np.float32)
programs = [
    lambda: grad(f)(x, y),
    lambda: grad(f, argnums=1)(x, y),
    lambda: grad(f, argnums=(0, 1))(x, y),
    lambda: jvp(f, (x, y), (np.float32(1.0), np.float32(1.0))),
    lambda: grad(lambda a: f(a, m).sum())(m),
    lambda: vmap(grad(f), in_axes=(0, None))(xs, y),
    lambda: grad(lambda a: vmap(f, in_axes=(0, None))(a, y).sum())(xs),
    lambda: jacrev(lambda a: f(a, y))(xs),
    lambda: grad(grad(lambda a: f(a, a)))(x),
    lambda: grad(lambda a, b: h(a, b)[0])(x, y),
    lambda: grad(lambda a, b: h(a, b)[1], argnums=(0, 1))(x, y),
    lambda: grad(lambda a, b: h(a, b)[0] * h(a, b)[1], argnums=(0, 1))(x, y),
    lambda: vmap(grad(lambda a, b: h(a, b)[1], argnums=(0, 1)), in_axes=(0, None))(xs, y),
    lambda: grad(lambda a: vmap(lambda u: h(u, y)[1])(a).sum())(xs),
    lambda: grad(lambda a: vmap(lambda u: h(u, y)[0] + h(u, y)[1])(a).sum())(xs),
]
values = []
for program in programs:
    start = len(log)
    out = program()
    leaves = out if isinstance(out, tuple) else (out,)
    values.append(([np.asarray(v, np.float32).tolist() for v in leaves], log[start:]))
"""

_JAX = (
    "from jax.custom_derivatives import SymbolicZero, custom_vjp_primal_tree_values\n"
    "from jax import grad, jvp, vmap, jacrev, custom_jvp, custom_vjp\n"
    + _PROGRAM
    + "result = values\n"
)


def _laminax_values():
    ns = dict(
        np=np, grad=lc.grad, jvp=lc.jvp, vmap=lc.vmap, jacrev=lc.jacrev,
        custom_jvp=lc.custom_jvp, custom_vjp=lc.custom_vjp, SymbolicZero=SymbolicZero,
        custom_vjp_primal_tree_values=custom_vjp_primal_tree_values,
    )
    exec(_PROGRAM, ns)
    return ns["values"]


def _plain(entries):
    # pickled tuples may come back as tuples or lists; compare structurally
    return [tuple(tuple(e) if isinstance(e, list) else e for e in entry) for entry in entries]


@pytest.fixture(scope="module")
def both():
    return run_jax(_JAX), _laminax_values()


@requires_jax
@pytest.mark.parametrize("index", range(15))
def test_symbolic_zero_rules_see_what_jax_rules_see(both, index):
    expected, actual = both[0][index], both[1][index]
    assert _plain(actual[1]) == _plain(expected[1])
    assert len(actual[0]) == len(expected[0])
    for a, e in zip(actual[0], expected[0], strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-6)
