"""lax.pow with an integer exponent array, as JAX allows: values, gradients and lowering."""

import re

import numpy as np
import pytest
from jaxref import requires_jax, run_jax

import laminax as jax
from laminax import lax

X = np.array([0.0, 0.5, 2.0, 3.0], np.float32)
N = np.array([0, 2, 3, -1], np.int32)


def test_integer_exponent_matches_numpy_eagerly_and_under_jit():
    expected = np.power(X, N.astype(np.float32))
    np.testing.assert_allclose(np.asarray(lax.pow(X, N)), expected, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(lax.pow)(X, N)), expected, rtol=1e-6)


def test_exponent_of_another_float_dtype_is_a_type_error():
    with pytest.raises(TypeError, match="lax.pow got a float32 base and a float16 exponent"):
        lax.pow(X, N.astype(np.float16))


@requires_jax
def test_values_gradients_and_lowering_match_jax():
    program = "lambda x, n: jnp.sum(lax.pow(x, n))"
    snippet = (
        "from jax import lax\n"
        f"f = {program}\n"
        "result = (lax.pow(x, n), jax.vmap(jax.grad(f))(x[:, None], n[:, None]),\n"
        "          jax.jit(lax.pow).lower(x, n).as_text())"
    )
    values, grads, text = run_jax(snippet, x=X, n=N)
    f = eval(program, {"jnp": jax.numpy, "lax": lax})  # the same source, run by laminax
    np.testing.assert_allclose(np.asarray(lax.pow(X, N)), values, rtol=1e-6)
    ours = jax.vmap(jax.grad(f))(X[:, None], N[:, None])
    np.testing.assert_allclose(np.asarray(ours), grads, rtol=1e-6)
    ours_text = jax.jit(lax.pow).lower(X, N).as_text()
    assert _ops(ours_text) == _ops(text) == ["stablehlo.convert", "stablehlo.power"]


def _ops(module_text: str) -> list[str]:
    return re.findall(r"stablehlo\.[a-z_]+", module_text)
