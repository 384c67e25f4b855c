"""Shape polymorphism against real JAX 0.10.2: dimension expressions print, compare and fail
as JAX's; functions exported with symbolic shapes have JAX's avals; artifacts with symbolic
shapes cross between laminax and JAX in both directions and run at several shapes with equal
results; a call whose shapes break the specification raises JAX's error."""

import laminax_core as lc
import laminax_export as le
import numpy as np
import pytest
from jaxref import JaxReferenceError, requires_jax, run_jax
from laminax_core import numpy as lnp
from laminax_core.errors import InconclusiveDimensionOperation
from laminax_dispatch import jit

pytestmark = requires_jax

EXPRS = ["a*b + a + 1", "a + b", "b - a", "-a", "3*a*b", "a*a", "a*a*b+b", "a // 2", "a % 2",
         "(a+b)//2", "2*a//2", "(2*a+4)//2", "a*n - b*n", "b*a", "(a*2)%2", "(a+1)*(b-1)",
         "12 - a", "a//b", "-a//2", "(3*a + 7) % 3", "(a*b + b) // b", "a - a", "2*(a+1)//2"]

COMPARISONS = ["a >= b", "a >= 1", "a > 0", "a < b", "a == a", "a == b", "a != b", "a+1 > a",
               "a >= a-1", "b == 5", "int(a)", "a >= 2", "a <= 1", "a*b >= a", "a % 3 < 3",
               "a // 2 >= 0", "2*a > a", "a - b <= a"]

_EVAL = """
a, b, n = jax.export.symbolic_shape("a, b, n")
out = []
for e in exprs:
    try:
        v = eval(e, {"a": a, "b": b, "n": n})
        out.append(("ok", str(v), type(v).__name__ == "int"))
    except Exception as ex:
        out.append(("err", type(ex).__name__, str(ex).splitlines()[0]))
result = out
"""


def _laminax_eval(exprs):
    a, b, n = le.symbolic_shape("a, b, n")
    out = []
    for e in exprs:
        try:
            v = eval(e, {"a": a, "b": b, "n": n})
            out.append(("ok", str(v), type(v) is int))
        except Exception as ex:  # noqa: BLE001 - compared with JAX's exception
            out.append(("err", type(ex).__name__, str(ex).splitlines()[0]))
    return out


def test_expressions_print_as_jax():
    assert _laminax_eval(EXPRS) == run_jax(_EVAL, exprs=EXPRS)


def test_comparisons_and_inconclusive_errors_as_jax():
    assert _laminax_eval(COMPARISONS) == run_jax(_EVAL, exprs=COMPARISONS)


SHAPES = ["b, 2*n + 1", "(a, max(a, b), a*b, a^2, floordiv(a,2), mod(a, 3), min(a, b), 3, a - 3)",
          "a, _", "b, ...", "(c,)", "3, 4"]


def test_symbolic_shape_parsing_as_jax():
    expected = run_jax("""
out = []
for s in specs:
    try:
        out.append(str(jax.export.symbolic_shape(s, like=(5, 4) if "_" in s or "..." in s else None)))
    except Exception as ex:
        out.append(type(ex).__name__)
result = out
""", specs=SHAPES)
    mine = []
    for s in SHAPES:
        try:
            mine.append(str(le.symbolic_shape(s, like=(5, 4) if "_" in s or "..." in s else None)))
        except Exception as ex:  # noqa: BLE001
            mine.append(type(ex).__name__)
    assert mine == expected


def test_scope_constraints_as_jax():
    src = """
def go(mod):
    sc = mod.SymbolicScope(["a >= b", "b >= 4", "a == 2*c"])
    x, y = mod.symbolic_shape("a, b", scope=sc)
    out = [str(x), x >= y, y >= 4, 2 * y >= 8, str(x - y), x.scope is sc]
    for bad in (dict(scope=sc, constraints=["a >= 1"]), dict(constraints=["a > b"])):
        try:
            mod.symbolic_shape("a, b", **bad)
        except ValueError as err:
            out.append(str(err))
    other, = mod.symbolic_shape("a")
    try:
        x + other
    except ValueError as err:
        out.append(str(err).splitlines()[0])
    return out
"""
    expected = run_jax(src + "result = go(jax.export)")
    scope = {}
    exec(src, scope)
    assert scope["go"](le) == expected


