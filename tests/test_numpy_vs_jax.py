"""laminax_core.numpy against real JAX 0.10.2 (jax.numpy): the same expressions evaluated in
both, comparing values, dtypes and weak types (of `eval_shape`), and error types.

Each case is a Python expression over `jnp`, `np` and named inputs. All cases of a table are
sent to JAX in one snippet (per x64 setting) and compared one by one.
"""

from __future__ import annotations

import functools

import laminax_core
import laminax_core.numpy as lnp
import numpy as np
import pytest
from jaxref import requires_jax, run_jax
from laminax_core import config
from laminax_pytree import tree_leaves

R = np.random.RandomState(0)
F = R.randn(3, 4).astype(np.float32)
G = R.randn(3, 4).astype(np.float32)
P = (R.rand(3, 4) + 0.5).astype(np.float32)
H = R.randn(4).astype(np.float16)
B = R.rand(3, 4) > 0.5
IN = R.randint(-5, 6, size=(3, 4)).astype(np.int32)
J = R.randint(1, 4, size=(4,)).astype(np.int32)
U = R.randint(0, 9, size=(4,)).astype(np.uint8)
I8 = R.randint(-5, 6, size=(4,)).astype(np.int8)
SQ = (R.randn(4, 4) + 4 * np.eye(4)).astype(np.float32)
SPD = (SQ @ SQ.T).astype(np.float32)
NANS = np.array([1.0, np.nan, -np.inf, 3.0, np.nan, 0.0], np.float32)
IDX = np.array([2, 0, -1], np.int32)
INPUTS = dict(F=F, G=G, P=P, H=H, B=B, IN=IN, J=J, U=U, I8=I8, SQ=SQ, SPD=SPD, NANS=NANS, IDX=IDX)

