"""custom_gradient and closure_convert against real JAX 0.10.2: the same programs, run with
laminax (under jit on XLA) and with JAX, give the same values and gradients."""

import laminax as lx
import numpy as np
import pytest
from jaxref import requires_jax, run_jax

# Each program uses `api` (laminax or jax) and `jnp`, and leaves `result`.
PROGRAMS = {
    "fake_gradient": """
@api.custom_gradient
def f(x):
    return x * x, lambda g: (g * 10.0,)
result = [api.jit(f)(x), api.jit(api.grad(f))(x), api.vmap(api.grad(f))(xs)]
""",
    "clipped_gradient": """
@api.custom_gradient
def clip_grad(x):
    return x, lambda g: (jnp.clip(g, -0.5, 0.5),)
loss = lambda w: jnp.sum(clip_grad(w * xs) ** 2)
result = [api.grad(loss)(x), api.jit(api.grad(loss))(x)]
""",
    "two_arguments_pytree_out": """
@api.custom_gradient
def g(x, y):
    out = {"s": x * y, "d": x - y}
    return out, lambda ct: (ct["s"] * y + ct["d"] * 7.0, ct["s"] * x - ct["d"])
h = lambda x, y: g(x, y)["s"] * 2.0 + g(x, y)["d"]
result = list(api.jit(api.grad(h, argnums=(0, 1)))(x, x + 1.0))
""",
    "second_order_through_rule": """
@api.custom_gradient
def cube(x):
    return x ** 3, lambda g: (g * 3.0 * x ** 2,)
result = [api.grad(api.grad(cube))(x), api.jit(api.grad(api.grad(cube)))(x)]
""",
    "closure_convert_under_grad": """
def outer(a):
    fun, consts = api.closure_convert(lambda v: jnp.sin(v * a), x)
    return fun(x, *consts) + len(consts)
result = [api.grad(outer)(x), api.jit(outer)(x)]
""",
}


def _laminax(src: str, **inputs):
    scope = {"api": lx, "jnp": lx.numpy, **inputs}
    exec(src, scope)
    return [np.asarray(r) for r in scope["result"]]


@requires_jax
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_gradients_match_jax(name):
    inputs = {"x": np.float32(0.7), "xs": np.linspace(-2, 2, 5).astype(np.float32)}
    expected = run_jax("api = jax\n" + PROGRAMS[name], **inputs)
    actual = _laminax(PROGRAMS[name], **inputs)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        np.testing.assert_allclose(a, np.asarray(e), rtol=1e-6, atol=1e-6)
