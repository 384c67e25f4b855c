"""GPU lowerings of the linear algebra primitives (cholesky, triangular_solve, lu, qr, eigh,
svd, householder_product, tridiagonal), for modules lowered for `cuda` or `rocm` (`export(..., platforms=("cuda",))`): the
cusolver / hipsolver kernels' custom calls JAX 0.10.2 writes, with their operands, layouts
and attributes, around the same handling of `info` as on CPU. This machine runs none of
them; they make a multi-platform artifact JAX can run on a GPU.

Each primitive's rule dispatches on the platforms being lowered for: one of them lowers
directly; several, as JAX's lowering of platform-specific rules, map the module's platform
index to a rule (a `stablehlo.case` of constants) and a second `stablehlo.case` holds each
distinct rule's code (CPU's LAPACK calls, cusolver's, hipsolver's).
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import lax
from laminax_core.internal import ShapedArray

from laminax_dispatch._lowering import _dynamic
from laminax_dispatch._lowering._core import full_like, ir_constant, lower_fun, lowerings
from laminax_dispatch._lowering._lapack import info_is, nan_unless, solver_call
from laminax_dispatch._lowering.linalg import (
    _empty_svd,
    _householder_product,
    _info_aval,
    _is_complex,
    _qr_lower,
    _slice_last,
)
from laminax_dispatch._mlir import aval_to_ir_type

# the kernels' name prefix per GPU platform (cusolver_..., hipsolver_...)
_GPU_PREFIX = {"cuda": "cu", "rocm": "hip"}


def _per_platform(primitive, gpu_rule):
    """`primitive`'s rule: its CPU rule (the one registered so far) or `gpu_rule(...,
    prefix=)`, by the platforms being lowered for."""
    cpu_rule = lowerings[primitive]

    def rule(ctx, *args, **params):
        platforms = _dynamic.lowering_platforms()
        groups: dict[str, list[str]] = {}
        for p in platforms:  # other platforms take the CPU rule, which refuses them
            groups.setdefault(p if p in _GPU_PREFIX else "cpu", []).append(p)
        keys = list(groups)

        def run(key):
            with _dynamic.using_platforms(tuple(groups[key])):
                if key == "cpu":
                    return cpu_rule(ctx, *args, **params)
                return gpu_rule(ctx, *args, prefix=_GPU_PREFIX[key], **params)

        if len(keys) == 1:
            return run(keys[0])
        i32 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
        which = hlo.CaseOp([i32], _dynamic.dim_values()[_dynamic.PLATFORM_INDEX],
                           len(platforms))
        for k, p in enumerate(platforms):
            with ir.InsertionPoint(which.regions[k].blocks.append()):
                hlo.return_([ir_constant(np.int32(keys.index(
                    p if p in _GPU_PREFIX else "cpu")))])
        case = hlo.CaseOp([aval_to_ir_type(a) for a in ctx.avals_out], which.result,
                          len(keys))
        for k, key in enumerate(keys):
            with ir.InsertionPoint(case.regions[k].blocks.append()):
                out = run(key)
                hlo.return_(list(out) if isinstance(out, list | tuple) else [out])
        results = list(case.results)
        return results if primitive.multiple_results else results[0]

    lowerings[primitive] = rule


def _cholesky_gpu(ctx, x, *, prefix):
    (aval,) = ctx.avals_in
    info_aval = _info_aval(aval)
    factor, info = solver_call(f"{prefix}solver_potrf_ffi", [x], [aval], [aval, info_aval],
                               aliases={0: 0}, lower=ir.BoolAttr.get(True))
    return nan_unless(info_is(info, info_aval, "EQ"), factor, aval, info_aval.ndim)


def _triangular_solve_gpu(ctx, a, b, *, left_side, lower, transpose_a, conjugate_a,
                          unit_diagonal, prefix):
    # XLA's own triangular_solve op, as JAX lowers it off CPU
    if conjugate_a and not transpose_a:
        if _is_complex(ctx.avals_in[0]):
            a = hlo.complex(hlo.real(a), hlo.negate(hlo.imag(a)))
        conjugate_a = False
    transpose = ("ADJOINT" if conjugate_a else "TRANSPOSE") if transpose_a else "NO_TRANSPOSE"
    return hlo.triangular_solve(a, b, ir.BoolAttr.get(left_side), ir.BoolAttr.get(lower),
                                ir.BoolAttr.get(unit_diagonal),
                                hlo.TransposeAttr.get(transpose))


def _pivots_to_permutation_gpu(pivots, pivots_aval, perm_aval, prefix):
    (perm,) = solver_call(f"{prefix}_lu_pivots_to_permutation", [pivots], [pivots_aval],
                          [perm_aval], column_major=False, num_non_batch_dims=1)
    return perm


def _lu_gpu(ctx, x, *, prefix):
    (aval,) = ctx.avals_in
    lu_aval, pivots_aval, perm_aval = ctx.avals_out
    info_aval = _info_aval(aval)
    lu, pivots, info = solver_call(f"{prefix}solver_getrf_ffi", [x], [aval],
                                   [lu_aval, pivots_aval, info_aval], aliases={0: 0})
    pivots = hlo.subtract(pivots, full_like(1, pivots_aval))  # 1-based, as LAPACK's
    lu = nan_unless(info_is(info, info_aval, "GE"), lu, lu_aval, info_aval.ndim)
    return [lu, pivots, _pivots_to_permutation_gpu(pivots, pivots_aval, perm_aval, prefix)]


def _eigh_gpu(ctx, x, *, lower, sort_eigenvalues, subset_by_index, algorithm, prefix):
    (aval,) = ctx.avals_in
    n = aval.shape[-1]
    w_aval = ShapedArray((*aval.shape[:-2], n), np.dtype(np.finfo(aval.dtype).dtype))
    info_aval = _info_aval(aval)
    # the kernel's algorithm: 0 its default, 2 Jacobi, 1 QR
    name = getattr(algorithm, "name", None)
    algo = 0 if algorithm is None else 2 if name == "JACOBI" else 1
    if name == "QDWH":
        raise NotImplementedError("QDWH implementation is only supported on TPU")
    v, w, info = solver_call(
        f"{prefix}solver_syevd_ffi", [x], [aval], [aval, w_aval, info_aval], aliases={0: 0},
        algorithm=ir.IntegerAttr.get(ir.IntegerType.get_unsigned(8), algo),
        lower=ir.BoolAttr.get(lower))
    ok = info_is(info, info_aval, "EQ")
    v = nan_unless(ok, v, aval, info_aval.ndim)
    w = nan_unless(ok, w, w_aval, info_aval.ndim)
    if subset_by_index is not None and tuple(subset_by_index) != (0, n):
        lo, hi = subset_by_index
        v = _slice_last(v, aval.shape, (0, lo), (n, hi))
        w = _slice_last(w, w_aval.shape, (lo,), (hi,))
    return [v, w]


def _svd_kernel(algorithm, prefix: str, m: int, n: int) -> str:
    """JAX's choice of GPU SVD: Jacobi (gesvdj) up to 1024 x 1024 by default, else gesvd."""
    name = str(getattr(algorithm, "name", "DEFAULT")).upper()
    if name == "DEFAULT":
        return "gesvdj" if m <= 1024 and n <= 1024 else "gesvd"
    if name in ("QR", "JACOBI"):
        return "gesvd" if name == "QR" else "gesvdj"
    if name == "POLAR":
        return "gesvdp"
    if name == "DIVIDE_AND_CONQUER" and prefix == "hip":
        return "gesdd"
    raise NotImplementedError(
        "Divide-and-conquer SVD (SvdAlgorithm.DIVIDE_AND_CONQUER) is only supported on AMD "
        "(ROCm) GPUs, not on NVIDIA CUDA.")


def _svd_gpu(ctx, x, *, full_matrices, compute_uv, subset_by_index, algorithm, prefix):
    (aval,) = ctx.avals_in
    *batch, m, n = aval.shape
    k = min(m, n)
    subset = None if subset_by_index is None else tuple(subset_by_index)
    full = full_matrices and subset is None
    if m == 0 or n == 0:
        shapes = [a.shape for a in ctx.avals_out] + [None, None]
        return lower_fun(_empty_svd, multiple_results=True)(
            ctx, x, full_matrices=full, compute_uv=compute_uv, s_shape=shapes[0],
            u_shape=shapes[1], vt_shape=shapes[2])
    nb = len(batch)
    kernel = _svd_kernel(algorithm, prefix, m, n)
    s_aval = ShapedArray((*batch, k), np.dtype(np.finfo(aval.dtype).dtype))
    u_aval = ShapedArray((*batch, m, m if full else k), aval.dtype)
    vt_aval = ShapedArray((*batch, n if full else k, n), aval.dtype)
    info_aval = _info_aval(aval)
    econ, transposed, attrs = not full, False, {}
    if kernel in ("gesvdj", "gesvdp"):
        # no economy mode for the batched Jacobi kernel up to 32 x 32; U and V always exist
        if kernel == "gesvdj":
            econ = not full and m > 32 and n > 32
        outs = [aval, s_aval, ShapedArray((*batch, m, k if econ else m), aval.dtype),
                ShapedArray((*batch, n, k if econ else n), aval.dtype), info_aval]
    else:
        if not compute_uv:
            u_aval = vt_aval = ShapedArray((), aval.dtype)
        transposed = kernel == "gesvd" and m < n
        attrs["transposed"] = ir.BoolAttr.get(transposed)
        outs = [aval, s_aval, *((vt_aval, u_aval) if transposed else (u_aval, vt_aval)),
                info_aval]
    _, s, u, vt, info = solver_call(
        f"{prefix}solver_{kernel}_ffi", [x], [aval], outs, aliases={0: 0},
        column_major=not transposed, full_matrices=ir.BoolAttr.get(not econ),
        compute_uv=ir.BoolAttr.get(compute_uv), **attrs)
    if transposed:
        u, vt = vt, u
    if kernel in ("gesvdj", "gesvdp") and compute_uv:
        vt = hlo.transpose(vt, [*range(nb), nb + 1, nb])  # the kernel returns V
        if _is_complex(aval):
            vt = hlo.complex(hlo.real(vt), hlo.negate(hlo.imag(vt)))
        if not full and not econ:
            u = _slice_last(u, (*batch, m, m), (0, 0), (m, k))
            vt = _slice_last(vt, (*batch, n, n), (0, 0), (k, n))
    ok = info_is(info, info_aval, "EQ")
    s = nan_unless(ok, s, s_aval, nb)
    if not compute_uv:
        return [s]
    u_out, vt_out = (ShapedArray((*batch, m, m if full else k), aval.dtype),
                     ShapedArray((*batch, n if full else k, n), aval.dtype))
    u, vt = nan_unless(ok, u, u_out, nb), nan_unless(ok, vt, vt_out, nb)
    if subset is not None and subset != (0, k):
        lo, hi = subset
        s = _slice_last(s, (*batch, k), (lo,), (hi,))
        u = _slice_last(u, (*batch, m, k), (0, lo), (m, hi))
        vt = _slice_last(vt, (*batch, k, n), (lo, 0), (hi, n))
    return [s, u, vt]


def _householder_product_gpu(ctx, a, taus, *, prefix):
    return _householder_product(a, *ctx.avals_in[:1], taus, ctx.avals_in[1], prefix)


def _tridiagonal_gpu(ctx, a, *, lower, prefix):
    (aval,) = ctx.avals_in
    info_aval = _info_aval(aval)
    *outs, info = solver_call(f"{prefix}solver_sytrd_ffi", [a], [aval],
                              [*ctx.avals_out, info_aval], aliases={0: 0},
                              lower=ir.BoolAttr.get(lower))
    ok = info_is(info, info_aval, "EQ")
    return [nan_unless(ok, x, out, info_aval.ndim)
            for x, out in zip(outs, ctx.avals_out, strict=True)]


def _pivots_primitive_gpu(ctx, pivots, *, permutation_size, prefix):
    return _pivots_to_permutation_gpu(pivots, ctx.avals_in[0], ctx.avals_out[0], prefix)


_per_platform(lax.linalg.cholesky_p, _cholesky_gpu)
_per_platform(lax.linalg.triangular_solve_p, _triangular_solve_gpu)
_per_platform(lax.linalg.lu_p, _lu_gpu)
_per_platform(lax.linalg.lu_pivots_to_permutation_p, _pivots_primitive_gpu)
_per_platform(lax.linalg.qr_p, _qr_lower)
_per_platform(lax.linalg.eigh_p, _eigh_gpu)
_per_platform(lax.linalg.svd_p, _svd_gpu)
_per_platform(lax.linalg.householder_product_p, _householder_product_gpu)
_per_platform(lax.linalg.tridiagonal_p, _tridiagonal_gpu)
