"""Issue 12, "valid programs that fail" and "errors that must say what is wrong": each class of
input runs many cases under laminax and real JAX, requiring JAX's value or JAX's error type
for every one (see hardening_table)."""

from __future__ import annotations

import itertools

from hardening_table import check_table
from jaxref import requires_jax

pytestmark = requires_jax


def _zero_length_scan_exprs():
    body = "lambda c, x: (c + x.sum(), x * 2)"
    exprs = []
    for shape, reverse in itertools.product([(0,), (0, 3), (0, 2, 2)], [False, True]):
        xs = f"jnp.ones({shape})"
        scan = f"lax.scan({body}, 0., {{xs}}, reverse={reverse})"
        exprs += [
            scan.format(xs=xs),
            f"jax.jit(lambda xs: {scan.format(xs='xs')})({xs})",
            f"jax.vmap(lambda xs: {scan.format(xs='xs')})(jnp.ones((2, *{shape})))",
            f"jax.grad(lambda xs: {scan.format(xs='xs')}[0] + 1.)({xs})",
            f"jax.jit(jax.grad(lambda c, xs: lax.scan({body}, c, xs, reverse={reverse})[0]))"
            f"(1., {xs})",
            f"lax.scan(lambda c, x: (c + 1., c), 0., None, length=0, reverse={reverse})",
            f"jax.jit(lambda: lax.scan(lambda c, x: (c * 2, c), jnp.ones(3), None, length=0,"
            f" reverse={reverse}))()",
            f"lax.fori_loop(3, 3, lambda i, c: c + i, 0)",
            f"jax.jit(lambda xs: lax.map(lambda x: x + 1, xs))({xs})",
            f"lax.associative_scan(jnp.add, {xs})",
        ]
    return exprs


def test_zero_length_scans_work_as_in_jax():
    counts = check_table(_zero_length_scan_exprs())
    assert counts["ok"] > 40, counts


def _empty_reduction_exprs():
    exprs = []
    for fn, shape, axis in itertools.product(
        ["cumsum", "cumprod", "nancumsum", "nancumprod", "cumulative_sum", "cumulative_prod"],
        [(0,), (0, 3), (3, 0), (2, 0, 2)], [0, -1, None],
    ):
        if fn.startswith("cumulative") and axis is None and len(shape) > 1:
            continue
        exprs.append(f"jnp.{fn}(jnp.ones({shape}), axis={axis})")
        exprs.append(f"jax.jit(lambda x: jnp.{fn}(x, axis={axis}))(jnp.ones({shape}))")
    for fn, shape in itertools.product(["cummax", "cummin", "cumsum", "cumprod", "cumlogsumexp"],
                                       [(0,), (0, 3), (3, 0)]):
        exprs.append(f"lax.{fn}(jnp.ones({shape}), axis=0)")
    return exprs


def test_cumulative_reductions_of_empty_arrays_match_jax():
    counts = check_table(_empty_reduction_exprs())
    assert counts["ok"] > 80, counts


def _empty_linalg_exprs():
    exprs = []
    for batch in [(), (2,), (3, 1), (0,)]:
        a = f"jnp.zeros({(*batch, 0, 0)})"
        exprs += [f"jnp.linalg.inv({a})", f"jax.jit(jnp.linalg.inv)({a})",
                  f"jnp.linalg.solve({a}, jnp.zeros({(*batch, 0, 2)}))",
                  f"jnp.linalg.solve({a}, jnp.zeros({(*batch, 0, 0)}))",
                  f"jnp.linalg.det({a})", f"jnp.linalg.slogdet({a})",
                  f"jnp.zeros({(*batch, 0, 3)})[..., jnp.array([], 'int32'), :]",
                  f"jnp.zeros({(*batch, 3, 0)})[..., jnp.array([0, 2]), :]"]
    return exprs


def test_empty_matrices_invert_and_solve_as_in_jax():
    counts = check_table(_empty_linalg_exprs())
    assert counts["ok"] > 20, counts


def _static_index_exprs():
    exprs = []
    for i in range(-13, 13):
        exprs += [f"jnp.arange(5)[{i}]", f"jnp.arange(12).reshape(3, 4)[{i}]",
                  f"jnp.arange(12).reshape(3, 4)[1, {i}]", f"jnp.arange(12).reshape(3, 4)[:, {i}]",
                  f"jnp.arange(5).at[{i}].get()", f"jnp.arange(5).at[{i}].set(-1)",
                  f"jnp.arange(5).at[{i}].add(10)", f"jax.jit(lambda x: x[{i}])(jnp.arange(5))",
                  f"jnp.arange(5)[np.int32({i})]", f"jnp.zeros((0, 2))[{i}]"]
    return exprs