def test_symbolic_args_specs_as_jax():
    expected = run_jax("""
specs = jax.export.symbolic_args_specs((np.zeros((3, 4), np.float32), {"k": np.zeros(5, np.int32)}),
                                       ("a, _", {"k": "c"}))
result = str(specs)
""")
    specs = le.symbolic_args_specs((np.zeros((3, 4), np.float32), {"k": np.zeros(5, np.int32)}),
                                   ("a, _", {"k": "c"}))
    assert str(specs) == expected


def test_inconclusive_is_in_errors():
    import laminax.errors

    assert laminax.errors.InconclusiveDimensionOperation is InconclusiveDimensionOperation
    (a,) = le.symbolic_shape("a")
    with pytest.raises(InconclusiveDimensionOperation, match="is inconclusive"):
        _ = a >= 2


# ----- exporting and calling ------------------------------------------------------------------

MLP = """
def f(x, w1, b1, w2):
    h = jnp.tanh(x @ w1 + b1)
    return jnp.maximum(h @ w2, 0.0).sum(axis=1)
"""
RNG = np.random.default_rng(0)
W1 = RNG.standard_normal((4, 8)).astype(np.float32)
B1 = RNG.standard_normal(8).astype(np.float32)
W2 = RNG.standard_normal((8, 3)).astype(np.float32)


def _mlp(jnp):
    scope = {"jnp": jnp}
    exec(MLP, scope)
    return scope["f"]


def _mlp_specs():
    (b,) = le.symbolic_shape("b")
    return (lc.ShapeDtypeStruct((b, 4), np.float32), lc.ShapeDtypeStruct((4, 8), np.float32),
            lc.ShapeDtypeStruct((8,), np.float32), lc.ShapeDtypeStruct((8, 3), np.float32))


def _xs():
    return [RNG.standard_normal((n, 4)).astype(np.float32) for n in (1, 5, 16)]


