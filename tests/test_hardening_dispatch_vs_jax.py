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
