"""`jax.ad_checkpoint` against real JAX 0.10.2: `checkpoint_name` and every entry of
`checkpoint_policies` change what the backward pass keeps as JAX's do (`print_saved_residuals`,
line for line but for the source locations), also when the names sit inside a scan or a cond,
and the derivatives stay those of the function."""

from __future__ import annotations

import re

import numpy as np
import pytest
from jaxref import requires_jax, run_jax

import laminax
import laminax.ad_checkpoint  # noqa: F401  (the snippet reads it as an attribute)
import laminax.numpy as lnp

# run by both libraries, with `jax` and `jnp` bound to each
SNIPPET = """
import contextlib, io
checkpoint_name = jax.ad_checkpoint.checkpoint_name
print_saved_residuals = jax.ad_checkpoint.print_saved_residuals
cp = jax.checkpoint_policies

def f(x, y):
    a = checkpoint_name(jnp.sin(x), "a")
    b = checkpoint_name(a @ y, "b")
    return jnp.sum(jnp.cos(b) * 2.0)

def g(p, z, *, k):
    return jnp.sum(jnp.sin(p["a"] * p["b"][0]) * z * k)

def body(c, x):
    return jnp.cos(checkpoint_name(jnp.sin(c * x), "a")), None

def scanned(c, xs):
    return jnp.sum(jax.lax.scan(body, c, xs)[0])

def branched(x, p):
    return jax.lax.cond(p > 0, lambda x: jnp.sum(jnp.cos(checkpoint_name(jnp.sin(x), "a"))),
                        jnp.sum, x)

x = jnp.asarray(np.arange(9.0, dtype=np.float32).reshape(3, 3) / 7)
y = jnp.asarray(np.cos(np.arange(9.0, dtype=np.float32)).reshape(3, 3))
c, xs = jnp.asarray(np.float32([0.3, -0.2, 1.0])), jnp.asarray(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
policies = {
    "none": None,
    "nothing": cp.nothing_saveable,
    "everything": cp.everything_saveable,
    "dots": cp.dots_saveable,
    "checkpoint_dots": cp.checkpoint_dots,
    "dots_no_batch": cp.dots_with_no_batch_dims_saveable,
    "checkpoint_dots_no_batch": cp.checkpoint_dots_with_no_batch_dims,
    "only_a": cp.save_only_these_names("a"),
    "only_b": cp.save_only_these_names("b"),
    "names_but_a": cp.save_any_names_but_these("a"),
    "anything_except_a": cp.save_anything_except_these_names("a"),
    "both": cp.save_from_both_policies(cp.dots_saveable, cp.save_only_these_names("a")),
    "offload_a": cp.save_and_offload_only_these_names(
        names_which_can_be_saved=["b"], names_which_can_be_offloaded=["a"],
        offload_src="device", offload_dst="pinned_host"),
    "offload_dots": cp.offload_dot_with_no_batch_dims("device", "pinned_host"),
}

def printed(fun, *args, **kwargs):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_saved_residuals(fun, *args, **kwargs)
    return out.getvalue()

result = {}
for name, policy in policies.items():
    fun = jax.checkpoint(f, policy=policy)
    result[name] = (printed(fun, x, y), [np.asarray(v) for v in jax.grad(fun, (0, 1))(x, y)])
    for label, prog, args in [("scan", scanned, (c, xs)), ("cond", branched, (c, 1.0))]:
        fun = jax.checkpoint(prog, policy=policy)
        result[name + "/" + label] = (printed(fun, *args), np.asarray(jax.grad(fun)(*args)))
result["plain"] = printed(f, x, y)
result["pytree_args"] = printed(g, {"a": jnp.ones(3), "b": [jnp.ones(3)]}, jnp.ones(3), k=jnp.ones(3))
result["varargs"] = printed(lambda *a: jnp.sum(jnp.sin(a[0] * a[1])), jnp.ones(3), jnp.ones(3))
result["jit_inside"] = printed(lambda x: jnp.sum(jax.jit(jnp.sin)(x) + x), jnp.ones(3))
result["names"] = str(jax.make_jaxpr(lambda x: checkpoint_name(x * 2, "t"))(jnp.ones(2)))
"""


def _laminax_result():
    import numpy as np_

    scope = {"jax": laminax, "jnp": lnp, "np": np_}
    exec(compile(SNIPPET, "<snippet>", "exec"), scope)  # noqa: S102 (our own test program)
    return scope["result"]


