"""The rarer lax and numpy names against real JAX 0.10.2: values, dtypes and errors, eagerly
and under jit (array inputs traced), plus gradients where they apply."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from exprcompare import JAX_SNIPPET, compare, run_laminax
from jaxref import requires_jax, run_jax

R = np.random.RandomState(0)
F = R.randn(3, 4).astype(np.float32)
V = R.randn(4).astype(np.float32)
SQ = (R.randn(4, 4) + 4 * np.eye(4)).astype(np.float32)
A3 = R.randn(2, 3, 4).astype(np.float32)
B3 = R.randn(2, 4, 5).astype(np.float32)
P = R.uniform(0.5, 1.5, (5, 6)).astype(np.float32)
U32 = R.randint(0, 2**32 - 1, size=(6,), dtype=np.uint64).astype(np.uint32)
I32 = R.randint(-(2**31), 2**31 - 1, size=(6,), dtype=np.int64).astype(np.int32)
I8 = R.randint(-128, 127, size=(6,)).astype(np.int8)
IDX = np.array([-7, -1, 0, 3, 4, 12], np.int32)
BITS = R.randint(0, 2, size=(3, 11)).astype(np.uint8)
BOOLS = R.rand(2, 9) > 0.5
BYTES = R.randint(0, 256, size=(2, 3)).astype(np.uint8)
POLY = np.array([1.0, -6.0, 11.0, -6.0], np.float32)
XS = np.linspace(-1, 1, 9).astype(np.float32)
YS = (XS**2 - 0.5 * XS + R.randn(9).astype(np.float32) * 0.01).astype(np.float32)
SAMPLE = R.randn(50, 3).astype(np.float32)
IMG = R.randn(2, 3, 6, 5).astype(np.float32)
KLOC = R.randn(4, 12, 5, 4).astype(np.float32)
INPUTS = dict(F=F, V=V, SQ=SQ, A3=A3, B3=B3, P=P, U32=U32, I32=I32, I8=I8, IDX=IDX, BITS=BITS,
              BOOLS=BOOLS, BYTES=BYTES, POLY=POLY, XS=XS, YS=YS, SAMPLE=SAMPLE, IMG=IMG,
              KLOC=KLOC)

LAX_EXPRS = [
    "lax.dot(F, V)", "lax.dot(V, V)", "lax.dot(F, F.T, precision='highest')",
    "lax.dot(F, F, dimension_numbers=(((1,), (1,)), ((), ())))",
    "lax.dot(F, V.astype(np.int32))", "lax.dot(F, F)",
    "lax.dot(F.astype(np.int8), V.astype(np.int8), preferred_element_type=np.int32)",
    "lax.dot(F, V, precision=(lax.Precision.HIGH, 'float32'))",
    "lax.batch_matmul(A3, B3)", "lax.batch_matmul(F, F.T)", "lax.batch_matmul(V, F)",
    "lax.broadcast_shapes((2, 1), (3,))", "lax.broadcast_shapes((2,), (3,))",
    "lax.broadcast_like(V, F)", "lax.broadcast_like(np.float32(2), F.astype(np.int32))",
    "lax.empty((2, 3), np.int32).shape",
    "lax.associative_scan(lax.add, P)", "lax.associative_scan(lax.mul, P, axis=1)",
    "lax.associative_scan(lax.max, P, reverse=True, axis=1)",
    "lax.associative_scan(lambda a, b: (a[0] * b[0], b[0] * a[1] + b[1]), (P, F[0, 0] * P))",
    "lax.associative_scan(jnp.logaddexp, V)",
    "jax.grad(lambda p: lax.associative_scan(lax.mul, p, axis=1).sum())(P)",
    "lax.optimization_barrier((F, V))",
    "jax.grad(lambda x: lax.optimization_barrier(x * x).sum())(F)",
    "jax.vmap(lambda x: lax.optimization_barrier(x + 1))(F)",
    "lax.mulhi(U32, U32[::-1])", "lax.mulhi(I32, I32[::-1])", "lax.mulhi(I8, np.int8(-100))",
    "lax.mulhi(I32, np.int32(7))",
    "lax.index_take(A3, (IDX[:4],), (1,))", "lax.index_take(A3, (IDX[:3], IDX[3:]), (0, 2))",
    "lax.scatter_apply(V, np.array([[1], [1], [3]]), lambda v: v * 2 + 1, "
    "lax.ScatterDimensionNumbers((), (0,), (0,)), update_shape=(3,))",
    "lax.scatter_apply(V, np.array([[1], [9]]), jnp.sin, "
    "lax.ScatterDimensionNumbers((), (0,), (0,)), update_shape=(2,), mode='drop')",
    "F.at[np.array([0, 0, 2])].apply(lambda v: v * 3 - 1)", "F.at[1:, ::2].apply(jnp.exp)",
    "lax.conv_general_dilated_patches(IMG, (2, 3), (1, 2), 'SAME')",
    "lax.conv_general_dilated_patches(IMG.transpose(0, 2, 3, 1), (3, 2), (2, 1), "
    "[(1, 0), (0, 1)], rhs_dilation=(1, 2), dimension_numbers=('NHWC', 'OIHW', 'NHWC'))",
    "lax.conv_general_dilated_local(IMG, KLOC, (1, 1), 'VALID', (2, 2))",
    "lax.approx_max_k(P, 3)", "lax.approx_min_k(F, 2, reduction_dimension=0)",
    "lax.approx_max_k(jnp.where(F > 1, jnp.nan, F), 2)",
    "lax.approx_max_k(P, 4, aggregate_to_topk=False)", "lax.approx_max_k(I32, 2)",
    "jax.grad(lambda x: lax.approx_max_k(x, 3)[0].sum())(P)",
    "jax.vmap(lambda x: lax.approx_min_k(x, 2))(F)",
    "jax.grad(lambda k: lax.conv_general_dilated_local(IMG, k, (1, 1), 'VALID', (2, 2)).sum())"
    "(KLOC)",
]  # fmt: skip

SOLVE_EXPRS = [
    "lax.custom_linear_solve(lambda x: SQ @ x, V, lambda mv, b: jnp.linalg.solve(SQ, b), "
    "lambda vm, b: jnp.linalg.solve(SQ.T, b))",
    "jax.grad(lambda a, b: lax.custom_linear_solve(lambda x: a @ x, b, "
    "lambda mv, v: jnp.linalg.solve(a, v), lambda vm, v: jnp.linalg.solve(a.T, v)).sum(), "
    "argnums=(0, 1))(SQ, V)",
    "jax.jvp(lambda a: lax.custom_linear_solve(lambda x: a @ x, V, "
    "lambda mv, v: jnp.linalg.solve(a, v)), (SQ,), (SQ * 0.5,))",
    "jax.vmap(lambda b: lax.custom_linear_solve(lambda x: SQ @ x, b, "
    "lambda mv, v: jnp.linalg.solve(SQ, v), symmetric=True))(F)",
    "lax.custom_linear_solve(lambda x: SQ @ x, V, lambda mv, b: (jnp.linalg.solve(SQ, b), "
    "b.sum()), has_aux=True)",
    "jax.grad(lambda b: lax.custom_linear_solve(lambda x: SQ @ x, b, "
    "lambda mv, v: jnp.linalg.solve(SQ, v)).sum())(V)",
    "lax.custom_root(lambda x: x * x - P, jnp.ones_like(P), lambda f, x: lax.fori_loop("
    "0, 25, lambda i, x: x - f(x) / (2 * x), x), lambda g, y: y / g(jnp.ones_like(y)))",
    "jax.grad(lambda p: lax.custom_root(lambda x: x * x - p, jnp.ones_like(p), "
    "lambda f, x: lax.fori_loop(0, 25, lambda i, x: x - f(x) / (2 * x), x), "
    "lambda g, y: y / g(jnp.ones_like(y))).sum())(P)",
    "jax.grad(lambda a: lax.custom_root(lambda x: x * x - a, 1.0, lambda f, x: lax.fori_loop("
    "0, 25, lambda i, x: x - f(x) / (2 * x), x), lambda g, y: y / g(1.0)))(P[0, 0])",
    "jax.vmap(jax.grad(lambda a: lax.custom_root(lambda x: x * x - a, 1.0, "
    "lambda f, x: lax.fori_loop(0, 25, lambda i, x: x - f(x) / (2 * x), x), "
    "lambda g, y: y / g(1.0))))(P[0])",
]  # fmt: skip

SHAPE_TUPLE_EXPRS = [
    "lax.conv_shape_tuple((2, 3, 9, 8), (4, 3, 3, 2), (2, 3), 'SAME', batch_group_count=2)",
    "lax.conv_shape_tuple((2, 3, 9, 9), (4, 3, 3, 3), (1, 1), [(1, 2), (0, -1)])",
    "lax.conv_general_permutations(('NCHW', 'OIHW', 'NHWC'))",
    "lax.conv_general_shape_tuple((2, 9, 7, 3), (3, 2, 3, 4), (2, 1), 'VALID', "
    "('NHWC', 'HWIO', 'NCHW'))",
    "lax.conv_transpose_shape_tuple((1, 4, 5, 2), (3, 2, 2, 5), (2, 3), 'SAME', "
    "('NHWC', 'HWIO', 'NHWC'))",
    "lax.reduce_window_shape_tuple((7, 8), (3, 2), (2, 1), ((1, 1), (0, 1)), "
    "base_dilation=(2, 1), window_dilation=(1, 2))",
    "lax.conv_general_permutations(('NHWC', 'HWIO', 'NHW'))",
    "str(lax.dtype(1.0)) + str(lax.dtype(I8)) + str(lax.dtype(np.ones(2))) + str(lax.dtype(int))",
    "lax.dtype(1, canonicalize=True)",
]  # fmt: skip

X64_LAX_EXPRS = [
    "lax.mulhi(U32.astype(np.uint64) * np.uint64(2**31), U32.astype(np.uint64) << np.uint64(20))",
    "lax.mulhi(I32.astype(np.int64) * np.int64(-3000000), I32.astype(np.int64) << np.int64(30))",
    "lax.dot(F.astype(np.float64), V.astype(np.float64))",
]  # fmt: skip

NUMPY_EXPRS = [
    # take modes and empty reductions
    "jnp.take(F, IDX, axis=1, mode='wrap')", "jnp.take(F, IDX, mode='wrap')",
    "jnp.take(F, IDX, axis=1, mode='clip')", "jnp.take(F, IDX, axis=1)",
    "jnp.take(F, IDX, mode='raise')", "jnp.take(F, IDX, mode='promise_in_bounds')",
    "jnp.max(F[:0], axis=0, initial=2.0)", "jnp.min(I32[:0], initial=5)", "jnp.max(F[:0], axis=0)",
    "lax.reduce_max(F[:0], (0,))", "lax.reduce_min(I8[:0], (0,))",
    # bits
    "jnp.packbits(BITS)", "jnp.packbits(BITS, axis=1, bitorder='little')",
    "jnp.packbits(BOOLS, axis=0)", "jnp.unpackbits(BYTES)",
    "jnp.unpackbits(BYTES, axis=1, count=5)",
    "jnp.unpackbits(BYTES, axis=0, count=-3, bitorder='little')", "jnp.packbits(F)",
    "jnp.unpackbits(I32)",
    # special functions
    "jnp.i0(F)", "jnp.i0(I8)", "jax.grad(lambda x: jnp.i0(x).sum())(F)", "jnp.kaiser(7, 2.5)",
    "jnp.kaiser(1, 3.0)", "jnp.spacing(F * 1e3)", "jnp.spacing(F.astype(np.float16))",
    "jnp.spacing(I8)",
    # index expressions and place
    "jnp.r_[1:4, 0, V]", "jnp.r_[0:1:5j]", "jnp.r_['0,2', V, V]", "jnp.r_['-1,2,0', V, V]",
    "jnp.r_['r', V]", "jnp.c_[V, V]", "jnp.c_[F, F]", "jnp.c_[1:3, V[:2]]", "F[jnp.s_[1:, ::2]]",
    "F[jnp.index_exp[1]]", "jnp.place(F, F > 0, V[:3], inplace=False)",
    "jnp.place(F, F > 0, V[:3])",
    # histograms
    "jnp.histogramdd(SAMPLE, bins=4)", "jnp.histogramdd(SAMPLE, bins=(2, 3, 4), density=True)",
    "jnp.histogramdd(SAMPLE, bins=3, range=[(-1, 1), None, (0, 2)], weights=SAMPLE[:, 0])",
    "jnp.histogram2d(SAMPLE[:, 0], SAMPLE[:, 1], bins=5)",
    "jnp.histogram2d(SAMPLE[:, 0], SAMPLE[:, 1], bins=[3, 4], density=True)",
    # polynomials
    "jnp.polyfit(XS, YS, 2)", "jnp.polyfit(XS, jnp.stack([YS, 2 * YS], 1), 3)",
    "jnp.polyfit(XS, YS, 2, w=XS + 2)", "jnp.polyfit(XS, YS, 1, full=True)",
    "jnp.polyfit(XS, YS, 2, cov=True)", "jnp.polydiv(POLY, POLY[:2])",
    "jnp.polydiv(POLY, YS[:3])", "jnp.roots(POLY, strip_zeros=False)",
    "jnp.roots(jnp.concatenate([jnp.zeros(2), POLY]), strip_zeros=False)",
    "jnp.roots(jnp.zeros(3), strip_zeros=False)",
    # ufuncs
    "jnp.add.reduce(I8)", "jnp.add.reduce(F, axis=None)", "jnp.multiply.reduce(P, axis=1)",
    "jnp.maximum.reduce(F, axis=1, keepdims=True)", "jnp.subtract.reduce(F, axis=1)",
    "jnp.subtract.reduce(I32, initial=np.int32(3), where=I32 > 0)",
    "jnp.logaddexp.reduce(F, axis=0)", "jnp.bitwise_xor.reduce(I32)",
    "jnp.logical_and.reduce(BOOLS, axis=1)", "jnp.maximum.reduce(F[:0])",
    "jnp.add.accumulate(I8)", "jnp.subtract.accumulate(F, axis=1)",
    "jnp.logaddexp.accumulate(V)", "jnp.add.at(V, IDX[:4] % 4, 1.0, inplace=False)",
    "jnp.subtract.at(V, np.array([0, 0, 3]), F[0, :3], inplace=False)",
    "jnp.maximum.at(V, np.array([1, 1]), np.float32(9), inplace=False)",
    "jnp.negative.at(V, np.array([1, 1, 2]), inplace=False)", "jnp.add.at(V, 0, 1.0)",
    "jnp.add.outer(V, F[0])", "jnp.multiply.outer(I8[:3], I32[:2])",
    "jnp.add.reduceat(I32, np.array([0, 4, 1, 5]))", "jnp.add(F, V, out=F)",
    "jnp.frompyfunc(lambda a, b: a * b + 1, 2, 1, identity=1)(I8, np.int8(2))",
    "jnp.frompyfunc(lambda a, b: a * b + 1, 2, 1, identity=1).reduce(I8[:4])",
    "jnp.frompyfunc(lambda a, b: a * b + 1, 2, 1).accumulate(V)",
    "jnp.frompyfunc(lambda a: (a, -a), 1, 2)(V)", "jnp.negative.reduce(V)",
    "repr(jnp.add) + repr(jnp.frompyfunc(jnp.sin, 1, 1))",
    "(jnp.add.nin, jnp.add.nout, jnp.add.nargs, jnp.add.identity, jnp.maximum.identity)",
    # host data
    "jnp.frombuffer(b'\\x01\\x02\\x03\\x04', dtype=np.uint8)",
    "jnp.fromstring('1 2 3', dtype=np.int32, sep=' ')", "jnp.fromiter(iter([1, 2]), np.int32)",
]  # fmt: skip

TABLES = {"lax": LAX_EXPRS, "x64_lax": X64_LAX_EXPRS, "numpy": NUMPY_EXPRS,
          "solves": SOLVE_EXPRS, "shape_tuples": SHAPE_TUPLE_EXPRS}
X64_TABLES = {"x64_lax"}


@functools.cache
def _jax_results(table: str):
    return run_jax(JAX_SNIPPET, x64=table in X64_TABLES, exprs=TABLES[table], inputs=INPUTS)


def _cases(*tables):
    return [pytest.param(t, e, id=f"{t}:{e}") for t in tables for e in TABLES[t]]


@requires_jax
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("table,expr", _cases("lax", "numpy", "solves"))
def test_matches_jax(table, expr, jit):
    theirs = _jax_results(table)[TABLES[table].index(expr)][jit]
    compare(expr, run_laminax(expr, INPUTS, jit), theirs, rtol=2e-5, atol=2e-5)


@requires_jax
@pytest.mark.parametrize("table,expr", _cases("shape_tuples"))
def test_shape_calculators_match_jax(table, expr):
    theirs = _jax_results(table)[TABLES[table].index(expr)][False]
    compare(expr, run_laminax(expr, INPUTS, False), theirs)


@requires_jax
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("table,expr", _cases(*X64_TABLES))
def test_matches_jax_with_x64(table, expr, jit):
    from laminax_core import config

    theirs = _jax_results(table)[TABLES[table].index(expr)][jit]
    with config.enable_x64(True):
        ours = run_laminax(expr, INPUTS, jit)
    compare(expr, ours, theirs, rtol=1e-12, atol=1e-12)
