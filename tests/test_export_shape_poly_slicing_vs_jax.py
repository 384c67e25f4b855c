"""Slicing, gather, scatter, padding and window reductions whose sizes are dimension
expressions, against real JAX 0.10.2: `x[:, :n]`-style slices with symbolic bounds,
`lax.dynamic_slice` with symbolic sizes (`stablehlo.real_dynamic_slice`), gathers with
symbolic slice sizes (`stablehlo.dynamic_gather`: `take`, `take_along_axis`, integer-array
indexing), scatters over symbolic shapes (`.at[]`), `lax.pad` with symbolic padding
(`stablehlo.dynamic_pad`) and `reduce_window` with a symbolic window or stride
(`stablehlo.dynamic_reduce_window`): the exported avals and the results at several shapes
are JAX's, and the artifacts cross both ways."""

import laminax_core as lc
import laminax_export as le
import numpy as np
from jaxref import requires_jax, run_jax
from laminax_core import numpy as lnp
from laminax_dispatch import jit

pytestmark = requires_jax

OPS = {
    "slice_symbolic_stop": ("lambda x: x[:, :x.shape[0]]", "b, n"),
    "slice_half": ("lambda x: x[: x.shape[0] // 2]", "b, 3"),
    "slice_symbolic_start": ("lambda x: x[x.shape[0] // 2:]", "b, 3"),
    "slice_grad": ("lambda x: jax.grad(lambda y: (y[: y.shape[0] // 2 + 1] ** 2).sum())(x)",
                   "b, 3"),
    "dynamic_slice": ("lambda x: jax.lax.dynamic_slice(x, (0, 1), (x.shape[0], 2))", "b, 3"),
    "dynamic_slice_traced_start": (
        "lambda x: jax.lax.dynamic_slice(x, (jnp.argmax(x[:, 0]), 0), "
        "(x.shape[0] - 1, x.shape[1]))", "b, n"),
    "dynamic_slice_in_dim": ("lambda x: jax.lax.dynamic_slice_in_dim(x, jnp.argmax(x[:, 0]), "
                             "x.shape[0] // 2, axis=0)", "b, 3"),
    "dynamic_slice_grad": ("lambda x: jax.grad(lambda y: jax.lax.dynamic_slice(y, (1, 0), "
                           "(y.shape[0] - 1, 3)).sum())(x)", "b, 3"),
    "take_along_axis1": ("lambda x: jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1)",
                         "b, n"),
    "take_along_axis0": ("lambda x: jnp.take_along_axis(x, jnp.argsort(x, axis=0), axis=0)",
                         "b, 3"),
    "take_along_axis_grad": (
        "lambda x: jax.grad(lambda y: jnp.take_along_axis(y, jnp.argsort(y, axis=1), "
        "axis=1)[:, 0].sum())(x)", "b, n"),
    "take_cols": ("lambda x: jnp.take(x, jnp.array([0, 1]), axis=1)", "b, n"),
    "take_rows": ("lambda x: jnp.take(x, jnp.array([1, 0]), axis=0)", "b, n"),
    "index_array_rows": ("lambda x: x[jnp.argmax(x, axis=0)]", "b, n"),
    "index_traced_row": ("lambda x: x[jnp.argmax(x[:, 0])]", "b, n"),
    "index_traced_col": ("lambda x: x[:, jnp.argmax(x[0])]", "b, n"),
    "scatter_set": ("lambda x: x.at[jnp.array([0, 1])].set(1.0)", "b, n"),
    "scatter_add_rows": ("lambda x: x.at[jnp.argmax(x, axis=1) % 2].add(x)", "b, n"),
    "scatter_mul_cols": ("lambda x: x.at[:, jnp.array([1, 0])].mul(2.0)", "b, n"),
    "scatter_clip": ("lambda x: x.at[jnp.array([0, 7])].set(x[0] + 1, mode='clip')", "b, n"),
    "dynamic_update_slice": ("lambda x: jax.lax.dynamic_update_slice(x, x[:1] * 2, "
                             "(jnp.argmax(x[:, 0]), 0))", "b, n"),
    "update_traced_row": ("lambda x: x.at[jnp.argmax(x[:, 0])].set(x[0] * 3)", "b, n"),
    "segment_sum": ("lambda x: jax.ops.segment_sum(x, jnp.argmax(x, axis=1) % 2, "
                    "num_segments=2)", "b, n"),
    "pad": ("lambda x: jax.lax.pad(x, 0.0, ((x.shape[0], 1, 0), (0, x.shape[0] // 2, 1)))",
            "b, 3"),
    "window_whole_axis": ("lambda x: jax.lax.reduce_window(x, 0.0, jax.lax.add, "
                          "(x.shape[0], 1), (1, 1), 'VALID')", "b, 3"),
    "window_half_max": ("lambda x: jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, "
                        "(x.shape[0] // 2 + 1, 2), (1, 1), 'VALID')", "b, 3"),
    "window_symbolic_stride": ("lambda x: jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 1), "
                               "(x.shape[0], 1), 'VALID')", "b, 3"),
    "window_same": ("lambda x: jax.lax.reduce_window(x, 0.0, jax.lax.add, (2, 1), (1, 1), "
                    "'SAME')", "b, 3"),
    "window_symbolic_same": ("lambda x: jax.lax.reduce_window(x, 0.0, jax.lax.add, "
                             "(x.shape[0], 1), (1, 1), 'SAME')", "b, 3"),
}