UFUNC_EXPRS = [
    "jnp.add(F, G)", "jnp.add(F, 1)", "jnp.add(H, 1.0)", "jnp.add(IN, 2.5)", "jnp.add(I8, U)",
    "jnp.add(I8, 3)", "jnp.add(U, -1)", "jnp.add(B, B)", "jnp.add(1, 2.0)", "jnp.add(H, I8)",
    "jnp.subtract(F, IN)", "jnp.multiply(B, IN)", "jnp.multiply(3, U)", "jnp.divide(IN, J)",
    "jnp.true_divide(I8, 2)", "jnp.floor_divide(IN, J)", "jnp.floor_divide(F, P)",
    "jnp.remainder(IN, J)", "jnp.remainder(F, -P)", "jnp.fmod(IN, J)", "jnp.fmod(F, P)",
    "jnp.divmod(IN, J)", "jnp.power(F, 2)", "jnp.power(P, G)", "jnp.power(IN, 3)",
    "jnp.power(J, J)", "jnp.power(2, J)", "jnp.float_power(J, 2)", "jnp.maximum(F, G)",
    "jnp.minimum(IN, 0)", "jnp.fmax(NANS, 2.0)", "jnp.fmin(NANS, NANS[::-1])",
    "jnp.maximum(NANS, 0.0)", "jnp.arctan2(F, G)", "jnp.hypot(F, G)", "jnp.logaddexp(F, G)",
    "jnp.logaddexp2(F, 1.0)", "jnp.copysign(F, G)", "jnp.heaviside(F, 0.5)",
    "jnp.nextafter(F, G)", "jnp.negative(U)", "jnp.positive(I8)", "jnp.abs(I8)",
    "jnp.absolute(F)", "jnp.sign(F)", "jnp.sign(IN)", "jnp.square(I8)", "jnp.sqrt(P)",
    "jnp.sqrt(J)", "jnp.cbrt(F)", "jnp.reciprocal(P)", "jnp.reciprocal(J)", "jnp.exp(F)",
    "jnp.exp(2)", "jnp.exp2(F)", "jnp.expm1(F)", "jnp.log(P)", "jnp.log2(P)", "jnp.log10(J)",
    "jnp.log1p(P)", "jnp.sin(H)", "jnp.cos(IN)", "jnp.tan(F * 0.5)", "jnp.arcsin(F * 0.2)",
    "jnp.arccos(F * 0.2)", "jnp.arctan(F)", "jnp.sinh(F)", "jnp.cosh(F)", "jnp.tanh(F)",
    "jnp.arcsinh(F)", "jnp.arccosh(P + 1)", "jnp.arctanh(F * 0.2)", "jnp.floor(F)",
    "jnp.floor(IN)", "jnp.ceil(F)", "jnp.trunc(F)", "jnp.fix(F)", "jnp.rint(F * 3)",
    "jnp.rint(J)", "jnp.round(F * 10)", "jnp.round(F, 2)", "jnp.round(IN)", "jnp.around(F, 1)",
    "jnp.deg2rad(F)", "jnp.rad2deg(IN)", "jnp.degrees(F)", "jnp.radians(F)", "jnp.signbit(F)",
    "jnp.signbit(IN)", "jnp.sinc(F)", "jnp.isnan(NANS)", "jnp.isinf(NANS)",
    "jnp.isfinite(NANS)", "jnp.isposinf(NANS)", "jnp.isneginf(NANS)", "jnp.isnan(IN)",
    "jnp.nan_to_num(NANS)", "jnp.nan_to_num(NANS, nan=-1.0, neginf=5.0)", "jnp.real(F)",
    "jnp.imag(F)", "jnp.conj(IN)", "jnp.angle(F)", "jnp.equal(F, G)", "jnp.not_equal(IN, 0)",
    "jnp.less(IN, J)", "jnp.less_equal(F, 0.0)", "jnp.greater(U, 4)", "jnp.greater_equal(I8, U)",
    "jnp.logical_and(B, IN)", "jnp.logical_or(B, 0)", "jnp.logical_xor(IN, J)",
    "jnp.logical_not(IN)", "jnp.bitwise_and(IN, J)", "jnp.bitwise_or(U, 3)",
    "jnp.bitwise_xor(B, B[::-1])", "jnp.invert(U)", "jnp.invert(B)", "jnp.left_shift(J, 2)",
    "jnp.right_shift(IN, 1)", "jnp.right_shift(U, 1)", "jnp.bitwise_count(IN)",
    "jnp.where(B, F, G)", "jnp.where(IN > 0, IN, 0.5)", "jnp.where(B, 1, 2)",
    "jnp.clip(F, -0.5, 0.5)",
    "jnp.clip(IN, max=2)", "jnp.clip(H, 0, 1)", "jnp.isclose(F, F + 1e-6)",
    "jnp.isclose(NANS, NANS, equal_nan=True)", "jnp.allclose(F, G)", "jnp.array_equal(F, F)",
    "jnp.array_equal(F, F[:2])", "jnp.array_equiv(F, F[0])",
]

REDUCTION_EXPRS = [
    "jnp.sum(F)", "jnp.sum(I8)", "jnp.sum(U)", "jnp.sum(B)", "jnp.sum(H)", "jnp.sum(F, axis=0)",
    "jnp.sum(F, axis=1, keepdims=True)", "jnp.sum(IN, axis=(0, 1), dtype=jnp.float32)",
    "jnp.sum(F, where=B, initial=1.0)", "jnp.sum(I8, promote_integers=False)", "jnp.sum(1.0)",
    "jnp.prod(P, axis=1)", "jnp.prod(I8)", "jnp.max(F, axis=0)", "jnp.min(IN, axis=1)",
    "jnp.max(F, where=B, initial=-10.0)", "jnp.amax(NANS)", "jnp.amin(U)", "jnp.all(B, axis=0)",
    "jnp.any(IN, axis=1)", "jnp.mean(F)", "jnp.mean(IN, axis=0)", "jnp.mean(H)",
    "jnp.mean(F, where=B)", "jnp.var(F, axis=1)", "jnp.var(IN, ddof=1)", "jnp.std(F, axis=0)",
    "jnp.std(H)", "jnp.ptp(F, axis=1)", "jnp.count_nonzero(IN, axis=0)",
    "jnp.argmax(F, axis=1)", "jnp.argmin(F)", "jnp.argmax(NANS)",
    "jnp.argmin(IN, axis=0, keepdims=True)",
    "jnp.cumsum(F, axis=1)", "jnp.cumsum(I8)", "jnp.cumsum(B)", "jnp.cumprod(P, axis=0)",
    "jnp.nansum(NANS)", "jnp.nanprod(NANS)", "jnp.nanmax(NANS)", "jnp.nanmin(NANS)",
    "jnp.nanmean(NANS)", "jnp.nanvar(NANS)", "jnp.nanstd(NANS)", "jnp.nanargmax(NANS)",
    "jnp.nanargmin(NANS)", "jnp.nancumsum(NANS)", "jnp.nancumprod(NANS)",
    "jnp.average(F, axis=1, weights=J.astype(jnp.float32))", "jnp.average(IN)",
    "jnp.median(F, axis=0)", "jnp.median(NANS)", "jnp.nanmedian(NANS)",
    "jnp.quantile(F, 0.3, axis=1)", "jnp.quantile(F, jnp.array([0.1, 0.9]), method='lower')",
    "jnp.percentile(F, 75, axis=0, keepdims=True)", "jnp.nanpercentile(NANS, 40)",
    "jnp.cumulative_sum(J, include_initial=True)",
]

