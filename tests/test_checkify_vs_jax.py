"""`checkify` against real JAX 0.10.2: the same programs run under both, with many inputs; the
error messages (`Error.get()`), the exception types and the outputs must agree.

Each program is a source defining `run(x)` returning `(message or None, output)`; it sees
`jax`, `jnp`, `lax`, `np` and `checkify` (laminax's or JAX's).
"""

import numpy as np
import pytest
from jaxref import requires_jax, run_jax

import laminax
import laminax.numpy as lnp
from laminax import lax as llax
from laminax.experimental import checkify as lcheckify

PROGRAMS = {
    "eager": """
def f(x):
    checkify.check(x > 0, "x must be positive, got {}", x)
    return x + 1
def run(x):
    err, out = checkify.checkify(f)(jnp.float32(x))
    return err.get(), out
""",
    "jit": """
def f(x):
    checkify.check(x < 1, "x={x} too big", x=x)
    return jnp.sin(x)
def run(x):
    err, out = jax.jit(checkify.checkify(f))(jnp.float32(x))
    return err.get(), out
""",
    "first_failure_wins": """
def f(x):
    checkify.check(x > -1, "first {}", x)
    y = x * 2
    checkify.check(y > -1, "second {}", y)
    checkify.check(y < 2, "third {} {}", x, y)
    return y
def run(x):
    err, out = checkify.checkify(f)(jnp.float32(x))
    return err.get(), out
""",
    "vmap": """
def f(x):
    checkify.check(x > 0, "neg {}", x)
    return x * 3
def run(x):
    err, out = jax.vmap(checkify.checkify(f))(jnp.array([x, -x, x + 1, 2.0], jnp.float32))
    return err.get(), out
""",
    "vmap_jit": """
def f(x):
    checkify.check(jnp.all(x > 0), "row {}", x)
    return x.sum()
def run(x):
    xs = jnp.array([[x, 1.0], [1.0, 2.0], [-x, x]], jnp.float32)
    err, out = jax.jit(jax.vmap(checkify.checkify(f)))(xs)
    return err.get(), out
""",
    "scan": """
def f(xs):
    def body(c, x):
        checkify.check(c < 4.0, "carry {} at x={}", c, x)
        return c + x, c * x
    return lax.scan(body, jnp.float32(0), xs)
def run(x):
    err, out = checkify.checkify(f)(jnp.arange(5, dtype=jnp.float32) * x)
    return err.get(), out
""",
    "while": """
def f(n):
    def body(c):
        i, acc = c
        checkify.check(acc < 10, "acc {} at i {}", acc, i)
        return i + 1, acc + i
    return lax.while_loop(lambda c: c[0] < n, body, (jnp.int32(0), jnp.int32(0)))
def run(x):
    err, out = jax.jit(checkify.checkify(f))(jnp.int32(abs(x) * 2))
    return err.get(), out
""",
    "cond": """
def f(x):
    def neg(x):
        checkify.check(x > -2, "too negative {}", x)
        return -x
    def pos(x):
        checkify.check(x < 2, "too positive {}", x)
        return x
    return lax.cond(x > 0, pos, neg, x)
def run(x):
    err, out = checkify.checkify(f)(jnp.float32(x))
    return err.get(), out
""",
    "nested_jit": """
@jax.jit
def g(x):
    checkify.check(x != 0, "zero")
    return 1 / x
def run(x):
    err, out = checkify.checkify(lambda x: g(x) + g(x - 1))(jnp.float32(x))
    return err.get(), out
""",
    "grad": """
def f(x):
    checkify.check(x > 0, "grad at {}", x)
    return jnp.sin(x) * x
def run(x):
    err, out = checkify.checkify(jax.grad(f))(jnp.float32(x))
    return err.get(), out
""",
    "nan_checks": """
def run(x):
    err, out = checkify.checkify(lambda x: jnp.log(x) + 1, errors=checkify.nan_checks)(jnp.float32(x))
    return err.get(), out
""",
    "float_checks_jit": """
def run(x):
    f = lambda x: jnp.sqrt(x) / (x - 1)
    err, out = jax.jit(checkify.checkify(f, errors=checkify.float_checks))(jnp.float32(x))
    return err.get(), out
""",
    "div_checks": """
def run(x):
    f = lambda x: 7 // x
    err, out = checkify.checkify(f, errors=checkify.div_checks)(jnp.int32(x))
    return err.get(), out
""",
    "index_dynamic_slice": """
def run(x):
    f = lambda v, i: (v[i], lax.dynamic_slice(v, (i,), (2,)))
    err, out = jax.jit(checkify.checkify(f, errors=checkify.index_checks))(
        jnp.arange(4.0), jnp.int32(int(x * 2)))
    return err.get(), out
""",
    "index_gather": """
def run(x):
    f = lambda v, i: v[jnp.array([0, 1]) + i]
    err, out = checkify.checkify(f, errors=checkify.all_checks)(jnp.arange(4.0), jnp.int32(int(x * 2)))
    return err.get(), out
""",
    "index_dynamic_update_slice": """
def run(x):
    f = lambda v, i: lax.dynamic_update_slice(v, jnp.ones((2, 1)), (i, jnp.int32(1)))
    err, out = checkify.checkify(f, errors=checkify.index_checks)(
        jnp.zeros((3, 2)), jnp.int32(int(x)))
    return err.get(), out
""",
    "pytree_format_args": """
def run(x):
    f = lambda t: checkify.check(t["b"] > 0, "tree {} / {b}", t, b=t["b"])
    tree = {"a": jnp.float32(0), "b": jnp.float32(x)}
    err, _ = checkify.checkify(f)(tree)
    err2, _ = jax.vmap(checkify.checkify(f))({"a": jnp.zeros(2), "b": jnp.array([x, -x])})
    return err.get(), err2.get()
""",
    "throw_mapped_error": """
def run(x):
    f = checkify.checkify(lambda v: checkify.check(v > 0, "mapped {}", v))
    err, _ = jax.vmap(f)(jnp.array([x, x - 1, x - 2, 1.0], jnp.float32))
    try:
        err.throw()
        return err.get(), None
    except Exception as e:
        return err.get(), type(e).__name__ + ": " + str(e)
""",
    "check_error_refunctionalized": """
def inner(x):
    checkify.check(x > 0, "inner {}", x)
    return x * 2
def outer(x):
    err, y = checkify.checkify(inner)(x)
    checkify.check_error(err)
    checkify.check(y < 3, "outer {}", y)
    return y
def run(x):
    err, out = jax.jit(checkify.checkify(outer))(jnp.float32(x))
    err2, out2 = checkify.checkify(jax.vmap(outer))(jnp.array([x, -x], jnp.float32))
    return err.get(), out, err2.get(), out2
""",
    "eager_debug_check_is_dropped": """
def run(x):
    checkify.debug_check(jnp.float32(x) > 0, "never raised")
    return None, jnp.float32(x)
""",
    "grad_jvp_checkpoint_custom_jvp": """
def f(x):
    checkify.check(x > 0, "pos {}", x)
    return jnp.sin(x) * x
@jax.custom_jvp
def h(x):
    checkify.check(x > 0, "cj {}", x)
    return x * 2
h.defjvp(lambda p, t: (h(p[0]), t[0] * 2))
def run(x):
    x = jnp.float32(x)
    g = jax.grad(lambda x: checkify.checkify(f)(x)[1])(x)
    err, (v, t) = checkify.checkify(lambda x: jax.jvp(f, (x,), (jnp.float32(1),)))(x)
    err2, o2 = checkify.checkify(jax.checkpoint(f))(x)
    err3, o3 = checkify.checkify(h)(x)
    err4, o4 = checkify.checkify(jax.grad(h))(x)
    return [err.get(), err2.get(), err3.get(), err4.get()], [g, v, t, o2, o3, o4]
""",
    "index_at_set": """
def run(x):
    f = lambda v: v.at[v[0].astype(jnp.int32)].set(1.0)
    err, out = checkify.checkify(f, errors=checkify.index_checks)(jnp.array([x * 3, 1.0]))
    return err.get(), out
""",
    "index_scatters": """
def run(x):
    def f(v, i):
        idx = jnp.array([0, i])
        return (v.at[idx].set(1.0), v.at[idx].add(1.0),
                v.at[idx].mul(jnp.inf), v.at[idx].min(-1.0), v.at[idx].max(5.0),
                jnp.zeros((3, 2)).at[i].set(jnp.ones(2)))
    i = jnp.int32(int(x * 2))
    outs = []
    for errors in (checkify.index_checks, checkify.all_checks, checkify.nan_checks):
        err, out = checkify.checkify(f, errors=errors)(jnp.arange(3.0), i)
        outs.append(err.get())
    return outs, out
""",
    "user_checks_only_ignores_nan": """
def run(x):
    err, out = checkify.checkify(jnp.log)(jnp.float32(x))
    return err.get(), out
""",
    "all_checks_user_and_nan": """
def f(x):
    y = jnp.log(x)
    checkify.check(x < 2, "big {}", x)
    return y
def run(x):
    err, out = checkify.checkify(f, errors=checkify.all_checks)(jnp.float32(x))
    return err.get(), out
""",
    "throw": """
def run(x):
    err, out = checkify.checkify(lambda x: checkify.check(x > 0, "bad {}", x))(jnp.float32(x))
    try:
        err.throw()
        return None, type(err.get_exception()).__name__
    except Exception as e:
        return type(e).__name__ + ": " + str(e), type(err.get_exception()).__name__
""",
    "eager_check": """
def run(x):
    try:
        checkify.check(jnp.float32(x) > 0, "eager {}", jnp.float32(x))
        return None, 0
    except Exception as e:
        return type(e).__name__ + ": " + str(e), 1
""",
    "unfunctionalized_under_jit": """
def run(x):
    try:
        jax.jit(lambda x: checkify.check(x > 0, "never"))(jnp.float32(x))
        return None, 0
    except Exception as e:
        return type(e).__name__ + ": " + str(e), 1
""",
    "debug_check_under_jit": """
def run(x):
    out = jax.jit(lambda x: (checkify.debug_check(x > 0, "dropped"), x * 2)[1])(jnp.float32(x))
    err, out2 = checkify.checkify(lambda x: (checkify.debug_check(x > 0, "kept {}", x), x)[1])(
        jnp.float32(x))
    return err.get(), (out, out2)
""",
}

