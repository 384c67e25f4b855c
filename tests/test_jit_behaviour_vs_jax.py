"""laminax_dispatch.jit against jax.jit (0.10.2): retracing, error messages, AOT stages, the
StableHLO emitted, and the numbers of a small training step."""

import warnings

import numpy as np
import pytest
from jaxref import JaxReferenceError, requires_jax, run_jax
from laminax_core import ShapeDtypeStruct, grad, lax
from laminax_dispatch import jit

F32 = np.float32

# Calls whose retracing jax.jit and laminax must agree on (argument, static value).
CALLS = [
    (np.ones(3, F32), 1),
    (np.zeros(3, F32), 1),
    (np.ones(4, F32), 1),
    (np.ones(3, np.int32), 1),
    (np.ones(3, F32), 2),
    (1.0, 1),
    (np.float32(1.0), 1),
    (2.0, 1),
    (True, 1),
]


@requires_jax
def test_retrace_counts_match_jax():
    expected = run_jax(
        """
traces = []
def f(x, n):
    traces.append(1)
    return x * n
g = jax.jit(f, static_argnums=1)
for x, n in calls:
    g(x, n)
result = len(traces)
""",
        calls=CALLS,
    )
    traces = []

    def f(x, n):
        traces.append(1)
        return x * n

    g = jit(f, static_argnums=1)
    for x, n in CALLS:
        g(x, n)
    assert len(traces) == expected


@requires_jax
def test_unhashable_static_argument_message_matches_jax():
    with pytest.raises(JaxReferenceError) as jax_error:
        run_jax("jax.jit(lambda x, y: x, static_argnums=1)(1, [1])")
    with pytest.raises(ValueError) as ours:
        jit(lambda x, y: x, static_argnums=1)(1, [1])
    assert jax_error.value.type_name == "ValueError"
    first = jax_error.value.message.split(". ")[0]
    assert str(ours.value).startswith(first)


@requires_jax
def test_compiled_signature_mismatch_message_matches_jax():
    with pytest.raises(JaxReferenceError) as jax_error:
        run_jax("jax.jit(lambda x: x * 2).lower(1.0).compile()(np.ones(3, np.float32))")
    with pytest.raises(TypeError) as ours:
        jit(lambda x: x * 2).lower(1.0).compile()(np.ones(3, F32))
    line = "Argument 'x' compiled with float32[] and called with float32[3]"
    assert line in jax_error.value.message and line in str(ours.value)


@requires_jax
def test_unusable_donation_warning_matches_jax():
    expected = run_jax("""
import warnings
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    jax.jit(lambda x: x.sum(), donate_argnums=0)(jnp.ones(3))
result = str(w[0].message).splitlines()[0]
""")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        jit(lambda x: x.sum(), donate_argnums=0)(np.ones(3, F32) + 0)
    assert str(caught[0].message).splitlines()[0] == expected


@requires_jax
def test_eval_shape_and_out_info_match_jax():
    expected = run_jax("""
f = jax.jit(lambda x, y: {"a": x * 2, "b": (x * y, y > 0)})
s = f.eval_shape(1.0, np.ones((2, 2), np.float32))
result = [(l.shape, str(l.dtype), l.weak_type) for l in jax.tree_util.tree_leaves(s)]
""")
    shapes = jit(lambda x, y: {"a": x * 2, "b": (x * y, y > 0)}).eval_shape(
        1.0, np.ones((2, 2), F32)
    )
    leaves = [shapes["a"], *shapes["b"]]
    assert [(s.shape, s.dtype.name, s.weak_type) for s in leaves] == [tuple(e) for e in expected]
    assert isinstance(shapes["a"], ShapeDtypeStruct)


def _ops(text: str) -> list[str]:
    ops = []
    for line in text.splitlines():
        if " = " in line and ("stablehlo." in line or "chlo." in line or "call @" in line):
            rhs = line.split(" = ", 1)[1].strip()
            ops.append(rhs.split()[0].strip('"').split("(")[0])
    return ops


PROGRAMS = {
    "mlp_layer": "lambda w, x: jnp.tanh(x @ w).sum()",
    "softplus": "lambda w, x: lax.log1p(lax.exp(-lax.abs(x))) + lax.max(x, 0.0)",
    "select": "lambda w, x: lax.select_n(x > 0, x, x * w[0, 0])",
    "reductions": "lambda w, x: (lax.reduce_max(x, (0,)), lax.argmax(x, 0, np.int32))",
}
LAMINAX = {
    "mlp_layer": lambda w, x: lax.tanh(x @ w).sum(),
    "softplus": lambda w, x: lax.log1p(lax.exp(-lax.abs(x))) + lax.max(x, 0.0),
    "select": lambda w, x: lax.select_n(x > 0, x, x * w[0, 0]),
    "reductions": lambda w, x: (lax.reduce_max(x, (0,)), lax.argmax(x, 0, np.int32)),
}


@requires_jax
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_stablehlo_ops_match_jax(name):
    w, x = np.ones((3, 3), F32), np.ones((4, 3), F32)
    expected = run_jax(
        f"""
from jax import lax
result = jax.jit({PROGRAMS[name]}).lower(w, x).as_text()
""",
        w=w,
        x=x,
    )
    ours = jit(LAMINAX[name]).lower(w, x).as_text()
    jax_ops = [op for op in _ops(expected) if op != "call"]
    assert [op for op in _ops(ours) if op != "call"] == jax_ops


@requires_jax
def test_training_step_numbers_match_jax():
    rng = np.random.RandomState(0)
    params = [
        rng.standard_normal((8, 16)).astype(F32) * 0.3,
        rng.standard_normal((16, 3)).astype(F32) * 0.3,
    ]
    x = rng.standard_normal((32, 8)).astype(F32)
    y = rng.randint(0, 3, size=32).astype(np.int32)
    expected = run_jax(
        """
def loss(params, x, y):
    h = jnp.tanh(x @ params[0])
    logits = h @ params[1]
    logits = logits - logits.max(axis=1, keepdims=True)
    logp = logits - jnp.log(jnp.exp(logits).sum(axis=1, keepdims=True))
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))
step = jax.jit(lambda p, x, y: [w - 0.1 * g for w, g in zip(p, jax.grad(loss)(p, x, y))])
p = params
for _ in range(5):
    p = step(p, x, y)
result = [np.asarray(w) for w in p] + [np.asarray(loss(p, x, y))]
""",
        params=params,
        x=x,
        y=y,
    )

    def loss(params, x, y):
        h = lax.tanh(x @ params[0])
        logits = h @ params[1]
        logits = logits - lax.broadcast_in_dim(lax.reduce_max(logits, (1,)), (32, 3), (0,))
        norm = lax.log(lax.reduce_sum(lax.exp(logits), (1,)))
        logp = logits - lax.broadcast_in_dim(norm, (32, 3), (0,))
        picked = (logp * (y[:, None] == np.arange(3, dtype=np.int32)[None, :])).sum(axis=1)
        return -(picked.sum() / 32.0)

    step = jit(lambda p, x, y: [w - 0.1 * g for w, g in zip(p, grad(loss)(p, x, y), strict=True)])
    p = params
    for _ in range(5):
        p = step(p, x, y)
    for ours, theirs in zip([*p, loss(p, x, y)], expected, strict=True):
        np.testing.assert_allclose(np.asarray(ours), theirs, rtol=2e-5, atol=2e-6)
