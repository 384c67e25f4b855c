"""`linearize` returns its linear function as a `tree_util.Partial` whose leaves are the
residuals, as JAX 0.10.2 does, so it can be passed to a jitted function; checked against real
JAX (values, leaf counts, jit round trip, errors)."""

import laminax
import laminax.numpy as lnp
import numpy as np
import pytest
from jaxref import JaxReferenceError, requires_jax, run_jax

CASES = {
    "scalar_sin": ("jnp.sin", "(1.0,)", "(2.0,)"),
    "two_args_dict_out": ("lambda a, b: {'s': a * b, 't': jnp.tanh(a)}",
                          "(np.float32(0.5), np.arange(3.0, dtype=np.float32))",
                          "(np.float32(1.0), np.ones(3, np.float32))"),
    "matmul_chain": ("lambda w, x: jnp.tanh(x @ w) @ w.T",
                     "(np.eye(3, dtype=np.float32) * 0.5, np.ones((2, 3), np.float32))",
                     "(np.ones((3, 3), np.float32), np.zeros((2, 3), np.float32))"),
    "linear_function_no_residuals": ("lambda x: 2.0 * x", "(np.ones(2, np.float32),)",
                                     "(np.arange(2.0, dtype=np.float32),)"),
}

SOURCE = """
y, f = jax.linearize({fun}, *{primals})
leaves = jax.tree_util.tree_leaves(f)
direct = f(*{tangents})
jitted = jax.jit(lambda g, *t: g(*t))(f, *{tangents})
result = (type(f).__name__, len(leaves),
          jax.tree_util.tree_map(lambda v: np.asarray(v).tolist(), (direct, jitted)))
"""


@requires_jax
@pytest.mark.parametrize("name", sorted(CASES))
def test_linearize_returns_a_partial_that_passes_through_jit(name):
    fun, primals, tangents = CASES[name]
    source = SOURCE.format(fun=fun, primals=primals, tangents=tangents)
    scope = {"jax": laminax, "jnp": lnp, "np": np}
    exec(source, scope)
    got, expected = scope["result"], run_jax(source)
    assert got[0] == expected[0] == "Partial"
    # residuals are leaves on both sides (JAX also keeps literals such as 2.0 as residuals)
    assert got[1] <= expected[1] and (got[1] > 0) == (name != "linear_function_no_residuals")
    for ours, theirs in zip(got[2], expected[2], strict=True):  # direct and through jit
        np.testing.assert_allclose(_flat(ours), _flat(theirs), rtol=1e-6)
    assert got[2][0] == got[2][1]


def _flat(tree):
    if isinstance(tree, dict):
        return np.concatenate([_flat(tree[k]) for k in sorted(tree)])
    if isinstance(tree, (list, tuple)) and tree and isinstance(tree[0], (list, tuple, dict)):
        return np.concatenate([_flat(t) for t in tree])
    return np.ravel(np.asarray(tree, dtype=np.float64))


@requires_jax
def test_wrong_tangent_structure_is_the_same_error_type():
    source = "y, f = jax.linearize(lambda a, b: a * b, 1.0, 2.0)\nresult = f(1.0)"
    with pytest.raises(JaxReferenceError) as info:
        run_jax(source)
    scope = {"jax": laminax, "jnp": lnp, "np": np}
    with pytest.raises(Exception) as ours:
        exec(source, scope)
    assert type(ours.value).__name__ == info.value.type_name