def test_static_out_of_bounds_indices_clamp_as_in_jax():
    counts = check_table(_static_index_exprs())
    assert counts["ok"] > 200 and counts["error"] >= 26, counts


def _buffer_input_exprs():
    exprs = []
    for n in range(0, 6):
        exprs += [f"jnp.asarray(range({n}))", f"jnp.array(range(1, {n} + 1, 2))",
                  f"jnp.asarray(range({n}), dtype='float32')",
                  f"jnp.asarray(bytearray(b'{'x' * n}'))",
                  f"jnp.asarray(memoryview(b'{'ab' * n}'))",
                  f"jnp.asarray(memoryview(np.arange({n}, dtype='float32')))",
                  f"jnp.array(memoryview(np.arange({n}, dtype='int16')))",
                  f"jnp.sum(jnp.asarray(range({n})))"]
    return exprs


def test_range_memoryview_and_bytearray_convert_as_in_jax():
    counts = check_table(_buffer_input_exprs())
    assert counts["ok"] > 40, counts


def _batched_map_exprs():
    exprs = []
    for n, b in itertools.product(range(0, 7), [1, 2, 3, 4, 7, 10]):
        x = f"jnp.arange({n}.)"
        exprs += [f"lax.map(lambda x: x * 2 + 1, {x}, batch_size={b})",
                  f"lax.map(lambda x: {{'s': x.sum(), 'v': x}}, jnp.ones(({n}, 2)), "
                  f"batch_size={b})",
                  f"jax.jit(lambda x: lax.map(jnp.sin, x, batch_size={b}))({x})"]
    return exprs


def test_lax_map_batch_size_matches_jax():
    counts = check_table(_batched_map_exprs())
    assert counts["ok"] > 100, counts


def _narrow_int_exprs():
    exprs = []
    for dt, op in itertools.product(["int4", "uint4", "int2", "uint2"],
                                    ["+", "-", "*", "<", "==", "&", "|", "^", "//", "%"]):
        x = f"jnp.array([0, 1, 1, 0], '{dt}')"
        y = f"jnp.array([1, 1, 0, 1], '{dt}')"
        exprs += [f"{x} {op} {y}", f"jax.jit(lambda a, b: a {op} b)({x}, {y})"]
    for dt in ["int4", "uint4"]:
        x = f"jnp.arange(6, dtype='{dt}')"
        # (not x.sum(): JAX 0.10.2 raises a ValueError from NumPy there, laminax sums)
        exprs += [f"{x}.astype('float32')", f"-{x}", f"{x}[::2]",
                  f"jnp.maximum({x}, 2)", f"{x} * 3", f"jnp.array([1, 2], '{dt}') + 1"]
    return exprs


def test_int4_and_uint4_arithmetic_matches_jax():
    counts = check_table(_narrow_int_exprs())
    assert counts["ok"] > 80, counts


def _invalid_dtype_exprs():
    arrays = ["np.array(['a', 'b'])", "np.array([b'a'])", "np.array([1, None], dtype=object)",
              "np.array(['2020-01-01'], dtype='datetime64[D]')",
              "np.array([1], dtype='timedelta64[s]')", "np.zeros(2, 'complex256')",
              "np.zeros(2, 'float128')", "np.zeros(2, dtype=[('a', 'i4'), ('b', 'f4')])",
              "np.str_('a')", "np.datetime64('2020-01-01')"]
    uses = ["jnp.asarray({a})", "jnp.array({a})", "jax.jit(lambda x: x)({a})",
            "jax.device_put({a})", "jnp.add({a}, 1)", "jax.vmap(lambda x: x)({a})",
            "jax.grad(lambda x: x.sum())({a})"]
    # jnp.add of a datetime64 scalar is JAX's promotion ValueError, not the TypeError every
    # other use gives; laminax raises its TypeError there too
    return [u.format(a=a) for a, u in itertools.product(arrays, uses)
            if (a, u) != ("np.datetime64('2020-01-01')", "jnp.add({a}, 1)")]


def test_arrays_of_invalid_dtypes_raise_type_error_as_in_jax():
    counts = check_table(_invalid_dtype_exprs())
    assert counts["error"] >= 60, counts


