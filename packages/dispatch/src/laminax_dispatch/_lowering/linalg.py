"""Lowerings of `laminax_core/lax/linalg/`: LAPACK on CPU, through jaxlib's FFI kernels
(`_lapack.py`), emitting the calls JAX 0.10.2 emits on CPU so that results agree bit for bit.

| primitive | LAPACK | what JAX does around the call |
|---|---|---|
| cholesky | potrf (uplo L) | NaN matrices where `info != 0` (not positive definite) |
| triangular_solve | trsm | conjugates `a` first for `conjugate_a` without `transpose_a` |
| lu | getrf | 0-based pivots; NaNs where `info < 0`; the permutation from the pivots |
| qr | geqrf (or geqp3), orgqr / ungqr | pads or slices the reflectors; zeros below R's diagonal |
| eigh | syevd / heevd (mode V) | NaNs where `info != 0`; eigenvalues ascending |
| svd | gesdd (gesvd for algorithm QR) | mode A / S / N; NaNs where `info != 0` |
| eig | geev | complex eigenvalues from geev's real and imaginary parts; NaNs where `info != 0` |
| householder_product, ormqr | orgqr / ungqr, ormqr / unmqr | nothing |
| hessenberg | gehrd (rows and columns 1..n) | NaNs where `info != 0` |
| tridiagonal_solve | gtsv | NaNs where `info != 0`; jaxlib's own kernel for `perturb_singular` |
| schur | gees (no sorting) | NaNs where `info != 0`; the Schur vectors dropped unless asked |
| tridiagonal | sytrd / hetrd | NaNs where `info != 0` |

cholesky_update and symmetric_product are lax programs on CPU (core's `linalg_update_programs`),
as in JAX.

Empty matrices never reach LAPACK in qr and svd (JAX builds identities and zeros instead).
`subset_by_index` of eigh and svd, which JAX rejects on CPU, keeps the requested slice of the
full decomposition here.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from jaxlib.cpu import _lapack as _lapack_module
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import dtypes, lax
from laminax_core.internal import ShapedArray
from laminax_core.internal import linalg_update_programs as update_programs

from laminax_dispatch._lowering._core import (
    compare,
    full_like,
    ir_constant,
    lower_fun,
    lowering_for,
    register_lowering,
)
from laminax_dispatch._lowering._lapack import (
    char_attr,
    info_is,
    lapack_call,
    nan_unless,
    solver_call,
    target_name,
)
from laminax_dispatch._mlir import aval_to_ir_type


def _is_complex(aval) -> bool:
    return dtypes.issubdtype(aval.dtype, np.complexfloating)


def _info_aval(aval) -> ShapedArray:
    return ShapedArray(aval.shape[:-2], np.dtype(np.int32))


def _slice_last(x, shape, starts, limits):
    """`x[..., starts[0]:limits[0], starts[1]:limits[1]]` (or one trailing dimension)."""
    lead = len(shape) - len(starts)
    return hlo.slice(
        x, [0] * lead + list(starts), list(shape[:lead]) + list(limits), [1] * len(shape)
    )


# ----- cholesky -----------------------------------------------------------------------------


@lowering_for(lax.linalg.cholesky_p)
def _cholesky_lower(ctx, x):
    (aval,) = ctx.avals_in
    info_aval = _info_aval(aval)
    target = target_name("potrf", aval.dtype, "cholesky")
    factor, info = lapack_call(
        target, [x], [aval], [aval, info_aval], aliases={0: 0}, uplo=char_attr("L")
    )
    return nan_unless(info_is(info, info_aval, "EQ"), factor, aval, info_aval.ndim)


# ----- triangular_solve ---------------------------------------------------------------------


@lowering_for(lax.linalg.triangular_solve_p)
def _triangular_solve_lower(
    ctx, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal
):
    a_aval, b_aval = ctx.avals_in
    if conjugate_a and not transpose_a:
        if _is_complex(a_aval):
            a = hlo.complex(hlo.real(a), hlo.negate(hlo.imag(a)))
        conjugate_a = False
    trans = ("C" if conjugate_a else "T") if transpose_a else "N"
    target = target_name("trsm", a_aval.dtype, "triangular_solve")
    (x,) = lapack_call(
        target,
        [a, b],
        [a_aval, b_aval],
        [b_aval],
        aliases={1: 0},
        side=char_attr("L" if left_side else "R"),
        uplo=char_attr("L" if lower else "U"),
        trans_x=char_attr(trans),
        diag=char_attr("U" if unit_diagonal else "N"),
    )
    return x


# ----- lu -----------------------------------------------------------------------------------


def _pivots_to_permutation(pivots, *, permutation_size: int):
    """The row permutation that applying the swaps `pivots` (..., k) to
    `arange(permutation_size)` makes, as a lax loop (one swap per step, batched with one-hot
    selects)."""
    pivots = lax.convert_element_type(pivots, np.int32)
    shape = (*pivots.shape[:-1], permutation_size)
    columns = lax.broadcasted_iota(np.int32, shape, len(shape) - 1)
    zeros = lax.full(shape, 0, np.int32)

    def swap(i, perm):
        j = lax.dynamic_index_in_dim(pivots, i, len(shape) - 1)  # (..., 1)
        at_i = lax.eq(columns, lax.broadcast_in_dim(i, shape, ()))
        at_j = lax.eq(columns, lax.broadcast_in_dim(j, shape, tuple(range(len(shape)))))
        perm_i = lax.reduce_sum(lax.select(at_i, perm, zeros), (len(shape) - 1,))
        perm_j = lax.reduce_sum(lax.select(at_j, perm, zeros), (len(shape) - 1,))
        dims = tuple(range(len(shape) - 1))
        perm = lax.select(at_i, lax.broadcast_in_dim(perm_j, shape, dims), perm)
        return lax.select(at_j, lax.broadcast_in_dim(perm_i, shape, dims), perm)

    if permutation_size == 0 or pivots.shape[-1] == 0:
        return columns
    return lax.fori_loop(np.int32(0), np.int32(pivots.shape[-1]), swap, columns)


_lu_pivots_to_permutation_lower = lower_fun(_pivots_to_permutation)
register_lowering(lax.linalg.lu_pivots_to_permutation_p, _lu_pivots_to_permutation_lower)


@lowering_for(lax.linalg.lu_p)
def _lu_lower(ctx, x):
    (aval,) = ctx.avals_in
    lu_aval, pivots_aval, perm_aval = ctx.avals_out
    info_aval = _info_aval(aval)
    target = target_name("getrf", aval.dtype, "lu")
    lu, pivots, info = lapack_call(
        target, [x], [aval], [lu_aval, pivots_aval, info_aval], aliases={0: 0}
    )
    pivots = hlo.subtract(pivots, full_like(1, pivots_aval))  # LAPACK's pivots are 1-based
    lu = nan_unless(info_is(info, info_aval, "GE"), lu, lu_aval, info_aval.ndim)
    perm_ctx = dataclasses.replace(ctx, avals_in=[pivots_aval], avals_out=[perm_aval])
    (perm,) = _lu_pivots_to_permutation_lower(perm_ctx, pivots, permutation_size=aval.shape[-2])
    return [lu, pivots, perm]


# ----- qr -----------------------------------------------------------------------------------


def _empty_qr(x, *, q_shape, r_shape):
    """q: identity columns, r: zeros (a matrix with no rows or no columns)."""
    nd = len(q_shape)
    rows = lax.broadcasted_iota(np.int32, q_shape, nd - 2)
    cols = lax.broadcasted_iota(np.int32, q_shape, nd - 1)
    q = lax.convert_element_type(lax.eq(rows, cols), x.dtype)
    return [q, lax.full(r_shape, 0, x.dtype)]


def _householder_product(a, a_aval, taus, taus_aval, prefix="cpu"):
    """Q from the reflectors below the diagonal of `a` and their `taus` (orgqr / ungqr;
    a GPU solver's orgqr for the `prefix` cu or hip)."""
    if prefix != "cpu":
        (q,) = solver_call(f"{prefix}solver_orgqr_ffi", [a, taus], [a_aval, taus_aval],
                           [a_aval], aliases={0: 0})
        return q
    routine = "ungqr" if _is_complex(a_aval) else "orgqr"
    target = target_name(routine, a_aval.dtype, "qr")
    (q,) = lapack_call(target, [a, taus], [a_aval, taus_aval], [a_aval], aliases={0: 0})
    return q


def _upper_triangle(r, aval):
    # zeros where row - 1 >= col, as JAX masks it
    i32 = aval.update(dtype=np.dtype(np.int32))
    rows = hlo.add(hlo.iota(aval_to_ir_type(i32), aval.ndim - 2), full_like(-1, i32))
    below = compare(rows, hlo.iota(aval_to_ir_type(i32), aval.ndim - 1), "GE", np.int32)
    return hlo.select(below, full_like(0, aval), r)


def _geqrf(x, aval, taus_aval, pivoting, prefix="cpu"):
    """The reflectors (in place of `x`) and their taus, and for `pivoting` (geqp3) the 0-based
    column permutation."""
    if prefix != "cpu":
        if pivoting:
            raise NotImplementedError(
                "qr with pivoting=True is lowered for cpu only (JAX's GPU lowering calls "
                "MAGMA's hybrid geqp3); export it for platforms=('cpu',).")
        r, taus = solver_call(f"{prefix}solver_geqrf_ffi", [x], [aval], [aval, taus_aval],
                              aliases={0: 0})
        return r, taus, None
    if not pivoting:
        r, taus = lapack_call(
            target_name("geqrf", aval.dtype, "qr"),
            [x],
            [aval],
            [aval, taus_aval],
            aliases={0: 0},
        )
        return r, taus, None
    jpvt_aval = ShapedArray(aval.shape[:-1][:-1] + aval.shape[-1:], np.dtype(np.int32))
    jpvt = full_like(0, jpvt_aval)  # all columns free to move
    r, jpvt, taus = lapack_call(
        target_name("geqp3", aval.dtype, "qr"),
        [x, jpvt],
        [aval, jpvt_aval],
        [aval, jpvt_aval, taus_aval],
        aliases={0: 0, 1: 1},
    )
    return r, taus, hlo.subtract(jpvt, full_like(1, jpvt_aval))  # LAPACK counts from 1


@lowering_for(lax.linalg.qr_p)
def _qr_lower(ctx, x, *, pivoting, full_matrices, use_magma, prefix="cpu"):
    (aval,) = ctx.avals_in
    q_aval, r_aval = ctx.avals_out[:2]
    *batch, m, n = aval.shape
    if m == 0 or n == 0:
        empty = lower_fun(_empty_qr, multiple_results=True)
        q, r = empty(ctx, x, q_shape=q_aval.shape, r_shape=r_aval.shape)
        return [q, r, full_like(0, ctx.avals_out[2])] if pivoting else [q, r]
    k = min(m, n)
    taus_aval = ShapedArray((*batch, k), aval.dtype)
    r, taus, perm = _geqrf(x, aval, taus_aval, pivoting, prefix)
    if m < n:
        square = ShapedArray((*batch, m, m), aval.dtype)
        q = _householder_product(
            _slice_last(r, aval.shape, (0, 0), (m, m)), square, taus, taus_aval, prefix
        )
    elif full_matrices:
        zero = ir_constant(np.zeros((), aval.dtype))
        lead = [0] * (len(batch) + 1)
        padded = hlo.pad(r, zero, lead + [0], lead + [m - n], lead + [0])
        q = _householder_product(padded, q_aval, taus, taus_aval, prefix)
    else:
        q = _householder_product(r, aval, taus, taus_aval, prefix)
        r = _slice_last(r, aval.shape, (0, 0), (n, n))
    outs = [q, _upper_triangle(r, r_aval)]
    return [*outs, perm] if pivoting else outs


# ----- eigh ---------------------------------------------------------------------------------


@lowering_for(lax.linalg.eigh_p)
def _eigh_lower(ctx, x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    # LAPACK always sorts the eigenvalues ascending
    (aval,) = ctx.avals_in
    n = aval.shape[-1]
    w_aval = ShapedArray((*aval.shape[:-2], n), np.dtype(np.finfo(aval.dtype).dtype))
    info_aval = _info_aval(aval)
    routine = "heevd" if _is_complex(aval) else "syevd"
    v, w, info = lapack_call(
        target_name(routine, aval.dtype, "eigh"),
        [x],
        [aval],
        [aval, w_aval, info_aval],
        aliases={0: 0},
        mode=char_attr("V"),
        uplo=char_attr("L" if lower else "U"),
    )
    ok = info_is(info, info_aval, "EQ")
    v = nan_unless(ok, v, aval, info_aval.ndim)
    w = nan_unless(ok, w, w_aval, info_aval.ndim)
    if subset_by_index is not None and tuple(subset_by_index) != (0, n):
        lo, hi = subset_by_index
        v = _slice_last(v, aval.shape, (0, lo), (n, hi))
        w = _slice_last(w, w_aval.shape, (lo,), (hi,))
    return [v, w]


# ----- svd ----------------------------------------------------------------------------------


def _empty_svd(x, *, full_matrices, compute_uv, s_shape, u_shape, vt_shape):
    """Zero singular values; for `full_matrices`, the identity as the one square factor."""
    s = lax.full(s_shape, 0, np.finfo(x.dtype).dtype)
    if not compute_uv:
        return [s]
    outs = []
    for shape in (u_shape, vt_shape):
        nd = len(shape)
        if full_matrices and shape[-1] == shape[-2] and shape[-1] > 0:
            rows = lax.broadcasted_iota(np.int32, shape, nd - 2)
            cols = lax.broadcasted_iota(np.int32, shape, nd - 1)
            outs.append(lax.convert_element_type(lax.eq(rows, cols), x.dtype))
        else:
            outs.append(lax.full(shape, 0, x.dtype))
    return [s, *outs]


def _svd_routine(algorithm) -> str:
    name = getattr(algorithm, "name", algorithm)
    if name is None or str(name).upper() in ("DEFAULT", "DIVIDE_AND_CONQUER"):
        return "gesdd"
    if str(name).upper() == "QR":
        return "gesvd"
    raise NotImplementedError(
        f"svd: algorithm {algorithm!r} is not implemented on CPU; use the default "
        "(divide and conquer) or SvdAlgorithm.QR."
    )


def _svd_call(x, aval, *, full, compute_uv, algorithm):
    """gesdd / gesvd: (s, u, vt, info), u and vt full or reduced (mode A, S, or N)."""
    *batch, m, n = aval.shape
    k = min(m, n)
    s_aval = ShapedArray((*batch, k), np.dtype(np.finfo(aval.dtype).dtype))
    u_aval = ShapedArray((*batch, m, m if full else k), aval.dtype)
    vt_aval = ShapedArray((*batch, n if full else k, n), aval.dtype)
    info_aval = _info_aval(aval)
    mode = "A" if full else "S"
    _, s, u, vt, info = lapack_call(
        target_name(_svd_routine(algorithm), aval.dtype, "svd"),
        [x],
        [aval],
        [aval, s_aval, u_aval, vt_aval, info_aval],
        aliases={0: 0},
        mode=char_attr(mode if compute_uv else "N"),
    )
    ok = info_is(info, info_aval, "EQ")
    nb = len(batch)
    return (
        nan_unless(ok, s, s_aval, nb),
        nan_unless(ok, u, u_aval, nb),
        nan_unless(ok, vt, vt_aval, nb),
    )


@lowering_for(lax.linalg.svd_p)
def _svd_lower(ctx, x, *, full_matrices, compute_uv, subset_by_index, algorithm):
    (aval,) = ctx.avals_in
    *_, m, n = aval.shape
    k = min(m, n)
    subset = None if subset_by_index is None else tuple(subset_by_index)
    if m == 0 or n == 0:
        empty = lower_fun(_empty_svd, multiple_results=True)
        shapes = [a.shape for a in ctx.avals_out] + [None, None]
        return empty(
            ctx,
            x,
            full_matrices=full_matrices and subset is None,
            compute_uv=compute_uv,
            s_shape=shapes[0],
            u_shape=shapes[1],
            vt_shape=shapes[2],
        )
    full = full_matrices and subset is None
    s, u, vt = _svd_call(x, aval, full=full, compute_uv=compute_uv, algorithm=algorithm)
    if subset is not None and subset != (0, k):
        lo, hi = subset
        s = _slice_last(s, ctx.avals_out[0].shape[:-1] + (k,), (lo,), (hi,))
        u = _slice_last(u, (*aval.shape[:-1], k), (0, lo), (m, hi))
        vt = _slice_last(vt, (*aval.shape[:-2], k, n), (lo, 0), (hi, n))
    return [s, u, vt] if compute_uv else [s]


# ----- eig ----------------------------------------------------------------------------------


def _eig_mode(compute: bool) -> ir.Attribute:
    mode = _lapack_module.eig.ComputationMode
    value = mode.kComputeEigenvectors if compute else mode.kNoEigenvectors
    return ir.IntegerAttr.get(ir.IntegerType.get_unsigned(8), int(value.value))


@lowering_for(lax.linalg.eig_p)
def _eig_lower(
    ctx,
    x,
    *,
    compute_left_eigenvectors,
    compute_right_eigenvectors,
    enable_eigvec_derivs,
    implementation,
):
    name = getattr(implementation, "name", implementation)
    if name is not None and str(name).upper() != "LAPACK":
        raise NotImplementedError(
            f"eig: implementation {implementation!r} is not available on CPU; use "
            "EigImplementation.LAPACK (or None)."
        )
    (aval,) = ctx.avals_in
    w_aval = ctx.avals_out[0]
    vec_aval = ShapedArray(aval.shape, w_aval.dtype)
    info_aval = _info_aval(aval)
    is_real = not _is_complex(aval)
    # real input: geev returns the real and imaginary parts of w separately
    w_avals = [aval.update(shape=aval.shape[:-1])] * (2 if is_real else 1)
    *w, vl, vr, info = lapack_call(
        target_name("geev", aval.dtype, "eig"),
        [x],
        [aval],
        [*w_avals, vec_aval, vec_aval, info_aval],
        compute_left=_eig_mode(compute_left_eigenvectors),
        compute_right=_eig_mode(compute_right_eigenvectors),
    )
    w = hlo.complex(w[0], w[1]) if is_real else w[0]
    ok = info_is(info, info_aval, "EQ")
    nb = info_aval.ndim
    outs = [nan_unless(ok, w, w_aval, nb)]
    if compute_left_eigenvectors:
        outs.append(nan_unless(ok, vl, vec_aval, nb))
    if compute_right_eigenvectors:
        outs.append(nan_unless(ok, vr, vec_aval, nb))
    return outs


# ----- tridiagonal_solve --------------------------------------------------------------------


@lowering_for(lax.linalg.tridiagonal_solve_p)
def _tridiagonal_solve_lower(ctx, dl, d, du, b, *, perturb_singular):
    *diag_avals, b_aval = ctx.avals_in
    if perturb_singular:  # jaxlib's own kernel (LU with tiny pivots perturbed), no info
        (x,) = lapack_call(
            "tridiagonal_solve_perturbed_ffi", [dl, d, du, b], ctx.avals_in, [b_aval]
        )
        return x
    info_aval = _info_aval(b_aval)
    *_, x, info = lapack_call(
        target_name("gtsv", b_aval.dtype, "tridiagonal_solve"),
        [dl, d, du, b],
        ctx.avals_in,
        [*ctx.avals_in, info_aval],
        aliases={0: 0, 1: 1, 2: 2, 3: 3},
    )
    return nan_unless(info_is(info, info_aval, "EQ"), x, b_aval, info_aval.ndim)


# ----- householder_product, ormqr -----------------------------------------------------------


@lowering_for(lax.linalg.householder_product_p)
def _householder_product_lower(ctx, a, taus):
    a_aval, taus_aval = ctx.avals_in
    return _householder_product(a, a_aval, taus, taus_aval)


@lowering_for(lax.linalg.ormqr_p)
def _ormqr_lower(ctx, a, taus, c, *, left, transpose):
    a_aval, taus_aval, c_aval = ctx.avals_in
    routine = "unmqr" if _is_complex(a_aval) else "ormqr"
    (out,) = lapack_call(
        target_name(routine, a_aval.dtype, "ormqr"),
        [a, taus, c],
        ctx.avals_in,
        [c_aval],
        aliases={2: 0},
        left=ir.BoolAttr.get(left),
        transpose=ir.BoolAttr.get(transpose),
    )
    return out


# ----- hessenberg ---------------------------------------------------------------------------


@lowering_for(lax.linalg.hessenberg_p)
def _hessenberg_lower(ctx, a):
    (aval,) = ctx.avals_in
    info_aval = _info_aval(aval)
    i32 = ir.IntegerType.get_signless(32)
    h, taus, info = lapack_call(
        target_name("gehrd", aval.dtype, "hessenberg"),
        [a],
        [aval],
        [*ctx.avals_out, info_aval],
        aliases={0: 0},
        low=ir.IntegerAttr.get(i32, 1),  # reduce the whole matrix (rows/columns 1..n)
        high=ir.IntegerAttr.get(i32, aval.shape[-1]),
    )
    ok = info_is(info, info_aval, "EQ")
    return [
        nan_unless(ok, h, ctx.avals_out[0], info_aval.ndim),
        nan_unless(ok, taus, ctx.avals_out[1], info_aval.ndim),
    ]


# ----- schur --------------------------------------------------------------------------------


def _u8_enum(value) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_unsigned(8), int(value.value))


@lowering_for(lax.linalg.schur_p)
def _schur_lower(ctx, x, *, compute_schur_vectors, sort_eig_vals, select_callable):
    if sort_eig_vals:
        raise NotImplementedError(
            "The sort feature of LAPACK's gees routine is not implemented.")
    (aval,) = ctx.avals_in
    info_aval = _info_aval(aval)
    w_aval = ShapedArray(aval.shape[:-1], aval.dtype)
    # real input: gees returns the eigenvalues' real and imaginary parts separately
    w_avals = [w_aval] * (1 if _is_complex(aval) else 2)
    mode = _lapack_module.schur.ComputationMode
    t, q, *_, info = lapack_call(
        target_name("gees", aval.dtype, "schur"),
        [x],
        [aval],
        [aval, aval, *w_avals, info_aval, info_aval],  # the last but one: the sorted count
        aliases={0: 0},
        mode=_u8_enum(mode.kComputeSchurVectors if compute_schur_vectors
                      else mode.kNoComputeSchurVectors),
        sort=_u8_enum(_lapack_module.schur.Sort.kNoSortEigenvalues),
    )
    ok = info_is(info, info_aval, "EQ")
    outs = [nan_unless(ok, t, aval, info_aval.ndim)]
    if compute_schur_vectors:
        outs.append(nan_unless(ok, q, aval, info_aval.ndim))
    return outs


# ----- tridiagonal --------------------------------------------------------------------------


@lowering_for(lax.linalg.tridiagonal_p)
def _tridiagonal_lower(ctx, a, *, lower):
    (aval,) = ctx.avals_in
    info_aval = _info_aval(aval)
    routine = "hetrd" if _is_complex(aval) else "sytrd"
    *outs, info = lapack_call(
        target_name(routine, aval.dtype, "tridiagonal"),
        [a],
        [aval],
        [*ctx.avals_out, info_aval],
        aliases={0: 0},
        uplo=char_attr("L" if lower else "U"),
    )
    ok = info_is(info, info_aval, "EQ")
    return [nan_unless(ok, x, out_aval, info_aval.ndim)
            for x, out_aval in zip(outs, ctx.avals_out, strict=True)]


register_lowering(lax.linalg.cholesky_update_p,
                  lower_fun(update_programs.cholesky_update_program))
register_lowering(lax.linalg.symmetric_product_p,
                  lower_fun(update_programs.symmetric_product_program))