def _unlocated(text: str) -> str:
    # JAX prints `file:line:column (function)`, laminax `file:line`: compare the rest. JAX
    # also lists the literal operands its linear jaxpr reads (the 2.0 of `x * 2.0`), which
    # laminax's linear jaxpr holds as literals, not residuals
    text = "".join(line for line in text.splitlines(keepends=True)
                   if not line.endswith("from a literal\n"))
    return re.sub(r" from (?!the argument|a literal|a constant)\S.*$", " from <loc>", text,
                  flags=re.M)


@pytest.fixture(scope="module")
def results():
    return _laminax_result(), run_jax("import jax.ad_checkpoint\n" + SNIPPET)


@requires_jax
def test_flat_policies_save_what_jax_saves(results):
    ours, theirs = results
    for key in theirs:
        if "/" in key or key in ("plain", "pytree_args", "varargs", "jit_inside", "names"):
            continue
        if key.startswith("offload"):
            # JAX saves an offloaded value as a `device_put` to host memory (`f32<host>`);
            # laminax keeps it where it is: the same values, one memory space
            assert _shapes(ours[key][0]) == _shapes(theirs[key][0]), key
        else:
            assert _unlocated(ours[key][0]) == _unlocated(theirs[key][0]), key
    for key in ("plain", "pytree_args", "varargs"):
        assert _unlocated(ours[key]) == _unlocated(theirs[key]), key


@requires_jax
def test_policies_keep_the_derivatives(results):
    ours, theirs = results
    for key in theirs:
        if key in ("plain", "pytree_args", "varargs", "jit_inside", "names"):
            continue
        np.testing.assert_allclose(ours[key][1], theirs[key][1], rtol=2e-5, atol=1e-6,
                                   err_msg=key)


@requires_jax
def test_name_policies_reach_into_scan_and_cond(results):
    # a policy saving the name inside the body adds one residual computed by the scan (the
    # named value, stacked over the iterations) or the cond, in both libraries; the policies
    # that save nothing there add none. (laminax's scan keeps its stacked carries where JAX
    # keeps the initial carry and recomputes them, and its cond keeps the branch index and the
    # operand where JAX keeps the predicate's argument and the operand: as many residuals.)
    ours, theirs = results
    for label in ("scan", "cond"):
        for got in (ours, theirs):
            base = len(_body_outputs(got[f"nothing/{label}"][0]))
            for key in ("only_a", "offload_a", "both"):
                assert len(_body_outputs(got[f"{key}/{label}"][0])) == base + 1, (key, label)
            for key in ("only_b", "names_but_a", "dots", "dots_no_batch", "offload_dots"):
                assert len(_body_outputs(got[f"{key}/{label}"][0])) == base, (key, label)
        for key in theirs:
            if key.endswith(label) and not key.startswith(("everything", "anything")):
                assert (len(ours[key][0].splitlines())
                        == len(theirs[key][0].splitlines())), key


def _shapes(text: str) -> list[str]:
    return sorted(line.split()[0].replace("<host>", "") for line in text.splitlines())


def _body_outputs(text: str) -> list[str]:
    return [line.split()[0] for line in text.splitlines()
            if re.search(r"output of (scan|cond|closed_call) ", line)]


@requires_jax
def test_jit_residuals_and_the_name_primitive(results):
    ours, theirs = results
    assert _unlocated(ours["jit_inside"]) == _unlocated(theirs["jit_inside"])
    assert ours["names"] == theirs["names"]


def test_name_is_the_identity_under_transformations():
    from laminax.ad_checkpoint import checkpoint_name

    x = np.float32([1.0, 2.0])
    f = lambda v: lnp.sum(checkpoint_name({"v": v * v}, "sq")["v"])  # noqa: E731
    np.testing.assert_allclose(laminax.grad(f)(x), 2 * x)
    np.testing.assert_allclose(laminax.vmap(f)(x.reshape(2, 1)), x * x)
    np.testing.assert_allclose(laminax.jit(f)(x), 5.0)


def test_offload_policies_refuse_shared_names():
    cp = laminax.checkpoint_policies
    with pytest.raises(ValueError, match="must not share"):
        cp.save_and_offload_only_these_names(
            names_which_can_be_saved=["a"], names_which_can_be_offloaded=["a"],
            offload_src="device", offload_dst="pinned_host")
    with pytest.raises(ValueError, match="booleans"):
        cp.save_from_both_policies(cp.offload_dot_with_no_batch_dims("device", "pinned_host"),
                                   cp.dots_saveable)(laminax.lax.dot_general_p, dimension_numbers=(((1,), (0,)), ((), ())))