def _tracer_method_exprs():
    methods = ["tolist()", "tobytes()", "item()", "__dlpack__()", "addressable_data(0)",
               "delete()", "devices()", "is_deleted()", "on_device_size_in_bytes()",
               "unsafe_buffer_pointer()", "global_shards", "is_fully_addressable",
               "is_fully_replicated", "traceback", "__index__()", "__int__()"]
    wrappers = ["jax.jit(lambda x: x.{m})(jnp.ones(()))",
                "jax.vmap(lambda x: x.{m})(jnp.ones(2))",
                "jax.grad(lambda x: (x.{m}, x)[1])(1.)",
                "jax.make_jaxpr(lambda x: x.{m})(jnp.ones(2))"]
    return [w.format(m=m) for m, w in itertools.product(methods, wrappers)]


def test_concrete_value_methods_on_tracers_raise_as_in_jax():
    counts = check_table(_tracer_method_exprs())
    assert counts["error"] >= 55, counts


def _argument_exprs():
    exprs = []
    for v in ["'a'", "1.5", "(0, 'a')", "[0]", "np.int32(0)", "None", "(0.0,)", "{0}", "5",
              "-5", "(0, 1)", "()"]:
        exprs += [f"jax.jit(lambda x, y=1: x, static_argnums={v})(1, 2)",
                  f"jax.jit(lambda x, y: x, donate_argnums={v})(jnp.ones(2), jnp.ones(2))",
                  f"jax.vmap(lambda x: x, in_axes={v})(jnp.ones((3, 2)))",
                  f"jax.vmap(lambda x: x, out_axes={v})(jnp.ones((3, 2)))"]
    for v in ["1", "('x', 2)", "'y'", "['x']", "None"]:
        exprs += [f"jax.jit(lambda x, y=1: x, static_argnames={v})(1, y=2)"]
    for s in ["(2.0, 3)", "(2, 3.0)", "(6,)", "(-1, 3)", "(-1, -1)", "(4, -1)", "('2', 3)",
              "(None, 6)", "(2, np.int64(3))", "[3, 2]", "6", "6.0", "(5, 5)"]:
        exprs += [f"jnp.ones(6).reshape({s})", f"jnp.reshape(jnp.ones(6), {s})",
                  f"jnp.zeros({s})", f"jnp.ones({s})", f"jnp.full({s}, 1)",
                  f"jnp.broadcast_to(1., {s})"]
        if s != "(5, 5)":  # JAX's lax.reshape checks the size only when lowering
            exprs.append(f"lax.reshape(jnp.ones(6), {s})")
    for strides, pad in itertools.product(["(0, 1)", "(1, 0)", "(-1, 1)", "(1, 1)", "(2, 2)"],
                                          ["'VALID'", "'SAME'", "((0, 0), (1, 1))"]):
        exprs += [f"lax.conv(jnp.ones((1, 1, 4, 4)), jnp.ones((1, 1, 2, 2)), {strides}, {pad})",
                  f"lax.reduce_window(jnp.ones((4, 4)), 0., lax.add, (2, 2), {strides}, {pad})"]
    return exprs


def test_argument_validation_raises_jax_error_types():
    counts = check_table(_argument_exprs())
    assert counts["error"] > 100 and counts["ok"] > 50, counts


def _sequence_index_exprs():
    indices = ["[0, 1]", "[1]", "[]", "[[0, 1]]", "[0, slice(None)]", "[None, 0]",
               "[Ellipsis, 0]", "[True, False, True]", "[jnp.array(0), 1]", "(0, 1)",
               "([0, 1],)", "[0, [1]]", "range(2)", "([0, 1], [1, 2])"]
    exprs = []
    for idx in indices:
        x = "jnp.arange(12).reshape(3, 4)"
        exprs += [f"{x}[{idx}]", f"{x}.at[{idx}].set(0)", f"{x}.at[{idx}].get()",
                  f"jax.jit(lambda x: x[{idx}])({x})"]
    return exprs


def test_non_tuple_sequence_indices_raise_type_error_as_in_jax():
    counts = check_table(_sequence_index_exprs())
    assert counts["error"] > 30, counts