def test_jax_artifact_runs_in_laminax():
    xs = _xs()
    got = run_jax("""
scope = {"jnp": jnp}
exec(src, scope)
b, = jax.export.symbolic_shape("b")
specs = (jax.ShapeDtypeStruct((b, 4), np.float32), jax.ShapeDtypeStruct((4, 8), np.float32),
         jax.ShapeDtypeStruct((8,), np.float32), jax.ShapeDtypeStruct((8, 3), np.float32))
exp = jax.export.export(jax.jit(scope["f"]))(*specs)
result = dict(blob=bytes(exp.serialize()), outs=[scope["f"](x, w1, b1, w2) for x in xs],
              avals=[repr(a) for a in (*exp.in_avals, *exp.out_avals)],
              kept=exp.module_kept_var_idx, ugc=exp.uses_global_constants)
""", src=MLP, xs=xs, w1=W1, b1=B1, w2=W2)
    exp = le.deserialize(got["blob"])
    assert [repr(a) for a in (*exp.in_avals, *exp.out_avals)] == got["avals"]
    for x, want in zip(xs, got["outs"], strict=True):
        np.testing.assert_allclose(exp.call(x, W1, B1, W2), want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(jit(exp.call)(x, W1, B1, W2), want, rtol=1e-5, atol=1e-5)
    mine = le.export(jit(_mlp(lnp)))(*_mlp_specs())
    assert mine.module_kept_var_idx == tuple(got["kept"])
    assert mine.uses_global_constants == got["ugc"]


def test_laminax_artifact_runs_in_jax():
    exp = le.export(jit(_mlp(lnp)))(*_mlp_specs())
    assert [repr(a) for a in exp.in_avals][0] == "ShapedArray(float32[b,4])"
    xs = _xs()
    got = run_jax("""
exp = jax.export.deserialize(bytearray(blob))
result = dict(avals=[repr(a) for a in (*exp.in_avals, *exp.out_avals)],
              outs=[exp.call(x, w1, b1, w2) for x in xs],
              jit_outs=[jax.jit(exp.call)(x, w1, b1, w2) for x in xs])
""", blob=exp.serialize(), xs=xs, w1=W1, b1=B1, w2=W2)
    assert got["avals"] == [repr(a) for a in (*exp.in_avals, *exp.out_avals)]
    for x, out, jout in zip(xs, got["outs"], got["jit_outs"], strict=True):
        want = np.asarray(exp.call(x, W1, B1, W2))
        assert out.shape == (x.shape[0],)
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(jout, want, rtol=1e-5, atol=1e-5)


def _call_error(spec, shape, constraints=()):
    src = """
def go(mod, jnp, jit, sds):
    dims = mod.symbolic_shape(spec, constraints=constraints)
    try:
        exp = mod.export(jit(lambda x: jnp.sin(x)))(sds(dims, np.float32))
        exp.call(np.ones(shape, np.float32))
    except ValueError as err:
        return str(err)
    return "no error"
"""
    scope = {"spec": spec, "shape": shape, "constraints": list(constraints), "np": np}
    exec(src, scope)
    mine = scope["go"](le, lnp, jit, lc.ShapeDtypeStruct)
    theirs = run_jax(src + "result = go(jax.export, jnp, jax.jit, jax.ShapeDtypeStruct)",
                     spec=spec, shape=shape, constraints=list(constraints))
    return mine, theirs


@pytest.mark.parametrize("spec,shape,constraints", [
    ("b, 4", (0, 4), ()),
    ("2*n + 1, a", (4, 3), ()),
    ("2*n + 1, a", (1, 3), ()),
    ("2*n + 1, a", (7, 2), ("a >= n",)),
    ("b, b", (3, 4), ()),
    ("b, 4", (3, 4), ()),
    ("a, b", (3, 3), ("a == 2*c",)),
    ("a, b", (4, 3), ("a == 2*c", "b >= c")),
    ("a, b", (6, 2), ("a == 2*c", "b >= c")),
    ("a, b", (6, 5), ("max(a, b) >= 6",)),
    ("a, b", (2, 5), ("a + b <= 6",)),
    ("a*b, b", (6, 4), ()),
    # equality constraints: a variable on the left is substituted in the shapes; any other
    # left side is asserted at the call
    ("a, b", (6, 2), ("floordiv(a, 2) == b",)),
    ("a, b", (7, 3), ("floordiv(a, 2) == b",)),
    ("a, b", (3, 5), ("a * b == 12",)),
    ("a, b", (3, 4), ("a * b == 12",)),
    ("a, b", (2, 2), ("b == a + 1",)),
    ("a, b", (2, 3), ("b == a + 1",)),
])
def test_call_shape_errors_as_jax(spec, shape, constraints):
    mine, theirs = _call_error(spec, shape, constraints)
    assert mine == theirs


# ----- operations over symbolic dimensions: avals and values as JAX's ---------------------------

OPS = {
    "mean": ("lambda x: jnp.mean(x, axis=0)", "b, 3"),
    "mean_all": ("lambda x: x.mean()", "b, 3"),
    "var": ("lambda x: jnp.var(x, axis=0)", "b, 3"),
    "softmax": ("lambda x: jax.nn.softmax(x, axis=0)", "b, 3"),
    "reshape_minus1": ("lambda x: x.reshape(-1)", "b, 3"),
    "reshape_split": ("lambda x: x.reshape((-1, 2))", "b, 4"),
    "reshape_keep": ("lambda x: x.reshape((x.shape[0], 3, 1))", "b, 3"),
    "arange": ("lambda x: jnp.arange(x.shape[0]) + x[:, 0].astype(jnp.int32)", "b, 3"),
    "zeros": ("lambda x: jnp.zeros((x.shape[0], 3)) + x", "b, 3"),
    "ones_like_shape": ("lambda x: jnp.ones(x.shape) * 2 + x", "b, 3"),
    "concat0": ("lambda x: jnp.concatenate([x, x], axis=0)", "b, 3"),
    "concat1": ("lambda x: jnp.concatenate([x, x], axis=1)", "b, 3"),
    "slice": ("lambda x: x[1:, :2]", "b, 3"),
    "slice_neg": ("lambda x: x[:-1]", "b, 3"),
    "slice_stop": ("lambda x: x[:4] * 2", "b, 3"),
    "slice_outer": ("lambda x: x[:, None] + x[None, :4]", "b"),
    "flip": ("lambda x: x[::-1]", "b, 3"),
    "gram": ("lambda x: x.T @ x", "b, 3"),
    "sum_all": ("lambda x: x.sum()", "b, n"),
    "max_axis": ("lambda x: x.max(axis=1)", "b, n"),
    "where": ("lambda x: jnp.where(x > 0, x, 0.0)", "b, 3"),
    "outer": ("lambda x: x[:, None, :] * x[None, :, :]", "b, 3"),
    "argmax": ("lambda x: jnp.argmax(x, axis=0)", "b, 3"),
    "broadcast_to": ("lambda x: jnp.broadcast_to(x[0], x.shape)", "b, 3"),
    "stack": ("lambda x: jnp.stack([x, x])", "b, 3"),
    "square": ("lambda x: x @ x", "b, b"),
    "pad": ("lambda x: jnp.pad(x, ((1, 1), (0, 0)))", "b, 3"),
    "eye": ("lambda x: jnp.eye(x.shape[0]) @ x", "b, 3"),
    "dim_times_array": ("lambda x: x * x.shape[0]", "b, 3"),
    "cond": ("lambda x: jax.lax.cond(x.sum() > 0, lambda y: y * 2, lambda y: -y, x)", "b, 3"),
    "fori_loop": ("lambda x: jax.lax.fori_loop(0, 3, lambda i, y: y * 2 + 1, x)", "b, 3"),
    "while_loop": ("lambda x: jax.lax.while_loop(lambda c: c[0] < 3, "
                   "lambda c: (c[0] + 1, c[1] * 2), (0, x))[1]", "b, 3"),
    "scan": ("lambda x: jax.lax.scan(lambda c, r: (c + r, c * r), jnp.zeros(3), x)[1]", "b, 3"),
    "scan_reverse": ("lambda x: jax.lax.scan(lambda c, r: (c + r, c * r), jnp.zeros(3), x, "
                     "reverse=True)[1]", "b, 3"),
    "rnn": ("lambda x: jax.lax.scan(lambda h, r: (jnp.tanh(h @ jnp.ones((3, 3)) + r),) * 2, "
            "jnp.zeros(3), x)[0]", "b, 3"),
    "index_last": ("lambda x: x[jnp.asarray(x.shape[0] - 1)]", "b, 3"),
    "index_negative": ("lambda x: x[-1]", "b, 3"),
    "index_array": ("lambda x: x[jnp.array([0, -1])]", "b, 3"),
    "take_rows": ("lambda x: jnp.take(x, jnp.array([1, 0]), axis=0)", "b, 3"),
    "einsum": ("lambda x: jnp.einsum('bi,bj->ij', x, x)", "b, 3"),
    "dynamic_slice": ("lambda x: jax.lax.dynamic_slice_in_dim(x, 1, 1, axis=0)", "b, 3"),
    "nested_jit": ("lambda x: jax.jit(lambda y: jnp.sin(y) + y.shape[0])(x)", "b, 3"),
    "cumsum_static_axis": ("lambda x: jnp.cumsum(x, axis=1)", "b, 3"),
    # along the symbolic axis: stablehlo.dynamic_reduce_window
    "cumsum_symbolic_axis": ("lambda x: jnp.cumsum(x, axis=0)", "b, 3"),
    "cumprod_symbolic_axis": ("lambda x: jnp.cumprod(x, axis=0)", "b, 3"),
    "cummax_symbolic_axis": ("lambda x: jax.lax.cummax(x, axis=0)", "b, 3"),
    "cummin_reverse": ("lambda x: jax.lax.cummin(x, axis=0, reverse=True)", "b, 3"),
    "cumlogsumexp": ("lambda x: jax.lax.cumlogsumexp(x, axis=0)", "b, 3"),
    "cumsum_grad": ("lambda x: jax.grad(lambda y: (jnp.cumsum(y, axis=0) ** 2).sum())(x)",
                    "b, 3"),
    "reduce_window_valid": ("lambda x: jax.lax.reduce_window(x, 0.0, jax.lax.add, (2, 1), "
                            "(1, 1), 'VALID')", "b, 3"),
    "sort": ("lambda x: jnp.sort(x, axis=0)", "b, 3"),
    "logsumexp": ("lambda x: jax.nn.logsumexp(x, axis=0)", "b, 3"),
    "one_hot": ("lambda x: jax.nn.one_hot(jnp.argmax(x, axis=1), 3)", "b, 3"),
    "tile": ("lambda x: jnp.tile(x, (2, 1))", "b, 3"),
    "norm": ("lambda x: jnp.linalg.norm(x, axis=0)", "b, 3"),
    "std": ("lambda x: jnp.std(x, axis=0)", "b, 3"),
    "mlp_layer": ("lambda x: jax.nn.relu(x @ jnp.ones((3, 5)) + jnp.arange(5.0))", "b, 3"),
}

_OPS_SRC = """
def go(jax, jnp, export, jit, sds):
    out = {}
    rng = np.random.default_rng(1)
    for name, (src, spec) in ops.items():
        f = eval(src, {"jax": jax, "jnp": jnp})
        exp = export.export(jit(f))(sds(export.symbolic_shape(spec), np.float32))
        values = []
        for m in (2, 5):
            shape = tuple(m if isinstance(d, str) else d for d in
                          [int(t) if t.strip().isdigit() else "v" for t in spec.split(",")])
            values.append(np.asarray(exp.call(rng.standard_normal(shape).astype(np.float32))))
        out[name] = ([repr(a) for a in exp.out_avals], values)
    return out
"""


def test_operations_over_symbolic_dims_as_jax():
    import laminax

    scope = {"ops": OPS, "np": np}
    exec(_OPS_SRC, scope)
    mine = scope["go"](laminax, lnp, le, jit, lc.ShapeDtypeStruct)
    theirs = run_jax(_OPS_SRC + "result = go(jax, jnp, jax.export, jax.jit, jax.ShapeDtypeStruct)",
                     ops=OPS)
    for name in OPS:
        assert mine[name][0] == theirs[name][0], name
        for a, b in zip(mine[name][1], theirs[name][1], strict=True):
            assert a.shape == b.shape and a.dtype == b.dtype, name
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=name)


