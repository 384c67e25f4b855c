"""How jaxprs with `jit` equations print, against real JAX 0.10.2: a called jaxpr's inputs and
outputs take the names of the equation's operands and binders (fresh names for literal or
repeated operands, `_` for dropped outputs), the other variables continue the outer naming;
other higher-order primitives (cond, scan, remat, custom_jvp/vjp) keep fresh names."""

import laminax
import laminax.numpy as lnp
import numpy as np
import pytest
from jaxref import requires_jax, run_jax

PROGRAMS = {
    "nested_and_repeated_calls": """
inner = jax.jit(lambda u, v: (u * v, u))
def f(x, y):
    a, b = inner(x, y)
    c, d = inner(a, 2.0)
    e = jax.jit(lambda z: jax.jit(lambda w: jnp.sin(w) + z)(z * 2))(c)
    g = jax.jit(lambda: 3.0)()
    return e + g, d
result = str(jax.make_jaxpr(f)(np.ones(3, np.float32), np.ones(3, np.float32)))
""",
    "dropped_and_passthrough_outputs": """
def f(x):
    c = jax.jit(lambda u, v: (u, v * 2, u + 1))(x, 1.0)
    d = jax.jit(lambda u: u)(c[2])
    return jax.jit(lambda q: (q, q))(d)
result = str(jax.make_jaxpr(f)(np.ones(3, np.float32)))
""",
    "control_flow_and_custom_rules_beside_jit": """
@jax.custom_jvp
def g(x): return jnp.sin(x) * 2
g.defjvp(lambda p, t: (g(p[0]), t[0]))
def f(x, y):
    z = jax.jit(lambda a, b: jnp.sin(a) * b)(x, y)
    w = jax.lax.cond(x[0] > 0, lambda v: v + 1, lambda v: v - 1, z)
    s = jax.lax.scan(lambda c, t: (c + t, c * t), 0.0, z)
    r = jax.checkpoint(lambda u: jnp.exp(u) * 3)(g(w))
    return jax.jit(lambda q: q.sum())(r), s
result = str(jax.make_jaxpr(f)(np.ones(3, np.float32), np.ones(3, np.float32)))
""",
    "grad_of_jit": """
result = str(jax.make_jaxpr(jax.grad(lambda x: jax.jit(jnp.sin)(x) * 2))(1.0))
""",
    "grad_of_jit_closing_over_constants": """
c = jnp.arange(3.0)
k = np.linspace(0.0, 1.0, 3).astype(np.float32)
g = jax.jit(lambda x: x * c + 2.5 * np.float32(3) + jnp.sin(x) * k)
result = [str(jax.make_jaxpr(jax.grad(lambda x: jnp.sum(g(x))))(np.ones(3, np.float32))),
          str(jax.make_jaxpr(lambda x: jax.vjp(g, x)[1](x))(np.ones(3, np.float32))),
          str(jax.make_jaxpr(lambda x: jax.linearize(g, x)[1](x))(np.ones(3, np.float32)))]
""",
    "vmap_same_operand_twice": """
result = str(jax.make_jaxpr(jax.vmap(lambda x: jax.jit(lambda a, b: a * b)(x, x)))(
    np.ones(3, np.float32)))
""",
}


@requires_jax
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_jit_equations_print_as_jax(name):
    scope = {"jax": laminax, "jnp": lnp, "np": np}
    exec(PROGRAMS[name], scope)
    assert scope["result"] == run_jax(PROGRAMS[name])
