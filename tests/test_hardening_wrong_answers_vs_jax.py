"""Issue 12, "silently wrong": classes of input where laminax once gave a wrong number and JAX
raises or answers otherwise. Each test runs many inputs of its class under both and requires
JAX's value or JAX's error type for every one (see hardening_table)."""

from __future__ import annotations

import itertools

import numpy as np
from hardening_table import check_table
from hypothesis import given, settings
from hypothesis import strategies as st
from jaxref import requires_jax

pytestmark = requires_jax

INT32 = 2**31
BOUNDARY_INTS = [
    0, 1, -1, 255, 256, -129, INT32 - 1, INT32, -INT32, -INT32 - 1, 2**32 - 1, 2**32, 2**40,
    -(2**40), 2**63 - 1, 2**63, -(2**63) - 1, 2**64, 2**100, -(2**100),
]  # fmt: skip


def _weak_int_exprs(values):
    exprs = []
    dtypes = ["int32", "uint8", "int8", "uint32", "int16", "float32", "bool"]
    templates = [
        "jnp.arange(3, dtype='{dt}') + ({v})", "({v}) - jnp.arange(3, dtype='{dt}')",
        "jnp.arange(3, dtype='{dt}') * ({v})", "jnp.arange(3, dtype='{dt}') < ({v})",
        "jnp.arange(3, dtype='{dt}') == ({v})", "jnp.maximum(jnp.arange(3, dtype='{dt}'), {v})",
        "jnp.minimum({v}, jnp.arange(3, dtype='{dt}'))",
        "jnp.where(jnp.arange(3) > 0, jnp.arange(3, dtype='{dt}'), {v})",
        "jax.jit(lambda x: x * ({v}))(jnp.arange(3, dtype='{dt}'))",
        "jnp.add(jnp.arange(3, dtype='{dt}'), {v})", "jnp.asarray({v})",
        "jax.jit(lambda x: x)({v})", "jnp.float32(1) + ({v})",
    ]  # fmt: skip
    for v, dt, t in itertools.product(values, dtypes, templates):
        if "bool" == dt and "arange" not in t:
            continue
        expr = t.format(v=v, dt=dt).replace("jnp.arange(3, dtype='bool')",
                                            "jnp.array([True, False, True])")
        exprs.append(expr)
    return exprs


def test_python_ints_beyond_the_weak_int_dtype_raise_overflow_error_as_in_jax():
    exprs = _weak_int_exprs(BOUNDARY_INTS)
    counts = check_table(exprs)
    assert counts["error"] > 200 and counts["ok"] > 200, counts


@settings(max_examples=3, deadline=None)
@given(st.lists(st.integers(-(2**70), 2**70), min_size=4, max_size=4))
def test_random_python_ints_as_weak_operands_match_jax(values):
    check_table(_weak_int_exprs(values))


def _mask_exprs():
    exprs = []
    for n in range(0, 7):
        mask = [bool(i % 2 == 0) for i in range(n)]
        for shape in [(4,), (4, 3), (2, 4)]:
            x = f"jnp.arange({int(np.prod(shape))}.).reshape({shape})"
            exprs += [
                f"{x}[jnp.array({mask}, dtype=bool)]",
                f"{x}[np.array({mask}, dtype=bool)]",
                f"{x}[:, np.array({mask}, dtype=bool)]" if len(shape) > 1 else f"{x}[..., "
                f"np.array({mask}, dtype=bool)]",
                f"{x}.at[np.array({mask}, dtype=bool)].set(-1.)",
                f"{x}.at[np.array({mask}, dtype=bool)].add(2.)",
                f"{x}.at[np.array({mask}, dtype=bool)].get()",
                f"jax.jit(lambda x: x[np.array({mask}, dtype=bool)])({x})",
                f"{x}[np.array({mask}, dtype=bool), ...]",
            ]
    for rows, cols in itertools.product(range(1, 5), range(1, 5)):
        m = np.arange(rows * cols).reshape(rows, cols) % 3 == 0
        exprs.append(f"jnp.arange(12.).reshape(4, 3)[np.array({m.tolist()})]")
        exprs.append(f"jnp.arange(24.).reshape(2, 4, 3)[:, np.array({m.tolist()})]")
    return exprs