def test_inconclusive_shape_check_while_tracing_as_jax():
    src = """
def go(jnp, export, jit, sds):
    out = []
    for f, spec in ((lambda x: x + jnp.ones(4), "b"), (lambda x: x.reshape((3, -1)), "b"),
                    (lambda x: x[x.shape[0] - 1], "b"),
                    (lambda x: x[:, None] + x[None, :4], "b")):
        try:
            export.export(jit(f))(sds(export.symbolic_shape(spec), np.float32))
            out.append("ok")
        except Exception as ex:
            out.append(type(ex).__name__)
    return out
"""
    scope = {"np": np}
    exec(src, scope)
    mine = scope["go"](lnp, le, jit, lc.ShapeDtypeStruct)
    theirs = run_jax(src + "result = go(jnp, jax.export, jax.jit, jax.ShapeDtypeStruct)")
    assert mine == theirs


# ----- vjp and constraints carried by the module -----------------------------------------------

VJP_SRC = "def f(x, w):\n    return jnp.tanh(x @ w).mean(axis=0)"
XS_W = [RNG.standard_normal((n, 4)).astype(np.float32) for n in (2, 6)]
W43 = RNG.standard_normal((4, 3)).astype(np.float32)

_JAX_GRADS = """
exp = jax.export.deserialize(bytearray(blob))
result = [jax.grad(lambda w: exp.call(x, w).sum())(w) for x in xs]
"""


