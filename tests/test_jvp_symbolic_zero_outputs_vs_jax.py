"""What a function under `jvp` sees, against JAX: a value the differentiated inputs do not reach
is not a tracer (JAX's JVP trace returns the primal itself when the tangent is a symbolic zero),
including outputs of a jitted call, and tangents of Python-scalar primals come back as JAX's
types (weak-typed arrays where JAX's jnp promotion converts them, Python scalars where a value
passes through untouched)."""

import numpy as np
import pytest
from jaxref import requires_jax, run_jax

import laminax as jax

PROGRAMS = {
    "plain_ops": """
def f(x, y):
    a = jnp.sin(y) * 2
    b = x * a
    c = y + 1
    seen.extend([is_tracer(a), is_tracer(b), is_tracer(c)])
    return b, c
args, tans = (np.float32(1.5), np.float32(0.5)), (np.float32(1.0), np.zeros((), np.float32))
""",
    "jitted_call_mixed_outputs": """
g = jax.jit(lambda x, y, i: (x * y, y * 3, i + 1, jnp.cos(y)))
def f(x, y):
    outs = g(x, y, 4)
    seen.extend([is_tracer(o) for o in outs])
    return outs
args, tans = (np.float32(1.5), np.float32(0.5)), (np.float32(1.0), np.zeros((), np.float32))
""",
    "python_scalars": """
def f(x):
    seen.append(is_tracer(x))
    return x + 1, x, x * 2, -x, 3.0
args, tans = (1.0,), (1.0,)
""",
    "integer_beside_float": """
def f(x, i):
    j = i * 2
    seen.extend([is_tracer(j), is_tracer(x * j)])
    return x * j, j
args, tans = (np.float32(2.0), np.int32(3)), (np.float32(1.0), np.zeros((), jax.dtypes.float0))
""",
    "control_flow": """
def f(x, y):
    c = jax.lax.cond(y > 0, lambda a: a * 2, lambda a: a, y)
    s = jax.lax.scan(lambda k, t: (k + t, k), y, jnp.arange(3.0))[0]
    w = jax.lax.while_loop(lambda v: v < 10, lambda v: v * 2, y)
    seen.extend([is_tracer(c), is_tracer(s), is_tracer(w)])
    return x * c + s + w
args, tans = (np.float32(1.5), np.float32(0.5)), (np.float32(1.0), np.zeros((), np.float32))
""",
}

DRIVER = """
seen = []
def is_tracer(v):
    return isinstance(v, jax.core.Tracer)
{program}
if {zero_second}:
    tans = tans[:1] + tuple(np.zeros_like(t) if np.asarray(t).dtype != jax.dtypes.float0 else t
                            for t in tans[1:])
primal_out, tangent_out = jax.jvp(f, args, tans)
kinds = [(type(v).__name__ if isinstance(v, (int, float, complex)) else "array",
          str(np.asarray(v).dtype), bool(getattr(v, "weak_type", False)))
         for v in jax.tree.leaves((primal_out, tangent_out))]
values = [np.asarray(v) for v in jax.tree.leaves((primal_out, tangent_out))]
result = (seen, kinds, values)
"""


@requires_jax
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_jvp_leaves_untouched_values_alone_as_jax(name):
    snippet = DRIVER.format(program=PROGRAMS[name], zero_second=True)
    expected = run_jax(snippet)
    scope = {"jax": jax, "jnp": jax.numpy, "np": np}
    exec(snippet, scope)
    seen, kinds, values = scope["result"]
    assert seen == expected[0]
    assert [k[0] for k in kinds] == [k[0] for k in expected[1]]
    assert [k[1:] for k in kinds] == [k[1:] for k in expected[1]]
    assert len(values) == len(expected[2])
    for got, want in zip(values, expected[2]):
        if want.dtype == jax.dtypes.float0:
            assert got.dtype == want.dtype and got.shape == want.shape
        else:
            np.testing.assert_allclose(got, want, rtol=1e-6)


ZERO_RESULTS = """
def kind(v):
    return (type(v).__name__ if isinstance(v, (int, float)) else
            "Array" if isinstance(v, jax.Array) else "numpy",
            str(np.asarray(v).dtype), bool(getattr(v, "weak_type", False)), np.shape(v))
f0 = jax.dtypes.float0
cases = [
    lambda: jax.grad(lambda x: 3.0)(1.0),
    lambda: jax.grad(lambda x, y: x * 2, argnums=1)(1.0, 2.0),
    lambda: jax.grad(lambda x, y: jnp.sum(x), argnums=1)(jnp.ones(2), jnp.ones(3)),
    lambda: jax.grad(lambda x, y: x * 2, argnums=(0, 1))(np.float32(1.0), np.float32(2.0))[1],
    lambda: jax.jvp(lambda x: (x, 3.0), (1.0,), (1.0,))[1][1],
    lambda: jax.jvp(lambda x: (x, jnp.ones(3)), (1.0,), (1.0,))[1][1],
    lambda: jax.jvp(lambda x: x + 1, (1.0,), (1.0,))[1],
    lambda: jax.jvp(lambda x: x - 1, (2,), (np.zeros((), f0),))[1],
    lambda: jax.vjp(lambda x, y: x * 2, 1.0, np.float32(2.0))[1](1.0)[1],
    lambda: jax.jacfwd(lambda x, y: x * 2, argnums=1)(1.0, 2.0),
    lambda: jax.jacrev(lambda x, y: x * 2, argnums=1)(1.0, 2.0),
    lambda: jax.linearize(lambda x: (x, 3.0), 1.0)[1](1.0)[1],
    lambda: jax.jvp(jax.jit(lambda x, i: (x * 2, i + 1)), (1.0, 4), (1.0, np.zeros((), f0)))[0][1],
    lambda: jax.grad(lambda x, i: x * i, allow_int=True, argnums=1)(1.0, 3),
    lambda: jnp.zeros((), f0),
    lambda: jnp.zeros((2, 3), f0),
    lambda: jnp.ones(2, f0),
    lambda: jnp.zeros_like(jnp.arange(3), dtype=f0),
    lambda: jnp.full((2,), 0, f0),
    lambda: jnp.empty((2,), f0),
    lambda: jax.lax.full((2,), 0, f0),
    lambda: jax.jit(lambda: jnp.zeros((2,), f0))(),
]
result = []
for case in cases:
    try:
        result.append(kind(case()))
    except Exception as e:
        result.append(("error", type(e).__name__))
"""


@requires_jax
def test_zero_results_have_jax_types():
    # zeros a caller receives are Arrays of the right weak type (not NumPy constants), float0
    # values are NumPy arrays of float0, and creation functions accept float0 as JAX's do
    expected = run_jax(ZERO_RESULTS)
    scope = {"jax": jax, "jnp": jax.numpy, "np": np}
    exec(ZERO_RESULTS, scope)
    assert scope["result"] == expected