SHAPE_EXPRS = [
    "jnp.reshape(F, (2, -1))", "jnp.reshape(F, (6, 2), order='F')", "jnp.ravel(F)",
    "jnp.transpose(F)", "jnp.moveaxis(F[None], 0, -1)", "jnp.swapaxes(F, 0, 1)",
    "jnp.squeeze(F[None, :, None])", "jnp.expand_dims(F, (0, 3))", "jnp.broadcast_to(J, (2, 4))",
    "jnp.broadcast_arrays(F, J)", "jnp.atleast_1d(1.0)", "jnp.atleast_2d(J)", "jnp.atleast_3d(F)",
    "jnp.concatenate([F, G], axis=0)", "jnp.concatenate([I8, U])",
    "jnp.concatenate([F, IN], axis=None)",
    "jnp.stack([F, G], axis=-1)", "jnp.vstack([J, J])", "jnp.hstack([F, G])", "jnp.dstack([F, G])",
    "jnp.column_stack([J, J])", "jnp.split(F, 2, axis=1)", "jnp.array_split(F, 3, axis=1)",
    "jnp.tile(J, (2, 2))", "jnp.repeat(F, 2, axis=0)", "jnp.repeat(J, J)",
    "jnp.repeat(J, 2, total_repeat_length=7)", "jnp.flip(F)", "jnp.fliplr(F)", "jnp.flipud(F)",
    "jnp.rot90(F, 3)", "jnp.roll(F, 5)", "jnp.roll(F, (1, -1), (0, 1))",
    "jnp.pad(F, 1)", "jnp.pad(F, ((1, 0), (0, 2)), constant_values=9.0)",
    "jnp.pad(J, (5, 3), mode='wrap')", "jnp.pad(J, (5, 6), mode='reflect')",
    "jnp.pad(F, 2, mode='symmetric')", "jnp.pad(F, (1, 3), mode='edge')", "jnp.append(F, G)",
    "jnp.diagonal(F, 1)", "jnp.diag(J, -1)", "jnp.diag(SQ)", "jnp.trace(SQ)", "jnp.tril(F, 1)",
    "jnp.triu(SQ)", "jnp.diagflat(J)",
]

CREATION_EXPRS = [
    "jnp.zeros((2, 3))", "jnp.ones(3, dtype=jnp.int8)", "jnp.full((2,), 3)", "jnp.full(2, 1.5)",
    "jnp.full((2, 4), J)", "jnp.empty(2)", "jnp.zeros_like(I8)", "jnp.ones_like(F, dtype=int)",
    "jnp.full_like(J, 2.7)", "jnp.zeros_like(2.0)", "jnp.arange(5)", "jnp.arange(2, 11, 3)",
    "jnp.arange(1.0, 2.0, 0.25)", "jnp.arange(5, dtype=jnp.float16)", "jnp.linspace(0, 1, 6)",
    "jnp.linspace(2, 3, 4, endpoint=False, retstep=True)", "jnp.linspace(0, 10, 5, dtype=int)",
    "jnp.linspace(J, 2 * J, 3, axis=1)", "jnp.logspace(0, 2, 3)", "jnp.geomspace(1, 8, 4)",
    "jnp.eye(3, 4, 1)", "jnp.identity(2, dtype=jnp.int32)", "jnp.tri(3, k=-1)",
    "jnp.meshgrid(J, J[:2])", "jnp.meshgrid(J, J[:2], indexing='ij', sparse=True)",
    "jnp.array([1, 2.5])", "jnp.array(1.0)", "jnp.asarray(np.float64(2))", "jnp.array([[True]])",
    "jnp.array(F, ndmin=4)", "jnp.float32(3)", "jnp.int8(300)", "jnp.bfloat16(1.5)",
    "jnp.asarray(J, dtype=jnp.float16)", "jnp.array([F[0, 0], 2.0])",
]

