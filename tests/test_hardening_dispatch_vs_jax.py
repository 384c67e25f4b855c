"""Issue 12, dispatch side: a jitted function whose captured Array is deleted after the first
call keeps working (as JAX's does); a new signature then needs the deleted Array and raises
JAX's RuntimeError. Compared with real JAX for several shapes, dtypes and ways to call."""

import numpy as np
import pytest
from jaxref import requires_jax, run_jax

import laminax

SOURCE = """
y = jnp.arange({n}, dtype='{dtype}') + 1
f = jax.jit(lambda x: {body})
x = jnp.ones({n}, '{dtype}')
first = f(x)
y.delete()
again = f(x)
try:
    f(jnp.ones({n}, 'int8'))
    retrace = "ok"
except Exception as err:
    retrace = type(err).__name__
result = (np.asarray(first), np.asarray(again), retrace)
"""

CASES = [(n, dtype, body) for n in (1, 7, 1000) for dtype in ("float32", "int32")
         for body in ("x + y", "(x * y).sum()", "jnp.concatenate([x, y])[::2]")]


@requires_jax
@pytest.mark.parametrize("n, dtype, body", CASES)
def test_deleted_captured_array_keeps_the_compiled_function_working(n, dtype, body):
    source = SOURCE.format(n=n, dtype=dtype, body=body)
    expected = run_jax(f"{source}")
    scope = {"jax": laminax, "jnp": laminax.numpy, "np": np}
    exec(source, scope)
    first, again, retrace = scope["result"]
    np.testing.assert_array_equal(first, expected[0])
    np.testing.assert_array_equal(again, expected[1])
    assert retrace == expected[2]


def _trivial_exprs():
    funs = ["lambda x: x", "lambda x: (x, x)", "lambda x: (x, 2.0)", "lambda x: {'a': x, 'b': 3}",
            "lambda x: [x, np.float32(1)]", "lambda x: ()", "lambda x: None"]
    args = ["jnp.ones(3)", "1.0", "2", "np.arange(4)", "np.float64(2.5)", "jnp.int8(3)",
            "np.zeros((2, 0))", "True", "jnp.array([1, 2], 'uint8')"]
    exprs = [f"jax.jit({f})({a})" for f in funs for a in args]
    exprs += [f"jax.jit(lambda x, y: (y, x))({a}, {b})" for a in args for b in args[:3]]
    exprs += ["jax.jit(lambda: 1.5)()", "jax.jit(lambda: (1, True))()",
              "jax.jit(lambda x: x, static_argnums=0)(3)"]
    return exprs


@requires_jax
def test_trivial_jitted_functions_give_jax_values_and_dtypes():
    from hardening_table import check_table

    counts = check_table(_trivial_exprs())
    assert counts["ok"] > 80, counts
