"""lax's XLA generators (`rng_bit_generator`, `rng_uniform`), `ragged_dot` /
`ragged_dot_general`, `stage` and `shape_as_value` against real JAX 0.10.2.

rng_bit_generator runs XLA's RngBitGenerator in both, so its bits and new keys are compared
exactly for every algorithm and dtype; rng_uniform draws from XLA's stateful generator, so only
its shapes, dtypes, range and jaxpr are compared. ragged_dot is compared in its three modes,
with multi-dimensional group sizes, under jit, and through grad and jvp; under vmap (which JAX
0.10.2 refuses: "ragged_dot vmap over any dim but 0 - NYI") against a Python loop.
"""

from __future__ import annotations

import laminax as jax
import laminax.numpy as jnp
import numpy as np
import pytest
from jaxref import requires_jax, run_jax
from laminax import lax

KEY = np.arange(4, dtype=np.uint32) * 7
R = np.random.RandomState(0)
L = R.randn(6, 3).astype(np.float32)
RG = R.randn(2, 3, 4).astype(np.float32)
SIZES = np.array([2, 3], np.int32)
LB = R.randn(2, 6, 3).astype(np.float32)
RB = R.randn(2, 2, 3, 4).astype(np.float32)
R2 = R.randn(6, 4).astype(np.float32)
SIZES_B = np.array([[1, 2], [3, 3]], np.int32)
INPUTS = dict(KEY=KEY, L=L, RG=RG, SIZES=SIZES, LB=LB, RB=RB, R2=R2, SIZES_B=SIZES_B)

DN = "lax.RaggedDotDimensionNumbers"
EXPRS = [
    "lax.rng_bit_generator(KEY, (2, 3))",
    "lax.rng_bit_generator(KEY, (5,), np.uint8, lax.RandomAlgorithm.RNG_THREE_FRY)",
    "lax.rng_bit_generator(KEY, (3, 2), np.uint16, lax.RandomAlgorithm.RNG_PHILOX)",
    "lax.rng_bit_generator(KEY, (4,), algorithm=lax.RandomAlgorithm.RNG_DEFAULT)",
    "jax.jit(lambda k: lax.rng_bit_generator(k, (7,))[1])(KEY)",
    "lax.rng_bit_generator(lax.rng_bit_generator(KEY, (3,))[0], (3,))",
    "lax.ragged_dot(L, RG, SIZES)",
    "jax.jit(lax.ragged_dot)(L, RG, SIZES)",
    "lax.ragged_dot(L, RG, np.array([0, 6], np.int32))",
    "lax.ragged_dot(L, RG, SIZES, preferred_element_type=np.float32)",
    f"lax.ragged_dot_general(L, R2, SIZES, {DN}((((0,), (0,)), ((), ())), (0,), ()))",
    f"lax.ragged_dot_general(LB, RB, SIZES, {DN}((((2,), (2,)), ((0,), (1,))), (1,), (0,)))",
    f"lax.ragged_dot_general(LB, RB, SIZES_B, {DN}((((2,), (2,)), ((0,), (1,))), (1,), (0,)))",
    f"lax.ragged_dot_general(LB, RB[0], SIZES, {DN}((((2,), (1,)), ((0,), (0,))), (0,), ()))",
    "jax.grad(lambda l, r: (lax.ragged_dot(l, r, SIZES) ** 2).sum(), (0, 1))(L, RG)",
    "jax.jvp(lambda l, r: lax.ragged_dot(l, r, SIZES), (L, RG), (L, RG))",
    "lax.stage(1.0)", "lax.stage(np.float64(2))", "jax.grad(lambda x: lax.stage(x) * 2)(1.0)",
    "jax.vmap(lax.stage)(L)", "lax.shape_as_value((2, 3))", "lax.shape_as_value(())",
    # errors
    "lax.stage('a')",
    "lax.rng_bit_generator(KEY, (2,), np.int32)",
    "lax.rng_uniform(np.float32(0), np.int32(1), (2,))",
    "lax.rng_uniform(np.zeros(2, np.float32), np.float32(1), (2,))",
    "jax.grad(lambda a: lax.rng_uniform(a, 1.0, (2,)).sum())(0.0)",
    "jax.vmap(lambda a: lax.rng_uniform(a, 1.0, (2,)))(np.zeros(3, np.float32))",
]
_SNIPPET = """
from jax import lax
def outcome(e):
    try:
        return ('ok', [np.asarray(x) for x in jax.tree_util.tree_leaves(eval(e))])
    except Exception as err:
        return ('error', type(err).__name__, str(err))
result = [outcome(e) for e in exprs]
"""


