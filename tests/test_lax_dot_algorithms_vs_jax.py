"""Dot algorithms (`DotAlgorithm`, `DotAlgorithmPreset`, by value or by name) as
`dot_general`'s precision, and accuracy requests (`AccuracyMode`, `Tolerance`) of the
transcendental functions, against real JAX 0.10.2: values, dtypes, printed jaxprs, the
StableHLO attributes both emit, and the presets JAX refuses on CPU."""

from __future__ import annotations

import laminax as jax
import laminax.numpy as jnp
import numpy as np
import pytest
from jaxref import requires_jax, run_jax
from laminax import lax

A = np.random.RandomState(0).randn(3, 4).astype(np.float32)
B = np.random.RandomState(1).randn(4, 2).astype(np.float32)
P = "lax.DotAlgorithmPreset"
EXPRS = [
    f"lax.dot(A, B, precision={P}.DEFAULT)", f"lax.dot(A, B, precision={P}.F32_F32_F32)",
    "lax.dot(A, B, precision='F32_F32_F32')", f"lax.dot(A, B, precision={P}.BF16_BF16_F32)",
    f"lax.dot(A, B, precision={P}.BF16_BF16_F32_X3)", f"lax.dot(A, B, precision={P}.F16_F16_F16)",
    f"lax.dot(A, B, precision={P}.F64_F64_F64)",
    f"lax.dot_general(A, B, (([1], [0]), ([], [])), precision='BF16_BF16_F32_X6')",
    f"jnp.matmul(A, B, precision={P}.F16_F16_F16)",
    f"lax.dot(A.astype(jnp.float16), B.astype(jnp.float16), precision={P}.F16_F16_F16)",
    f"jax.grad(lambda a: lax.dot(a, B, precision={P}.BF16_BF16_F32).sum())(A)",
    f"jax.vmap(lambda a: lax.dot(a, B, precision={P}.F32_F32_F32))(A)",
    "lax.exp(A, accuracy=lax.AccuracyMode.HIGHEST)",
    "lax.sin(A, accuracy=lax.Tolerance(atol=1e-5, rtol=1e-3))",
    "lax.tanh(A, accuracy=lax.AccuracyMode.DEFAULT)",
    # errors
    f"lax.dot(A, B, precision={P}.F16_F16_F32)", f"lax.dot(A, B, precision={P}.TF32_TF32_F32)",
    "lax.dot(A, B, precision=lax.DotAlgorithm(jnp.float32, jnp.float32, jnp.float32))",
    "lax.dot(A, B, precision='F99')", "lax.Tolerance()", "lax.Tolerance(atol=-1.0)",
]
_SNIPPET = """
from jax import lax
def outcome(e):
    try:
        out = jax.jit(lambda A, B: eval(e))(A, B)
        return ('ok', [np.asarray(x) for x in jax.tree_util.tree_leaves(out)])
    except Exception as err:
        return ('error', type(err).__name__, str(err))
result = [outcome(e) for e in exprs]
"""


def _outcome(expr):
    try:
        scope = dict(jax=jax, lax=lax, jnp=jnp, np=np)
        out = jax.jit(lambda A, B: eval(expr, {**scope, "A": A, "B": B}))(A, B)  # noqa: N803,S307
        return ("ok", [np.asarray(x) for x in jax.tree_util.tree_leaves(out)])
    except Exception as err:  # noqa: BLE001 (the error type is what is compared)
        return ("error", type(err).__name__, str(err))


@pytest.fixture(scope="module")
def jax_outcomes():
    return run_jax(_SNIPPET, exprs=EXPRS, A=A, B=B)


@requires_jax
@pytest.mark.parametrize("index", range(len(EXPRS)), ids=EXPRS)
def test_matches_jax(jax_outcomes, index):
    expr, want = EXPRS[index], jax_outcomes[index]
    got = _outcome(expr)
    assert got[0] == want[0], (expr, got, want)
    if want[0] == "error":
        assert got[1] == want[1], (expr, got, want)
        return
    for g, w in zip(got[1], want[1], strict=True):
        assert (g.dtype, g.shape) == (w.dtype, w.shape), expr
        np.testing.assert_array_equal(g, w, err_msg=expr)


@requires_jax
@pytest.mark.parametrize("precision", ["F32_F32_F32", "BF16_BF16_F32_X3", "F64_F64_F64",
                                       "F16_F16_F16", "DEFAULT"])
def test_jaxpr_and_stablehlo_match_jax(precision):
    source = "lambda a, b: lax.dot(a, b, precision=lax.DotAlgorithmPreset[p])"
    want_jaxpr, want_hlo = run_jax(
        f"from jax import lax\nf = {source}\n"
        "result = [str(jax.make_jaxpr(f)(A, B)), jax.jit(f).lower(A, B).as_text()]",
        p=precision, A=A, B=B)
    f = eval(source, dict(lax=lax, p=precision))  # noqa: S307
    assert str(jax.make_jaxpr(f)(A, B)) == want_jaxpr

    def body(text):  # the operations, without the module's and function's names
        return [line.strip() for line in text.splitlines() if "stablehlo." in line]

    assert body(jax.jit(f).lower(A, B).as_text()) == body(want_hlo)


@requires_jax
def test_accuracy_attributes_match_jax():
    source = ("lambda x: (lax.exp(x, accuracy=lax.AccuracyMode.HIGHEST), "
              "lax.cos(x, accuracy=lax.Tolerance(atol=1e-5, ulps=2)), "
              "lax.exp2(x, accuracy=lax.AccuracyMode.HIGHEST), "
              "lax.logistic(x, accuracy=lax.AccuracyMode.HIGHEST))")
    want = run_jax(f"from jax import lax\nresult = jax.jit({source}).lower(A).as_text()", A=A)
    got = jax.jit(eval(source, dict(lax=lax))).lower(A).as_text()  # noqa: S307
    def requests(text):  # the op and its result_accuracy (SSA names differ)
        return [(line.split("=", 1)[1].split()[0], line[line.index("{"):line.index("}") + 1])
                for line in text.splitlines() if "result_accuracy" in line]

    accuracy, expected = requests(got), requests(want)
    assert accuracy == expected and len(accuracy) == 3
