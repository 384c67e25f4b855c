"""jnp.matmul stages the same equations as JAX: batch dims that only one operand has stay free
dims of dot_general instead of broadcasting the other operand (a 3-d by 2-d product must not
copy the weight matrix once per batch element)."""

import numpy as np
import pytest
from jaxref import requires_jax, run_jax

import laminax_core.numpy as jnp
from laminax_core import make_jaxpr

SHAPES = [
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),
    ((7, 2, 3, 4), (2, 4, 5)),
    ((1, 3, 4), (2, 4, 5)),
    ((4,), (2, 4, 5)),
    ((2, 3, 4), (4,)),
    ((2, 1, 3, 4), (1, 5, 4, 6)),
]


@pytest.mark.parametrize(("a_shape", "b_shape"), SHAPES)
def test_matmul_matches_numpy(a_shape, b_shape):
    rng = np.random.default_rng(0)
    a = rng.normal(size=a_shape).astype(np.float32)
    b = rng.normal(size=b_shape).astype(np.float32)
    np.testing.assert_allclose(np.asarray(jnp.matmul(a, b)), a @ b, rtol=1e-5, atol=1e-5)


@requires_jax
@pytest.mark.parametrize(("a_shape", "b_shape"), SHAPES)
def test_matmul_stages_jaxs_equations(a_shape, b_shape):
    a, b = np.ones(a_shape, np.float32), np.ones(b_shape, np.float32)
    expected = run_jax("result = str(jax.make_jaxpr(jnp.matmul)(a, b))", a=a, b=b)
    assert str(make_jaxpr(jnp.matmul)(a, b)) == expected
