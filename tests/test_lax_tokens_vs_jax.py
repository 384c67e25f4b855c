"""`lax.create_token` and `lax.after_all` against real JAX 0.10.2: the printed jaxprs (`Tok`),
eager tokens, tokens in and out of jit next to data, the lowered `stablehlo.create_token` /
`stablehlo.after_all`, and the errors."""

from __future__ import annotations

import laminax as jax
import numpy as np
import pytest
from jaxref import requires_jax, run_jax
from laminax import lax
from laminax_dispatch.internal import lower_jaxpr

PROGRAMS = {
    "merge": "lambda x: lax.after_all(lax.create_token(), lax.create_token())",
    "pass": "lambda t: lax.after_all(t)",
    "mixed": "lambda t, x: (lax.after_all(t, lax.create_token()), x * 2)",
}


def _args(name, token):
    return {"merge": (1.0,), "pass": (token,), "mixed": (token, np.float32(3))}[name]


@requires_jax
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_jaxprs_and_jit_outputs_match_jax(name):
    source = PROGRAMS[name]
    want_text, want_kinds, want_data = run_jax(
        "from jax import lax\n"
        f"f = {source}\n"
        "t = lax.create_token()\n"
        f"args = {{'merge': (1.0,), 'pass': (t,), 'mixed': (t, np.float32(3))}}[{name!r}]\n"
        "out = jax.tree_util.tree_leaves(jax.jit(f)(*args))\n"
        "result = (str(jax.make_jaxpr(f)(*args)), [type(o).__name__ for o in out],\n"
        "          [np.asarray(o) for o in out if type(o).__name__ != 'Token'])")
    fn = eval(source, dict(lax=lax))  # noqa: S307
    args = _args(name, lax.create_token())
    assert str(jax.make_jaxpr(fn)(*args)) == want_text
    out = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
    kinds = ["Token" if isinstance(o, type(lax.create_token())) else "ArrayImpl" for o in out]
    assert kinds == want_kinds
    data = [np.asarray(o) for o, k in zip(out, kinds, strict=True) if k != "Token"]
    for g, w in zip(data, want_data, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


@requires_jax
def test_lowered_token_ops_match_jax():
    source = "lambda: lax.after_all(lax.create_token(), lax.create_token())"
    want = run_jax(f"from jax import lax\nresult = jax.jit({source}).lower().as_text()")
    got = str(lower_jaxpr(jax.make_jaxpr(eval(source, dict(lax=lax)))(), name="jit_f").module)  # noqa: S307

    def ops(text):
        return [line.strip() for line in text.splitlines()
                if "stablehlo." in line or "!stablehlo.token" in line and "func" in line]

    assert ops(got) == ops(want)


@requires_jax
def test_eager_tokens_and_errors_match_jax():
    want = run_jax(
        "from jax import lax\n"
        "t = lax.after_all(lax.create_token(), lax.create_token(None))\n"
        "try:\n"
        "    lax.after_all(t, 1.0)\n"
        "except TypeError as err:\n"
        "    message = str(err)\n"
        "result = (type(t).__name__, type(lax.after_all()).__name__, message)")
    token = lax.after_all(lax.create_token(), lax.create_token(None))
    with pytest.raises(TypeError) as info:
        lax.after_all(token, 1.0)
    assert (type(token).__name__, type(lax.after_all()).__name__, str(info.value)) == want