def test_boolean_masks_must_match_the_axes_they_index_as_in_jax():
    counts = check_table(_mask_exprs())
    assert counts["error"] > 100 and counts["ok"] > 30, counts


def _integer_division_by_zero_exprs():
    exprs = []
    for dt in ["int8", "int16", "int32", "uint8", "uint16", "uint32"]:
        signed = dt.startswith("i")
        x = f"jnp.array({[-7, -3, -1, 0, 1, 3, 7] if signed else [7, 3, 1, 0, 1, 3, 7]}, '{dt}')"
        y = f"jnp.array({[0, 2, 0, -3, 0, 0, 5] if signed else [0, 2, 0, 3, 0, 0, 5]}, '{dt}')"
        for op in ["{x} % {y}", "jnp.mod({x}, {y})", "jnp.remainder({x}, {y})",
                   "jnp.fmod({x}, {y})", "jnp.divmod({x}, {y})", "{x} // {y}",
                   "jax.jit(lambda a, b: a % b)({x}, {y})",
                   "jax.jit(jnp.fmod)({x}, {y})", "jax.jit(jnp.divmod)({x}, {y})",
                   "{x} % 0", "jnp.fmod({x}, 0)", "divmod({x}, 0)",
                   "jax.vmap(jnp.remainder)({x}, {y})"]:
            exprs.append(op.format(x=x, y=y))
    return exprs


def test_integer_remainder_by_zero_gives_jax_values():
    counts = check_table(_integer_division_by_zero_exprs())
    assert counts["ok"] > 60, counts


def _negative_power_exprs():
    exprs = []
    for dt, n in itertools.product(["int8", "int32", "uint8", "uint32", "float32", "int16"],
                                   range(-4, 5)):
        x = f"jnp.arange(1, 4, dtype='{dt}')"
        exprs += [f"{x} ** {n}", f"jnp.power({x}, {n})", f"lax.integer_pow({x}, {n})",
                  f"jax.jit(lambda x: x ** {n})({x})", f"jnp.{dt}(2) ** {n}",
                  f"jax.grad(lambda x: (x ** {n}).sum())({x}.astype('float32'))"]
    return exprs


def test_negative_integer_powers_raise_as_in_jax():
    counts = check_table(_negative_power_exprs())
    assert counts["error"] > 50 and counts["ok"] > 100, counts


def _integer_pow_exponent_exprs():
    exprs = []
    for y in ["1.5", "2.0", "'2'", "None", "np.int32(2)", "np.int64(-1)", "3", "0", "-2",
              "np.float32(2)", "[2]", "(2,)", "1j"]:
        for x in ["jnp.arange(3.)", "jnp.arange(3)", "jnp.ones((2, 2), 'float16')",
                  "jnp.float32(2)"]:
            exprs += [f"lax.integer_pow({x}, {y})",
                      f"jax.jit(lambda x: lax.integer_pow(x, {y}))({x})"]
    return exprs


def test_integer_pow_exponents_are_checked_as_in_jax():
    counts = check_table(_integer_pow_exponent_exprs())
    assert counts["error"] > 40, counts


def _vmap_axes_exprs():
    exprs = []
    for rank, axis in itertools.product(range(0, 3), range(-6, 6)):
        shape = (3,) + (2,) * rank
        x = f"jnp.ones({shape})"
        exprs += [f"jax.vmap(lambda x: x, out_axes={axis})({x})",
                  f"jax.vmap(lambda x: (x, x.sum()), out_axes=({axis}, 0))({x})",
                  f"jax.vmap(lambda x: x, in_axes={axis})({x})",
                  f"jax.jit(jax.vmap(lambda x: x * 2, out_axes={axis}))({x})"]
    return exprs