def _custom_outside_exprs():
    setup = """
@jax.custom_jvp
def cj(x, y):
    return x * y if x > 0 else -x, {'raw': x}
cj.defjvp(lambda p, t: (cj(*p), cj(*t)))

@jax.custom_vjp
def cv(x):
    return jnp.abs(x), 3
cv.defvjp(lambda x: (cv(x), None), lambda r, c: (c[0],))
"""
    exprs = []
    # (NumPy float32 scalars not: JAX wraps them in a float subclass that NumPy promotes to
    # float64 in `x * 2.`, an artefact of its argument handling)
    for a in ["2.", "-2.", "np.ones(2, 'float32')", "jnp.float32(-1)", "np.int64(3)", "1",
              "jnp.arange(3.)"]:
        exprs += [f"cj({a}, 2.)" if "(" not in a else f"cv({a})", f"cv({a})",
                  f"jax.jit(lambda a: cj(jnp.abs(a).sum() + 1, 2.))({a})",
                  f"jax.grad(lambda a: cv(jnp.abs(a) + 1.)[0].sum())(jnp.float32(1) * {a})"]
    return setup, exprs


def test_custom_derivative_functions_called_outside_transformations_match_jax():
    setup, exprs = _custom_outside_exprs()
    counts = check_table(exprs, setup=setup)
    assert counts["ok"] > 15, counts


def _float0_exprs():
    exprs = []
    for x, y in itertools.product(["1", "3", "np.int32(4)", "jnp.arange(3)", "jnp.int8(2)"],
                                  ["2.", "jnp.ones(3)", "jnp.float32(-1)"]):
        g = "jax.grad(lambda x, y: (x * y).sum(), argnums=(0, 1), allow_int=True)"
        exprs += [f"{g}({x}, {y})", f"jax.jit({g})({x}, {y})",
                  f"jax.jit(jax.grad(lambda x, y: (x * y).sum(), allow_int=True))({x}, {y})",
                  f"jax.device_put({g}({x}, {y})[0])",
                  f"jax.jit(lambda z: z)({g}({x}, {y})[0])"]
    for shape in [(), (2,), (0, 3)]:
        exprs += [f"jax.device_put(np.zeros({shape}, jax.dtypes.float0))",
                  f"jax.jit(lambda z: (z, 1.))(np.zeros({shape}, jax.dtypes.float0))"]
    return exprs


def test_float0_values_through_jit_and_device_put_match_jax():
    counts = check_table(_float0_exprs())
    assert counts["ok"] > 60, counts


def table_sizes() -> dict[str, int]:
    """How many distinct inputs each class tries (the issue's closing note quotes these)."""
    return {
        "zero-length scans": len(set(_zero_length_scan_exprs())),
        "empty cumulative reductions": len(set(_empty_reduction_exprs())),
        "0x0 linalg / empty gathers": len(set(_empty_linalg_exprs())),
        "static out-of-bounds indices": len(set(_static_index_exprs())),
        "range/memoryview/bytearray": len(set(_buffer_input_exprs())),
        "lax.map batch_size": len(set(_batched_map_exprs())),
        "int4/uint4/int2/uint2 arithmetic": len(set(_narrow_int_exprs())),
        "invalid dtypes": len(set(_invalid_dtype_exprs())),
        "tracer concrete-value methods": len(set(_tracer_method_exprs())),
        "argument validation": len(set(_argument_exprs())),
        "non-tuple sequence indices": len(set(_sequence_index_exprs())),
        "custom_jvp/vjp outside transformations": len(set(_custom_outside_exprs()[1])),
        "float0 through jit/device_put": len(set(_float0_exprs())),
    }


def _solve_shape_exprs():
    a_shapes = [(3, 3), (2, 3, 3), (1, 3, 3), (4, 2, 3, 3), (0, 0), (2, 0, 0)]
    b_shapes = [(3,), (2,), (0,), (2, 3), (1, 3), (3, 1), (3, 2), (2, 0), (2, 3, 1), (1, 3, 2),
                (2, 0, 1), (4, 2, 3), (4, 2, 3, 2), (4, 1, 3, 1)]
    exprs = []
    for a, b in itertools.product(a_shapes, b_shapes):
        a_value = f"(jnp.ones({a}) + 3 * jnp.eye({a[-1]}))"
        exprs.append(f"jnp.linalg.solve({a_value}, jnp.ones({b}))")
        if len(a) == 3:
            exprs.append(f"jax.jit(jnp.linalg.solve)({a_value}, jnp.ones({b}))")
    return exprs


def test_solve_treats_only_a_1d_b_as_a_vector_as_jax_does():
    # A batched b of a's batch shape minus one dimension was once read as a batch of vectors;
    # JAX refuses it, and laminax must not silently answer.
    counts = check_table(_solve_shape_exprs())
    assert counts["ok"] > 40, counts