@pytest.fixture(scope="module")
def jax_outcomes():
    return run_jax(_SNIPPET, exprs=EXPRS, **INPUTS)


def _outcome(expr):
    try:
        leaves = jax.tree_util.tree_leaves(eval(expr, dict(jax=jax, lax=lax, jnp=jnp, np=np,  # noqa: S307
                                                           **INPUTS)))
        return ("ok", [np.asarray(x) for x in leaves])
    except Exception as err:  # noqa: BLE001 (the error type is what is compared)
        return ("error", type(err).__name__, str(err))


@requires_jax
@pytest.mark.parametrize("index", range(len(EXPRS)), ids=EXPRS)
def test_matches_jax(jax_outcomes, index):
    expr, want = EXPRS[index], jax_outcomes[index]
    got = _outcome(expr)
    assert got[0] == want[0], (expr, got, want)
    if want[0] == "error":
        assert got[1] == want[1], (expr, got, want)
        return
    exact = "rng" in expr or "grad" not in expr and "jvp" not in expr
    for g, w in zip(got[1], want[1], strict=True):
        assert (g.dtype, g.shape) == (w.dtype, w.shape), expr
        np.testing.assert_allclose(g, w, rtol=0 if exact else 1e-5, atol=0 if exact else 1e-5,
                                   err_msg=expr)


@requires_jax
def test_rng_uniform_shapes_range_and_jaxpr_match_jax():
    source = ("result = [str(jax.make_jaxpr(lambda a: lax.rng_uniform(a, 1.0, (2,)))(0.0)), "
              "lax.rng_uniform(np.float32(2), np.float32(3), (500,)), "
              "lax.rng_uniform(np.int32(-3), np.int32(4), (2, 250))]")
    want_text, want_float, want_int = run_jax("from jax import lax\n" + source)
    assert str(jax.make_jaxpr(lambda a: lax.rng_uniform(a, 1.0, (2,)))(0.0)) == want_text
    for x, want, (low, high) in ((jax.jit(lambda: lax.rng_uniform(np.float32(2), np.float32(3),
                                                                    (500,)))(), want_float, (2, 3)),
                                 (lax.rng_uniform(np.int32(-3), np.int32(4), (2, 250)), want_int,
                                  (-3, 4))):
        x = np.asarray(x)
        assert (x.dtype, x.shape) == (want.dtype, want.shape)
        assert low <= x.min() and x.max() < high and len(np.unique(x)) > 5


@requires_jax
def test_staged_constants_fold_as_in_jax():
    source = "lambda x: (lax.stage(1.0), lax.stage(x), lax.stage(np.ones(2, np.int32)))"
    want = run_jax(f"from jax import lax\nresult = str(jax.make_jaxpr({source})(2.0))")
    assert str(jax.make_jaxpr(eval(source, dict(lax=lax, np=np)))(2.0)) == want  # noqa: S307


def test_ragged_dot_where_jax_has_no_rule():
    """vmap (JAX: "NYI") against a Python loop; the gradient of the ragged-contracting mode
    (JAX: "Unimplemented grad_y_dims") against finite differences."""
    batched = jax.vmap(lambda l, s: lax.ragged_dot(l, RG, s))(LB, SIZES_B)
    loop = [lax.ragged_dot(LB[i], RG, SIZES_B[i]) for i in range(2)]
    np.testing.assert_allclose(batched, np.stack(loop), rtol=1e-6)
    from laminax.test_util import check_grads

    numbers = lax.RaggedDotDimensionNumbers((((0,), (0,)), ((), ())), (0,), ())
    check_grads(lambda l, r: lax.ragged_dot_general(l, r, SIZES, numbers), (L, R2), order=2,
                modes=["rev"], atol=5e-2, rtol=5e-2)
    keys = jax.vmap(lambda k: lax.rng_bit_generator(k, (3,)))(np.stack([KEY, KEY + 1]))
    for i, key in enumerate((KEY, KEY + 1)):
        one = lax.rng_bit_generator(key, (3,))
        np.testing.assert_array_equal(keys[0][i], one[0])
        np.testing.assert_array_equal(keys[1][i], one[1])