_SRC = """
def inputs(name, spec):
    out = []
    for m in (2, 5):
        shape = tuple(m if not t.strip().isdigit() else int(t) for t in spec.split(","))
        out.append(np.random.default_rng(m + len(name)).standard_normal(shape).astype(np.float32))
    return out

def go(jax, jnp, export, jit, sds, ops, blobs, cross):
    out = {}
    for name, (src, spec) in ops.items():
        f = eval(src, {"jax": jax, "jnp": jnp})
        exp = export.export(jit(f))(sds(export.symbolic_shape(spec), np.float32))
        other = export.deserialize(bytearray(blobs[name])) if name in blobs else None
        out[name] = dict(avals=[repr(a) for a in exp.out_avals],
                         values=[np.asarray(exp.call(x)) for x in inputs(name, spec)])
        if name in cross:  # the other side's artifact, at one shape
            out[name]["blob"] = bytes(exp.serialize())
            out[name]["other"] = other and np.asarray(other.call(inputs(name, spec)[1]))
    return out
"""
# one per lowering: real_dynamic_slice, dynamic_gather, scatter, dynamic_pad,
# dynamic_reduce_window (a few seconds each in JAX: the crossing is not repeated for all)
CROSS = ["dynamic_slice_traced_start", "take_along_axis1", "scatter_add_rows", "pad",
         "window_half_max", "slice_symbolic_start"]


def test_symbolic_slicing_gather_scatter_and_windows_as_jax():
    import laminax

    scope = {"np": np}
    exec(_SRC, scope)
    mine = scope["go"](laminax, lnp, le, jit, lc.ShapeDtypeStruct, OPS, {}, CROSS)
    theirs = run_jax(_SRC + "result = go(jax, jnp, jax.export, jax.jit, jax.ShapeDtypeStruct, "
                     "ops, blobs, cross)", ops=OPS, cross=CROSS,
                     blobs={k: mine[k]["blob"] for k in CROSS})
    for name in OPS:
        assert mine[name]["avals"] == theirs[name]["avals"], name
        for got, want in zip(mine[name]["values"], theirs[name]["values"], strict=True):
            assert got.shape == want.shape and got.dtype == want.dtype, name
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=name)
    for name in CROSS:
        # laminax's artifact run by JAX, JAX's run by laminax
        want = theirs[name]["values"][1]
        x = scope["inputs"](name, OPS[name][1])[1]
        for got in (theirs[name]["other"], le.deserialize(theirs[name]["blob"]).call(x)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=name)


def test_floordiv_bounds_decide_as_jax():
    exprs = ["b - b // 2 >= 0", "b // 2 <= b", "b // 3 < b", "2 * (b // 2) <= b",
             "b - 2 * (b // 2) >= 0", "str(min(b, b // 2))", "str(max(b, (b + 1) // 2))",
             "(b + 1) // 2 >= 1", "b // 2 >= 1"]
    src = """
def go(mod):
    b, = mod.symbolic_shape("b")
    out = []
    for e in exprs:
        try:
            out.append(eval(e, {"b": b, "min": min, "max": max}))
        except Exception as ex:
            out.append(type(ex).__name__)
    return out
"""
    scope = {"exprs": exprs}
    exec(src, scope)
    assert scope["go"](le) == run_jax(src + "result = go(jax.export)", exprs=exprs)