INPUTS = [-3.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0]


def _plain(value):
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, str) or value is None:
        return value
    return np.asarray(value)


def _run_laminax(source, xs):
    scope = {"jax": laminax, "jnp": lnp, "lax": llax, "np": np, "checkify": lcheckify}
    exec(source, scope)
    return [_plain(scope["run"](x)) for x in xs]


def _run_reference(source, xs):
    return run_jax(
        "from jax import lax\nfrom jax.experimental import checkify\n"
        + source
        + "\ndef _plain(v):\n"
        "    if isinstance(v, (tuple, list)): return [_plain(u) for u in v]\n"
        "    if isinstance(v, str) or v is None: return v\n"
        "    return np.asarray(v)\n"
        "result = [_plain(run(x)) for x in xs]",
        xs=xs,
    )


def _assert_same(got, expected, where):
    if isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), where
        for g, e in zip(got, expected):
            _assert_same(g, e, where)
    elif expected is None or isinstance(expected, str):
        assert got == expected, where
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6, err_msg=where)
        assert np.asarray(got).dtype == np.asarray(expected).dtype, where


@requires_jax
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_matches_jax(name):
    xs = [x for x in INPUTS if not (name == "div_checks" and x != int(x))]
    expected = _run_reference(PROGRAMS[name], xs)
    got = _run_laminax(PROGRAMS[name], xs)
    for x, g, e in zip(xs, got, expected):
        _assert_same(g, e, f"{name} at x={x}: laminax {g!r} vs JAX {e!r}")