INDEXING_EXPRS = [
    "F[1]", "F[-1, 2]", "F[1:, ::2]", "F[::-1]", "F[:, 3:0:-2]", "F[None, 1, ..., None]",
    "F[..., IDX]", "F[IDX]", "F[IDX, IDX]", "F[IDX[:, None], J[:2]]", "F[1, IDX]", "F[:, [0, 3]]",
    "F[B]", "F[B[:, 0]]", "F[np.array([5, -9])]", "F[J - 1, :]", "F[True]", "F[..., False]",
    "F.at[1].set(5.0)", "F.at[IDX].add(1.0)", "F.at[:, 1].multiply(2.0)",
    "F.at[np.array([1, 1])].add(G[0])", "F.at[IDX, 0].min(-1.0)", "F.at[B].max(0.0)",
    "F.at[np.array([7])].set(1.0)", "F.at[np.array([7])].set(1.0, mode='clip')",
    "F.at[np.array([9, 1])].get(mode='fill', fill_value=-1.0)", "F.at[2].get()",
    "F.at[0].divide(2.0)", "F.at[1:].power(2)", "F.at[0].apply(jnp.sin)",
    "IN.at[0].set(2.7)", "jnp.take(F, IDX, axis=1)", "jnp.take(F, np.array([20, 1]))",
    "jnp.take(J, np.array([9, -1]), mode='clip')",
    "jnp.take_along_axis(F, jnp.argsort(F, axis=1), 1)",
    "jnp.take_along_axis(F, IN[:, :1] % 4, axis=1)", "jnp.take_along_axis(F, IN[:1] % 3, 0)",
    "jnp.take_along_axis(F[:1], IN % 4, axis=1)", "jnp.take_along_axis(F, IN, axis=-1)",
    "jnp.take_along_axis(F, IN, axis=1, mode='clip')", "jnp.take_along_axis(J, U[:3], None)",
    "jnp.take_along_axis(F, IN[:, :2] + 9, 1, fill_value=-1.0)",
    "jnp.take_along_axis(F, IN % 4, 1, mode='promise_in_bounds')",
    "jnp.take_along_axis(F, I8[None], 0, wrap_negative_indices=False, mode='clip')",
    "jnp.take_along_axis(F[:, :0], IN[:, :2], 1)",
    "jnp.nonzero(IN)", "jnp.nonzero(IN, size=5, fill_value=-1)", "jnp.flatnonzero(B)",
    "jnp.argwhere(B)", "jnp.where(B)", "jnp.argwhere(IN, size=3)",
]

