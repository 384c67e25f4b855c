"""vmap of a jitted call batches only the outputs that depend on batched inputs, as JAX does:
`jacfwd`/`hessian` of functions that call `jit` (their primal outputs must stay unbatched),
checked against real JAX 0.10.2."""

import laminax
import laminax.numpy as lnp
import numpy as np
import pytest
from jaxref import requires_jax, run_jax

PROGRAMS = {
    "hessian_of_jitted_loss": """
def loss(x):
    return jnp.sum(jax.jit(lambda a, b: jnp.tanh(a) ** 2 * b)(x, jnp.arange(4.0)))
result = np.asarray(jax.hessian(loss)(jnp.linspace(-1.0, 1.0, 4)))
""",
    "jacfwd_of_jit_with_unbatched_output": """
f = jax.jit(lambda a, c: (a * c, c + 1.0))
result = np.asarray(jax.jacfwd(lambda x: f(x, 3.0)[0] * f(x, 2.0)[1])(jnp.ones(3)))
""",
    "vmap_out_axes_none_of_jit": """
g = jax.jit(lambda a, c: (a * 2, c * 3))
result = [np.asarray(v) for v in jax.vmap(lambda a: g(a, 5.0), out_axes=(0, None))(jnp.arange(3.0))]
""",
}


@requires_jax
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_unbatched_outputs_of_jit_stay_unbatched(name):
    scope = {"jax": laminax, "jnp": lnp, "np": np}
    exec(PROGRAMS[name], scope)
    expected = run_jax(PROGRAMS[name])
    got = scope["result"]
    if isinstance(expected, list):
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-6)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-6)