def test_vjp_of_polymorphic_function_both_ways():
    scope = {"jnp": lnp}
    exec(VJP_SRC, scope)
    (b,) = le.symbolic_shape("b")
    specs = (lc.ShapeDtypeStruct((b, 4), np.float32), lc.ShapeDtypeStruct((4, 3), np.float32))
    mine = le.export(jit(scope["f"]))(*specs)
    from laminax_core import grad

    want = [grad(lambda w, x=x: scope["f"](x, w).sum())(W43) for x in XS_W]
    got_in_jax = run_jax(_JAX_GRADS, blob=mine.serialize(vjp_order=1), xs=XS_W, w=W43)
    theirs = run_jax("""
scope = {"jnp": jnp}
exec(src, scope)
b, = jax.export.symbolic_shape("b")
exp = jax.export.export(jax.jit(scope["f"]))(jax.ShapeDtypeStruct((b, 4), np.float32),
                                             jax.ShapeDtypeStruct((4, 3), np.float32))
result = bytes(exp.serialize(vjp_order=1))
""", src=VJP_SRC)
    exp = le.deserialize(theirs)
    got_here = [grad(lambda w, x=x: exp.call(x, w).sum())(W43) for x in XS_W]
    for a, b_, c in zip(want, got_in_jax, got_here, strict=True):
        np.testing.assert_allclose(b_, a, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(c, a, rtol=1e-5, atol=1e-5)


def test_constraint_assertions_in_the_module_both_ways():
    # the deserialized Exported has no constraints (JAX's format stores none): the module's
    # shape assertions refuse the call, a ValueError in both
    (a, n) = le.symbolic_shape("a, n", constraints=["a >= n"])
    mine = le.export(jit(lnp.sin))(lc.ShapeDtypeStruct((2 * n + 1, a), np.float32))
    theirs = run_jax("""
a, n = jax.export.symbolic_shape("a, n", constraints=["a >= n"])
exp = jax.export.export(jax.jit(jnp.sin))(jax.ShapeDtypeStruct((2 * n + 1, a), np.float32))
result = bytes(exp.serialize())
""")
    call = """
exp = jax.export.deserialize(bytearray(blob))
out = [np.asarray(exp.call(np.ones((5, 3), np.float32)))]
try:
    exp.call(np.ones((7, 2), np.float32))
except ValueError as err:
    out.append("ValueError")
result = out
"""
    for blob in (mine.serialize(), theirs):
        assert run_jax(call, blob=blob)[1] == "ValueError"
        exp = le.deserialize(blob)
        np.testing.assert_allclose(exp.call(np.ones((5, 3), np.float32)), np.sin(np.ones((5, 3))),
                                   rtol=1e-6)
        with pytest.raises(ValueError, match="symbolic shape constraint a >= n"):
            exp.call(np.ones((7, 2), np.float32))


def test_equality_constraint_assertions_in_the_module_both_ways():
    src = """
def go(mod, jnp, jit, sds):
    a, b = mod.symbolic_shape("a, b", constraints=["floordiv(a, 2) == b"])
    return mod.export(jit(lambda x, y: x.sum() + y.sum()))(sds((a,), np.float32),
                                                          sds((b,), np.float32))
"""
    scope = {"np": np}
    exec(src, scope)
    mine = scope["go"](le, lnp, jit, lc.ShapeDtypeStruct)
    theirs = run_jax(src + """
result = bytes(go(jax.export, jnp, jax.jit, jax.ShapeDtypeStruct).serialize())""")
    call = """
exp = jax.export.deserialize(bytearray(blob))
out = [np.asarray(exp.call(np.ones(7, np.float32), np.ones(3, np.float32)))]
try:
    exp.call(np.ones(6, np.float32), np.ones(2, np.float32))
except ValueError as err:
    out.append("ValueError")  # JAX: "Error refining shapes", from the module's assertion
result = out
"""
    good, bad = (np.ones(7, np.float32), np.ones(3, np.float32)), (np.ones(6, np.float32),
                                                                   np.ones(2, np.float32))
    for blob in (mine.serialize(), theirs):
        got = run_jax(call, blob=blob)
        assert got[0] == 10.0
        assert got[1] == "ValueError"
        exp = le.deserialize(blob)
        assert float(exp.call(*good)) == 10.0
        with pytest.raises(ValueError, match=r"Expected 'floordiv\(a, 2\) - b' to be equal "
                                             r"to 0, but found 1"):
            exp.call(*bad)
    # before serialization, the call's own check says what JAX's says
    with pytest.raises(ValueError) as info:
        mine.call(*bad)
    jax_message = run_jax(src + """
try:
    go(jax.export, jnp, jax.jit, jax.ShapeDtypeStruct).call(*bad)
except ValueError as err:
    result = str(err)
""", bad=bad)
    assert str(info.value) == jax_message


def test_cumsum_along_a_symbolic_axis_crosses_both_ways():
    src = """
def go(jnp, export, jit, sds):
    return export.export(jit(lambda x: jnp.cumsum(x, axis=0)))(
        sds(export.symbolic_shape("b, 3"), np.float32))
"""
    scope = {"np": np}
    exec(src, scope)
    mine = scope["go"](lnp, le, jit, lc.ShapeDtypeStruct)
    assert "stablehlo.dynamic_reduce_window" in mine.mlir_module()
    theirs = run_jax(src + "result = bytes(go(jnp, jax.export, jax.jit, "
                     "jax.ShapeDtypeStruct).serialize())")
    x = np.arange(12, dtype=np.float32).reshape(4, 3) / 5
    got = run_jax("result = jax.export.deserialize(bytearray(blob)).call(x)",
                  blob=mine.serialize(), x=x)
    np.testing.assert_allclose(got, np.cumsum(x, axis=0), rtol=1e-6)
    np.testing.assert_allclose(le.deserialize(theirs).call(x), np.cumsum(x, axis=0), rtol=1e-6)