PRODUCT_EXPRS = [
    "jnp.dot(F, G.T)", "jnp.dot(J, J)", "jnp.dot(F, 2.0)", "jnp.dot(IN, J)", "jnp.matmul(F, G.T)",
    "jnp.matmul(J, IN.T)", "F @ G.T", "jnp.vdot(F, G)", "jnp.vecdot(F, G)", "jnp.inner(F, G)",
    "jnp.outer(J, F[0])", "jnp.tensordot(F, G, ([0, 1], [0, 1]))", "jnp.tensordot(F, G.T, 1)",
    "jnp.kron(J[:2], F)", "jnp.einsum('ij,kj->ik', F, G)", "jnp.einsum('ii', SQ)",
    "jnp.einsum('ij,jk,kl->il', F, G.T, SQ[:3, :2])", "jnp.einsum('...j,j', F, J)",
    "jnp.einsum('ij', IN)", "jnp.einsum(F, [0, 1], G, [0, 1], [1])",
    "jnp.sort(F, axis=0)", "jnp.sort(NANS)", "jnp.sort(IN, axis=None)", "jnp.argsort(F)",
    "jnp.argsort(IN[0], descending=True)", "jnp.lexsort((J, U))",
    "jnp.searchsorted(jnp.sort(NANS), NANS)", "jnp.searchsorted(jnp.arange(5), J, side='right')",
    "jnp.unique(IN)", "jnp.unique(IN, return_index=True, return_inverse=True, return_counts=True)",
    "jnp.unique(J, size=4)", "jnp.unique(NANS, size=6, fill_value=-1.0)",
    "jnp.bincount(J)", "jnp.bincount(J, weights=F[0], length=6)", "jnp.histogram(F, bins=4)",
    "jnp.histogram(F, bins=3, range=(-1.0, 1.0), density=True)",
    "jnp.linalg.norm(F)", "jnp.linalg.norm(F, ord=1)", "jnp.linalg.norm(F, axis=1, ord=3)",
    "jnp.linalg.norm(SQ, ord='nuc')", "jnp.linalg.norm(SQ, ord=-2)", "jnp.linalg.det(SQ)",
    "jnp.linalg.slogdet(SQ)", "jnp.linalg.inv(SQ)", "jnp.linalg.solve(SQ, J)",
    "jnp.linalg.cholesky(SPD)", "jnp.linalg.eigvalsh(SPD)", "jnp.linalg.svd(F, compute_uv=False)",
    "jnp.linalg.pinv(F)", "jnp.linalg.matrix_rank(F)", "jnp.linalg.matrix_power(SQ, 3)",
    "jnp.linalg.multi_dot([F, G.T, SQ[:3]])", "jnp.linalg.cond(SPD)",
    "jnp.abs(jnp.linalg.qr(F.T)[1])",
]

ERROR_EXPRS = [
    "jnp.add(F, [1, 2])", "jnp.add(F, J[:3])", "jnp.reshape(F, (5, -1))", "jnp.sum(F, axis=2)",
    "F[5]", "F[0, 0, 0]", "jnp.concatenate([F, J])", "jnp.max(F, where=B)",
    "jnp.zeros((2.5,))", "jnp.subtract(B, B)", "jnp.bitwise_and(F, F)", "jnp.matmul(F, F)",
    "jnp.split(J, 3)", "jnp.stack([F, J])", "jnp.round(IN, -1)",
    "jnp.linalg.inv(F)", "jnp.einsum('ij,jk', F, F)", "jnp.transpose(F, (0, 0))",
    "jnp.squeeze(F, 0)", "jnp.arange(0, 3, 0)", "jnp.take_along_axis(F, F, 1)",
    "jnp.take_along_axis(F, IN, None)", "jnp.take_along_axis(F, J, 0)",
    "jnp.take_along_axis(F, IN[:2, :2], 1)",
]

EXTRA_EXPRS = [
    "jnp.indices((2, 3))", "jnp.unravel_index(IDX + 3, (2, 4))",
    "jnp.ravel_multi_index((J - 1, J), (4, 5), mode='clip')", "jnp.tril_indices(3, 1)",
    "jnp.triu_indices_from(SQ, -1)", "jnp.diag_indices(3)",
    "jnp.select([F > 0, F < -1], [F, G], 2)",
    "jnp.choose(J - 1, [F[0], G[0], P[0]], mode='clip')", "jnp.compress(B[0], F, axis=1)",
    "jnp.extract(B, F)", "jnp.piecewise(F, [F < 0], [lambda x: -x, 3.0])", "jnp.delete(F, 1, 1)",
    "jnp.insert(J, 1, 9)", "jnp.diff(F, axis=0)", "jnp.diff(IN, 2)", "jnp.diff(B)",
    "jnp.ediff1d(J, to_begin=0)", "jnp.gradient(F)", "jnp.trapezoid(F)",
    "jnp.convolve(F[0], G[1])",
    "jnp.convolve(J, J, mode='same')", "jnp.correlate(F[0], G[1], mode='full')",
    "jnp.interp(F, jnp.sort(G[0]), P[0])", "jnp.unwrap(F[0] * 4)",
    "jnp.digitize(F, jnp.sort(G[0]))",
    "jnp.cov(F)", "jnp.cov(F, rowvar=False)", "jnp.corrcoef(F, G)", "jnp.hamming(5)",
    "jnp.hanning(4)", "jnp.blackman(6)", "jnp.bartlett(5)", "jnp.polyval(J, F)",
    "jnp.polyadd(J, F[0])", "jnp.polymul(J, J)", "jnp.polyder(F[0])", "jnp.polyint(J)",
    "jnp.poly(F[0])", "jnp.vander(J)", "jnp.isin(IN, J)", "jnp.intersect1d(IN, J)",
    "jnp.union1d(IN, J)", "jnp.setdiff1d(IN, J)", "jnp.setxor1d(IN, J)",
    "jnp.partition(IN[0], 1)", "jnp.argpartition(F, 2, axis=1)", "jnp.sort_complex(F[0])",
    "jnp.ldexp(F, IN)", "jnp.frexp(F)", "jnp.modf(F)", "jnp.gcd(IN, J)", "jnp.lcm(IN, J)",
    "jnp.fabs(IN)", "jnp.acos(F * 0.3)", "jnp.atan2(F, G)", "jnp.rollaxis(F, 1)",
    "jnp.resize(J, (3, 3))", "jnp.block([[F, G], [G, F]])", "jnp.cross(F[:, :3], G[:, 1:])",
    "jnp.matvec(F, J)", "jnp.vecmat(J[:3], F)", "jnp.mgrid[0:2, 0:3]", "jnp.ogrid[0:3:4j]",
    "jnp.vectorize(lambda a, b: a + b)(F, J)", "jnp.apply_along_axis(jnp.sort, 0, F)",
    "jnp.fromfunction(lambda i, j: i * j, (3, 2))", "jnp.histogram_bin_edges(F, bins=3)",
    "jnp.put(J, np.array([0]), 5, inplace=False)", "jnp.fill_diagonal(SQ, 0.0, inplace=False)",
    "jnp.trim_zeros(J * 0)", "jnp.astype(F, jnp.int16)",
]