BAD_CALLS = {
    "int_pred": "checkify.check(jnp.int32(1), 'm')",
    "float_pred": "checkify.check(jnp.float32(1), 'm')",
    "array_pred": "checkify.check(jnp.array([True, False]), 'm')",
    "python_int_pred": "checkify.check(1, 'm')",
    "python_float_fmt_arg": "checkify.check(jnp.bool_(False), 'm {}', 1.5)",
    "str_fmt_arg": "checkify.check(jnp.bool_(False), 'm {}', 'abc')",
    "list_fmt_arg": "checkify.check(jnp.bool_(False), 'm {}', [jnp.float32(1)])",
    "missing_fmt_arg": "checkify.check(jnp.bool_(False), 'm {} {}', jnp.float32(1))",
    "check_error_not_an_error": "checkify.check_error(3)",
    "message_not_a_str_is_accepted": "checkify.check(jnp.bool_(True), 3)",
    "errors_as_a_list": "checkify.checkify(lambda x: x, errors=[3])(1.0)",
    "pred_under_vmap_is_per_example": "jax.vmap(lambda x: checkify.check(x > 0, 'v {}', x))("
    "jnp.array([1.0, -1.0]))",
}


def _outcome(source, scope):
    try:
        exec(source, scope)
        return "accepted"
    except Exception as e:
        return f"{type(e).__name__}: {e}"