def test_vmap_axes_out_of_range_raise_as_in_jax():
    counts = check_table(_vmap_axes_exprs())
    assert counts["error"] > 50 and counts["ok"] > 40, counts


CUSTOM_VJP_SETUP = """
def make(bwd_out):
    @jax.custom_vjp
    def f(x, y):
        return x * y[0]
    f.defvjp(lambda x, y: (f(x, y), (x, y)), lambda res, g: bwd_out(res, g))
    return f

def grads(bwd_out, x=jnp.ones(3), y=(jnp.ones(3), jnp.ones(3))):
    return jax.grad(lambda x, y: make(bwd_out)(x, y).sum(), argnums=(0, 1))(x, y)
"""


def _custom_vjp_exprs():
    outs = [
        "(g, (g, g))", "(g, (g, None))", "(None, None)", "[g, (g, g)]", "(g, g)", "(g,)", "g",
        "(g, (g, g), g)", "(jnp.ones(5), (g, g))", "(g.sum(), (g, g))", "(g[None], (g, g))",
        "(g, (jnp.ones(2), g))", "(g.astype('float16'), (g, g))", "(g.astype('int32'), (g, g))",
        "(g, (g, g.astype('bfloat16')))", "(g, (g[:2], g))", "(g, [g, g])", "(g, {'a': g})",
        "(jnp.ones((3, 1)), (g, g))", "(jnp.ones(()), (g, g))", "('a', (g, g))",
        "(g, (g, g.reshape(3, 1)))", "(2 * g, (g * 3, None))", "(g, None)", "((g,), (g, g))",
    ]  # fmt: skip
    exprs = [f"grads(lambda r, g: {o})" for o in outs]
    exprs += [f"grads(lambda r, g: {o}, x=jnp.ones((2, 3)), y=(jnp.ones((2, 3)), jnp.ones(3)))"
              for o in outs[:12]]
    exprs += [f"jax.vmap(lambda x: grads(lambda r, g: {o}, x=x, y=(x, x)))(jnp.ones((2, 3)))"
              for o in outs[:12]]
    return exprs


def test_custom_vjp_bwd_outputs_are_checked_as_in_jax():
    counts = check_table(_custom_vjp_exprs(), setup=CUSTOM_VJP_SETUP)
    assert counts["error"] > 15 and counts["ok"] > 15, counts


def _fori_bound_exprs():
    bounds = ["0", "3", "jnp.int32(0)", "jnp.int32(3)", "jnp.int16(3)", "jnp.int8(0)",
              "jnp.uint32(3)", "0.0", "3.0", "jnp.float32(3)", "np.int64(3)", "jnp.uint8(0)"]
    exprs = []
    for lo, hi in itertools.product(bounds, repeat=2):
        exprs.append(f"lax.fori_loop({lo}, {hi}, lambda i, c: c + 1, 0)")
        exprs.append(f"jax.jit(lambda: lax.fori_loop({lo}, {hi}, lambda i, c: c + 2., 0.))()")
    return exprs


def test_fori_loop_bounds_must_share_a_dtype_as_in_jax():
    counts = check_table(_fori_bound_exprs())
    assert counts["error"] > 50 and counts["ok"] > 50, counts


def _masked_array_exprs():
    exprs = []
    for dt, mask in itertools.product(["int32", "float32", "bool", "uint8"],
                                      [[0, 1, 0], [0, 0, 0], [1, 1, 1], False]):
        m = f"np.ma.array(np.array([1, 0, 2], '{dt}'), mask={mask})"
        exprs += [f"jnp.asarray({m})", f"jnp.array({m})", f"jnp.sum({m})",
                  f"jax.jit(lambda x: x)({m})", f"jax.device_put({m})", f"jnp.add({m}, 1)"]
    return exprs


def test_numpy_masked_arrays_are_refused_as_in_jax():
    counts = check_table(_masked_array_exprs())
    # jnp.array copies the data (JAX drops the mask there); everything else refuses
    assert counts["error"] == 80 and counts["ok"] == 16, counts