TABLES = {"ufuncs": UFUNC_EXPRS, "reductions": REDUCTION_EXPRS, "shape": SHAPE_EXPRS,
          "creation": CREATION_EXPRS, "indexing": INDEXING_EXPRS, "products": PRODUCT_EXPRS,
          "errors": ERROR_EXPRS, "extras": EXTRA_EXPRS}

_JAX_SNIPPET = """
def _weak_types(expr, env):
    try:
        avals = jax.tree_util.tree_leaves(jax.eval_shape(lambda: eval(expr, env)))
    except Exception as err:  # some functions need concrete values (nonzero without size)
        return type(err).__name__
    return [bool(a.weak_type) for a in avals]

def _run(expr):
    env = {"jnp": jnp, "np": np, "jax": jax, **inputs}
    try:
        out = eval(expr, env)
        leaves = jax.tree_util.tree_leaves(out)
        return ("ok", [np.asarray(v) for v in leaves], [str(np.asarray(v).dtype) for v in leaves],
                _weak_types(expr, env))
    except Exception as err:
        return ("error", type(err).__name__, str(err)[:300])

result = [_run(expr) for expr in exprs]
"""


@functools.cache
def _jax_results(table: str, x64: bool):
    return run_jax(_JAX_SNIPPET, x64=x64, exprs=TABLES[table], inputs=INPUTS)


def _laminax_weak_types(expr, env):
    try:
        avals = tree_leaves(laminax_core.eval_shape(lambda: eval(expr, env)))
    except Exception as err:  # noqa: BLE001 (compared with JAX's error under tracing)
        return type(err).__name__
    return [bool(a.weak_type) for a in avals]


def _laminax_run(expr):
    env = {"jnp": lnp, "np": np, **INPUTS}
    try:
        out = eval(expr, env)
        leaves = tree_leaves(out)
        return ("ok", [np.asarray(v) for v in leaves], [str(np.asarray(v).dtype) for v in leaves],
                _laminax_weak_types(expr, env))
    except Exception as err:  # noqa: BLE001 (the error type is what is compared)
        return ("error", type(err).__name__, str(err)[:300])