@requires_jax
@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_bad_input_gets_jax_answer(name):
    source = BAD_CALLS[name]
    expected = run_jax(
        "from jax.experimental import checkify\n"
        "try:\n"
        f"    exec({source!r})\n"
        "    result = 'accepted'\n"
        "except Exception as e:\n"
        "    result = f'{type(e).__name__}: {e}'"
    )
    got = _outcome(source, {"jax": laminax, "jnp": lnp, "checkify": lcheckify})
    assert got == expected


def test_error_is_a_pytree_with_array_leaves():
    err, _ = lcheckify.checkify(lambda x: lcheckify.check(x > 0, "m {}", x))(lnp.float32(-1))
    leaves, tree = laminax.tree_util.tree_flatten(err)
    assert len(leaves) == 3  # failed, code, the check's payload
    again = laminax.tree_util.tree_unflatten(tree, leaves)
    assert again.get() == err.get() == "m -1.0 (`check` failed)"
    assert lcheckify.init_error.get() is None


PMAP_PROGRAM = """
def f(x):
    checkify.check(jnp.all(x > 0), "shard {}", x)
    return jax.lax.pmean(x, "i") + 1
def run(x):
    n = jax.device_count()
    xs = jnp.arange(n * 2, dtype=jnp.float32).reshape(n, 2) - x
    err, out = checkify.checkify(jax.pmap(f, axis_name="i"))(xs)
    err2, out2 = jax.jit(checkify.checkify(jax.pmap(f, axis_name="i")))(xs)
    return err.get(), out, err2.get(), out2
"""


@requires_jax
def test_pmap_errors_are_mapped_per_device_as_in_jax():
    xs = [-1.0, 0.0, 1.0, 3.0, 20.0]
    devices = laminax.device_count()
    expected = run_jax(
        "from jax import lax\nfrom jax.experimental import checkify\n" + PMAP_PROGRAM
        + "\nresult = [[r if isinstance(r, str) or r is None else np.asarray(r) for r in run(x)]"
        " for x in xs]",
        xs=xs, devices=devices,
    )
    got = _run_laminax(PMAP_PROGRAM, xs)
    for x, g, e in zip(xs, got, expected):
        _assert_same(g, e, f"pmap at x={x}: laminax {g!r} vs JAX {e!r}")