def _compare(expr, ours, theirs):
    assert ours[0] == theirs[0], f"{expr}: laminax {ours[:2]} vs JAX {theirs[:2]} ({theirs[-1]})"
    if ours[0] == "error":
        assert ours[1] == theirs[1], f"{expr}: laminax raised {ours[1]}: {ours[2]}; JAX raised " \
                                     f"{theirs[1]}: {theirs[2]}"
        return
    _, values, dtypes_, weak = ours
    _, j_values, j_dtypes, j_weak = theirs
    assert len(values) == len(j_values), expr
    assert dtypes_ == j_dtypes, f"{expr}: dtypes {dtypes_} vs JAX {j_dtypes}"
    if not isinstance(j_weak, str):  # (JAX's eval_shape raises where it needs concrete values)
        assert weak == j_weak, f"{expr}: weak types {weak} vs JAX {j_weak}"
    for v, jv in zip(values, j_values, strict=True):
        assert v.shape == jv.shape, f"{expr}: shape {v.shape} vs JAX {jv.shape}"
        if np.issubdtype(jv.dtype, np.inexact):
            tol = 2e-2 if jv.dtype in (np.float16,) or "bfloat16" in str(jv.dtype) else 2e-4
            np.testing.assert_allclose(v.astype(np.float64), jv.astype(np.float64), rtol=tol,
                                       atol=tol, err_msg=expr)
        else:
            np.testing.assert_array_equal(v, jv, err_msg=expr)


def _cases(table):
    return [pytest.param(table, expr, id=f"{table}:{expr}") for expr in TABLES[table]]


ALL_CASES = [c for table in TABLES for c in _cases(table)]


@requires_jax
@pytest.mark.parametrize("table,expr", ALL_CASES)
def test_matches_jax(table, expr):
    theirs = _jax_results(table, False)[TABLES[table].index(expr)]
    _compare(expr, _laminax_run(expr), theirs)


X64_TABLES = ["ufuncs", "reductions", "creation"]


@requires_jax
@pytest.mark.parametrize("table,expr", [c for t in X64_TABLES for c in _cases(t)])
def test_matches_jax_with_x64(table, expr):
    theirs = _jax_results(table, True)[TABLES[table].index(expr)]
    with config.enable_x64(True):
        ours = _laminax_run(expr)
    _compare(expr, ours, theirs)


@requires_jax
def test_rank_promotion_raise_matches_jax():
    source = ("with jax.numpy_rank_promotion('raise'):\n"
              "    try:\n        jnp.add(F, J)\n        result = 'ok'\n"
              "    except Exception as err:\n        result = type(err).__name__\n")
    expected = run_jax(source, F=F, J=J.astype(np.float32))
    with config.numpy_rank_promotion("raise"):
        with pytest.raises(Exception) as info:
            lnp.add(F, J.astype(np.float32))
    assert type(info.value).__name__ == expected


@requires_jax
def test_jaxprs_of_common_functions_have_jax_equations():
    exprs = ["jnp.sum(x, axis=0)", "jnp.mean(x)", "x[1:, 0]", "x[x[0].astype(jnp.int32)]",
             "jnp.where(x > 0, x, 1.5 * x)", "jnp.dot(x, x.T)", "jnp.flip(x, 0)",
             "jnp.zeros_like(x)",
             "jnp.transpose(x)", "x.at[0].set(1.0)", "jnp.cumsum(x, axis=1)",
             "jnp.concatenate([x, x])", "jnp.stack([x, x], 1)", "jnp.tile(x, (2, 1))",
             "jnp.repeat(x, 2, axis=0)", "jnp.mean(x, axis=0, keepdims=True)",
             "jnp.linalg.norm(x)", "jnp.take_along_axis(x, x.astype(jnp.int32), 1)",
             "jnp.take_along_axis(x, x[:1].astype(jnp.int32), 0)"]
    source = ("def names(jaxpr):\n"
              "    out = []\n"
              "    for e in jaxpr.eqns:\n"
              "        inner = e.params.get('jaxpr')\n"
              "        out += names(inner.jaxpr) if inner is not None else [e.primitive.name]\n"
              "    return out\n"
              "result = [names(jax.make_jaxpr(lambda x: eval(s))(x).jaxpr) for s in exprs]\n")
    expected = run_jax(source, exprs=exprs, x=F)
    for expr, names in zip(exprs, expected, strict=True):
        closed = laminax_core.make_jaxpr(lambda x, s=expr: eval(s, {"jnp": lnp, "x": x}))(F)
        ours = [e.primitive.name for e in closed.eqns]
        # scatters are built differently (flat positions), but use the same primitive family
        if "scatter" in names:
            assert "scatter" in ours, (expr, ours, names)
            continue
        assert ours == names, (expr, ours, names)
