"""`laminax_core.numpy.linalg`: NumPy's linear algebra with JAX's semantics, composed from the
`lax.linalg` decompositions (`cholesky`, `lu`, `qr`, `eigh`, `svd`, `triangular_solve`).
Every function accepts stacks of matrices (leading batch dimensions)."""

from __future__ import annotations

import functools
import operator
from typing import NamedTuple

import numpy as np

from laminax_core import dtypes, lax
from laminax_core._avals import get_aval
from laminax_core._custom_derivatives import custom_jvp
from laminax_core.lax import linalg as lax_linalg
from laminax_core.numpy import _reductions as red
from laminax_core.numpy._creation import eye
from laminax_core.numpy._einsum import einsum
from laminax_core.numpy._indexing import take_along_axis
from laminax_core.numpy._linalg_products import (
    cross as np_cross,
)
from laminax_core.numpy._linalg_products import (
    diagonal as np_diagonal,
)
from laminax_core.numpy._linalg_products import (
    matmul as np_matmul,
)
from laminax_core.numpy._linalg_products import (
    tensordot as np_tensordot,
)
from laminax_core.numpy._linalg_products import (
    trace as np_trace,
)
from laminax_core.numpy._linalg_products import (
    vecdot as np_vecdot,
)
from laminax_core.numpy._operands import (
    as_array,
    broadcast_to_shape,
    canonicalize_axes,
    check_arraylike,
    convert_dtype,
    promote_dtypes_inexact,
    select,
)
from laminax_core.numpy._reductions import sum as total
from laminax_core.numpy._selection import where
from laminax_core.numpy._shape import moveaxis
from laminax_core.numpy._ufuncs import absolute, exp, log, multiply, power, sign

__all__ = [
    "EigResult", "EighResult", "QRResult", "SVDResult", "SlogdetResult", "cholesky", "cond",
    "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "lstsq", "matmul",
    "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "multi_dot", "norm",
    "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "tensorinv",
    "tensorsolve", "trace", "vecdot", "vector_norm",
]  # fmt: skip


class EighResult(NamedTuple):
    """The result of `eigh`: ascending eigenvalues and the eigenvectors (as columns)."""

    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    """The result of `qr`: the orthonormal `Q` and the upper-triangular `R`."""

    Q: object
    R: object


class SVDResult(NamedTuple):
    """The result of `svd`: `U`, the descending singular values `S`, and `Vh`."""

    U: object
    S: object
    Vh: object


class SlogdetResult(NamedTuple):
    """The result of `slogdet`: the sign of the determinant and the log of its magnitude."""

    sign: object
    logabsdet: object


def _linalg():
    return lax_linalg


def _matrix(name, a, square: bool = True):
    check_arraylike(f"linalg.{name}", a)
    (a,) = promote_dtypes_inexact(as_array(a))
    shape = get_aval(a).shape
    if len(shape) < 2 or (square and shape[-1] != shape[-2]):
        what = "square matrices" if square else "matrices"
        # JAX's types differ by function: these decompositions raise TypeError (eig only for
        # a rank below 2), the solvers ValueError
        typed = name in _SHAPE_TYPE_ERRORS or (name in ("eig", "eigvals") and len(shape) < 2)
        raise (TypeError if typed else ValueError)(
            f"jnp.linalg.{name}: the argument must be a stack of {what} (shape (..., M, "
            f"{'M' if square else 'N'})), got shape {shape}.")
    return a


_SHAPE_TYPE_ERRORS = frozenset({"cholesky", "eigh", "qr", "svd"})


def _swap(x):
    n = get_aval(x).ndim
    return lax.transpose(x, (*range(n - 2), n - 1, n - 2))


def _conj(x):
    return lax.conj(x) if dtypes.issubdtype(get_aval(x).dtype, np.complexfloating) else x


def _hermitian(x):
    return _conj(_swap(x))


def cholesky(a, *, upper: bool = False, symmetrize_input: bool = True):
    """The Cholesky factor of a Hermitian positive-definite matrix: `L` with `a = L L^H`
    (or `U = L^H` if `upper`). Non-positive-definite inputs give NaNs, as in JAX.

    Example:
      >>> cholesky(np.array([[4.0, 2.0], [2.0, 2.0]], np.float32))
      array([[2., 0.],
             [1., 1.]], dtype=float32)
    """
    a = _matrix("cholesky", a)
    factor = _linalg().cholesky(a, symmetrize_input=symmetrize_input)
    return _hermitian(factor) if upper else factor


def qr(a, mode: str = "reduced"):
    """The QR decomposition `a = Q R`.

    Args:
      a: a stack of `M x N` matrices.
      mode: "reduced" (Q is `M x K`, K = min(M, N)), "complete" (Q is `M x M`), or "r"
        (only R).

    Returns:
      A `QRResult(Q, R)`, or R alone for mode "r".

    Example:
      >>> q, r = qr(np.eye(2, dtype=np.float32))
      >>> np.allclose(np.asarray(q) @ np.asarray(r), np.eye(2))
      True
    """
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"jnp.linalg.qr: mode must be 'reduced', 'complete' or 'r', got "
                         f"{mode!r}.")
    a = _matrix("qr", a, square=False)
    q, r = _linalg().qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def eigh(a, UPLO: str | None = None, symmetrize_input: bool = True):  # noqa: N803
    """The eigenvalues (ascending) and eigenvectors of a Hermitian matrix.

    Args:
      a: a stack of Hermitian matrices.
      UPLO: "L" (the default) or "U": the triangle that is read.
      symmetrize_input: symmetrise `a` first (which makes gradients symmetric).

    Returns:
      An `EighResult(eigenvalues, eigenvectors)`.

    Example:
      >>> eigh(np.diag(np.array([2.0, 1.0], np.float32))).eigenvalues
      array([1., 2.], dtype=float32)
    """
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"jnp.linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}.")
    a = _matrix("eigh", a)
    v, w = _linalg().eigh(a, lower=UPLO != "U", symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a, UPLO: str | None = "L", *, symmetrize_input: bool = True):  # noqa: N803
    """The eigenvalues (ascending) of a Hermitian matrix.

    Example:
      >>> eigvalsh(np.eye(2, dtype=np.float32))
      array([1., 1.], dtype=float32)
    """
    return eigh(a, UPLO, symmetrize_input).eigenvalues


def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index=None):
    """The singular value decomposition `a = U diag(S) Vh` (S descending).

    Args:
      a: a stack of matrices.
      full_matrices: U and Vh square (else their inner dimension is min(M, N)).
      compute_uv: return U and Vh too (else only S).
      hermitian: `a` is Hermitian: the SVD comes from `eigh` (|eigenvalues|, sorted
        descending, with the eigenvalues' signs moved into Vh), as in JAX.
      subset_by_index: `(lo, hi)` keeps the singular values lo..hi-1 (and their vectors).

    Returns:
      `SVDResult(U, S, Vh)`, or S alone.

    Example:
      >>> svd(np.diag(np.array([1.0, 3.0], np.float32)), compute_uv=False)
      array([3., 1.], dtype=float32)
    """
    a = _matrix("svd", a, square=False)
    if hermitian:
        return _hermitian_svd(a, compute_uv, subset_by_index)
    result = _linalg().svd(a, full_matrices=full_matrices, compute_uv=compute_uv,
                           subset_by_index=subset_by_index)
    if not compute_uv:
        return result
    u, s, vh = result
    return SVDResult(u, s, vh)


def _hermitian_svd(a, compute_uv, subset_by_index):
    # a = V diag(w) V^H = (V) diag(|w|) (sign(w) V^H): sort |w| descending, carrying V along

    v, w = _linalg().eigh(a, subset_by_index=subset_by_index)
    s = lax.abs(w)
    last = get_aval(s).ndim - 1
    if not compute_uv:
        return lax.rev(lax.sort(s, dimension=last), (last,))
    idxs = lax.broadcasted_iota(np.uint32, get_aval(s).shape, last)
    s, idxs, sign = lax.sort((s, idxs, lax.sign(w)), dimension=last, num_keys=1)
    s, idxs, sign = (lax.rev(x, (last,)) for x in (s, idxs, sign))
    u = take_along_axis(v, lax.expand_dims(idxs, (last,)), axis=-1)
    sign = convert_dtype(lax.expand_dims(sign, (last,)), get_aval(u).dtype)
    return SVDResult(u, s, _hermitian(lax.mul(u, sign)))


def svdvals(x, /):
    """The singular values, descending.

    Example:
      >>> svdvals(np.eye(2, dtype=np.float32))
      array([1., 1.], dtype=float32)
    """
    return svd(x, compute_uv=False)


def _lu(a):
    lu, pivots, permutation = _linalg().lu(a)
    return lu, pivots, permutation


def _diagonal(x):
    return np_diagonal(x, 0, -2, -1)


def _pivot_parity(pivots):
    n = get_aval(pivots).shape[-1]
    iota = lax.broadcast_in_dim(lax.iota(get_aval(pivots).dtype, n), get_aval(pivots).shape,
                                (get_aval(pivots).ndim - 1,))
    swaps = lax.convert_element_type(lax.ne(pivots, iota), np.int32)
    return lax.reduce_sum(swaps, (get_aval(pivots).ndim - 1,))


def _entry(a, i: int, j: int):
    """`a[..., i, j]`."""
    nd = get_aval(a).ndim
    shape = get_aval(a).shape
    block = lax.slice(a, (0,) * (nd - 2) + (i, j), (*shape[:-2], i + 1, j + 1))
    return lax.reshape(block, shape[:-2])


def _det_2x2(a):
    e = functools.partial(_entry, a)
    return lax.sub(lax.mul(e(0, 0), e(1, 1)), lax.mul(e(0, 1), e(1, 0)))


def _det_3x3(a):
    e = functools.partial(_entry, a)
    terms = [((0, 0), (1, 1), (2, 2)), ((0, 1), (1, 2), (2, 0)), ((0, 2), (1, 0), (2, 1)),
             ((0, 2), (1, 1), (2, 0)), ((0, 0), (1, 2), (2, 1)), ((0, 1), (1, 0), (2, 2))]
    products = [lax.mul(lax.mul(e(*p), e(*q)), e(*r)) for p, q, r in terms]
    total = lax.add(lax.add(products[0], products[1]), products[2])
    for product in products[3:]:
        total = lax.sub(total, product)
    return total


def _slogdet_small(a):
    # n = 1 or 2: the determinant in closed form, as JAX computes it

    det_ = _entry(a, 0, 0) if get_aval(a).shape[-1] == 1 else _det_2x2(a)
    return SlogdetResult(sign(det_), _real(log(lax.abs(det_))))


def _real(x):
    return lax.real(x) if dtypes.issubdtype(get_aval(x).dtype, np.complexfloating) else x


def _slogdet_lu(a):
    lu, pivots, _ = _lu(a)
    diag = _diagonal(lu)
    dtype = get_aval(diag).dtype
    last = get_aval(diag).ndim - 1
    is_zero = lax.reduce_or(lax.eq(diag, convert_dtype(np.asarray(0), dtype)), (last,))
    parity = _pivot_parity(pivots)
    abs_diag = lax.abs(diag)
    if dtypes.issubdtype(dtype, np.complexfloating):
        phase = lax.reduce_prod(lax.div(diag, convert_dtype(abs_diag, dtype)), (last,))
    else:  # each negative diagonal entry flips the sign, as each row swap does
        negative = lax.lt(diag, np.zeros((), dtype))
        negatives = lax.reduce_sum(lax.convert_element_type(negative, np.int32), (last,))
        parity = lax.add(parity, negatives)
        phase = lax.full(get_aval(parity).shape, 1, dtype)
    flip = lax.sub(np.int32(1), lax.mul(np.int32(2), lax.rem(parity, np.int32(2))))  # 1 or -1
    phase = lax.mul(phase, convert_dtype(flip, dtype))
    logabsdet = lax.reduce_sum(convert_dtype(log(abs_diag), dtype), (last,))
    zero = lax.full(get_aval(phase).shape, 0, dtype)
    ninf = lax.full(get_aval(logabsdet).shape, -np.inf, dtype)
    return SlogdetResult(select(is_zero, phase, zero), _real(select(is_zero, logabsdet, ninf)))


def slogdet(a, *, method: str | None = None):
    """The sign and the natural log of the absolute value of the determinant (via LU; in
    closed form for 1x1 and 2x2 matrices, as in JAX).

    Example:
      >>> slogdet(np.diag(np.array([-2.0, 3.0], np.float32))).sign
      array(-1., dtype=float32)
    """
    if method not in (None, "lu"):
        raise ValueError(f"jnp.linalg.slogdet: method must be 'lu', got {method!r}.")
    a = _matrix("slogdet", a)
    if get_aval(a).shape[-1] in (1, 2):
        return _slogdet_small(a)
    return _slogdet_lu(a)


def det(a):
    """The determinant: in closed form for 2x2 and 3x3 matrices, else `sign * exp(logabsdet)`
    from `slogdet`, as JAX computes it.

    Example:
      >>> det(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
      array(-2., dtype=float32)
    """
    a = _matrix("det", a)
    n = get_aval(a).shape[-1]
    if n == 2:
        return _det_2x2(a)
    if n == 3:
        return _det_3x3(a)
    sign, logabsdet = slogdet(a)
    return lax.mul(sign, convert_dtype(exp(logabsdet), get_aval(sign).dtype))


def _lu_solve(lu, permutation, b):
    """Solves `a x = b` for matrix right-hand sides `b` (..., n, k) from `a`'s LU factors."""
    n = get_aval(lu).shape[-1]
    perm = lax.broadcast_in_dim(permutation, (*get_aval(permutation).shape, 1),
                                tuple(range(get_aval(permutation).ndim)))
    perm = lax.broadcast_in_dim(perm, (*get_aval(b).shape[:-2], n, get_aval(b).shape[-1]),
                                tuple(range(get_aval(b).ndim - get_aval(perm).ndim,
                                            get_aval(b).ndim)))
    pb = take_along_axis(b, perm, axis=-2, mode="clip")
    y = _linalg().triangular_solve(lu, pb, left_side=True, lower=True, unit_diagonal=True)
    return _linalg().triangular_solve(lu, y, left_side=True, lower=False)


def solve(a, b):
    """The solution `x` of `a @ x = b` (via LU with partial pivoting).

    Args:
      a: a stack of square `N x N` matrices.
      b: a vector of length N, or a stack of `N x K` matrices whose batch dims broadcast
        against `a`'s.

    Returns:
      `x`, of `b`'s shape.

    Example:
      >>> solve(np.array([[2.0, 0.0], [0.0, 4.0]], np.float32), np.array([2.0, 2.0], np.float32))
      array([1. , 0.5], dtype=float32)
    """
    a = _matrix("solve", a)
    check_arraylike("linalg.solve", b)
    a, b = promote_dtypes_inexact(a, as_array(b))
    a_shape, b_shape = get_aval(a).shape, get_aval(b).shape
    # As JAX since 0.5: only a 1-D b is a vector; any other b is a stack of N x K matrices whose
    # batch dimensions broadcast against a's (a batched vector b was ambiguous and is refused).
    vector = len(b_shape) == 1
    if vector:
        if b_shape[-1] != a_shape[-1]:
            raise ValueError(f"Invalid shapes for solve: {a_shape}, {b_shape}: b's length must "
                             f"equal a's size {a_shape[-1]}.")
        b = lax.reshape(b, (*b_shape, 1))
    elif b_shape[-2] != a_shape[-1]:
        raise ValueError(
            f"Invalid shapes for solve: {a_shape}, {b_shape}: b's second-to-last dimension must "
            f"be {a_shape[-1]}. For a batch of vectors, use solve(a, b[..., None])[..., 0].")
    batch = tuple(np.broadcast_shapes(a_shape[:-2], get_aval(b).shape[:-2]))

    a = broadcast_to_shape(a, (*batch, *a_shape[-2:]))
    b = broadcast_to_shape(b, (*batch, *get_aval(b).shape[-2:]))
    lu, _, permutation = _lu(a)
    x = _lu_solve(lu, permutation, b)
    return lax.reshape(x, get_aval(x).shape[:-1]) if vector else x


def inv(a):
    """The inverse of a square matrix (solving against the identity).

    Example:
      >>> inv(np.array([[2.0, 0.0], [0.0, 4.0]], np.float32))
      array([[0.5 , 0.  ],
             [0.  , 0.25]], dtype=float32)
    """
    a = _matrix("inv", a)
    shape = get_aval(a).shape
    identity = lax.broadcast_in_dim(eye(shape[-1], dtype=get_aval(a).dtype), shape,
                                    (len(shape) - 2, len(shape) - 1))
    return solve(a, identity)


def _default_rtol(a_shape, dtype):
    return dtypes.finfo(dtype).eps * max(a_shape[-2:])


def pinv(a, rtol=None, hermitian: bool = False, *, rcond=None):
    """The Moore-Penrose pseudo-inverse, via the SVD: singular values at most `rtol` times the
    largest count as zero (default `rtol`: 10 * max(M, N) * eps, as in JAX). Its derivative is
    JAX's closed form (not the SVD's), so it exists where the SVD's does not.

    Example:
      >>> pinv(np.array([[2.0, 0.0], [0.0, 0.0]], np.float32))
      array([[0.5, 0. ],
             [0. , 0. ]], dtype=float32)
    """
    if rcond is not None:
        if rtol is not None:
            raise ValueError("jnp.linalg.pinv: give rtol or rcond (its old name), not both.")
        rtol = rcond
    a = _matrix("pinv", a, square=False)
    pinv_a = custom_jvp(lambda a: _pinv_value(a, rtol, hermitian))
    pinv_a.defjvp(lambda primals, tangents: _pinv_jvp(primals, tangents, rtol, hermitian))
    return pinv_a(a)


def _pinv_jvp(primals, tangents, rtol, hermitian):
    # d pinv = -p da p + (p p^H) da^H (I - a p) + (I - p a) da^H (p^H p), grouped as JAX does

    (a,), (a_dot,) = primals, tangents
    p = _pinv_value(a, rtol, hermitian)
    if hermitian:
        a, a_dot = (lax.div(lax.add(x, _hermitian(x)), convert_dtype(np.asarray(2),
                                                                     get_aval(x).dtype))
                    for x in (a, a_dot))
    m, n = get_aval(a).shape[-2:]
    a_dot_h = _hermitian(a_dot)
    if m >= n:
        s = np_matmul(np_matmul(p, _hermitian(p)), a_dot_h)
        t = np_matmul(np_matmul(a_dot_h, _hermitian(p)), p)
        p_dot = lax.neg(np_matmul(np_matmul(p, a_dot), p))
        p_dot = lax.sub(lax.add(p_dot, s), np_matmul(np_matmul(s, a), p))
        p_dot = lax.sub(lax.add(p_dot, t), np_matmul(np_matmul(p, a), t))
    else:
        s = np_matmul(p, np_matmul(_hermitian(p), a_dot_h))
        t = np_matmul(a_dot_h, np_matmul(_hermitian(p), p))
        p_dot = lax.neg(np_matmul(p, np_matmul(a_dot, p)))
        p_dot = lax.sub(lax.add(p_dot, s), np_matmul(s, np_matmul(a, p)))
        p_dot = lax.sub(lax.add(p_dot, t), np_matmul(p, np_matmul(a, t)))
    return p, p_dot


def _pinv_value(a, rtol, hermitian):
    *batch, m, n = get_aval(a).shape
    dtype = get_aval(a).dtype
    if m == 0 or n == 0:
        return lax.full((*batch, n, m), 0, dtype)
    a = _conj(a)
    if rtol is None:
        eps = np.asarray(dtypes.finfo(dtype).eps)
        rtol = lax.mul(np.asarray(10.0 * max(m, n), eps.dtype), eps)
    u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    rtol = as_array(rtol)
    s_nd, rtol_nd = get_aval(s).ndim, get_aval(rtol).ndim
    rtol = lax.expand_dims(lax.expand_dims(rtol, (rtol_nd,)), tuple(range(s_nd - rtol_nd - 1)))
    largest = lax.slice_in_dim(s, 0, 1, axis=s_nd - 1)
    cutoff = multiply(rtol, largest)
    inf = lax.full(get_aval(s).shape, np.inf, get_aval(s).dtype)
    s = convert_dtype(select(lax.gt(s, cutoff), inf, s), get_aval(u).dtype)
    scaled = lax.div(_swap(u), lax.expand_dims(s, (s_nd,)))
    return convert_dtype(np_matmul(_swap(vh), scaled, precision="highest"), dtype)


def matrix_rank(M, rtol=None, *, tol=None):  # noqa: N803 (NumPy's name)
    """The number of singular values above `rtol` times the largest.

    Example:
      >>> matrix_rank(np.array([[1.0, 2.0], [2.0, 4.0]], np.float32))
      array(1, dtype=int32)
    """
    check_arraylike("linalg.matrix_rank", M)
    if np.ndim(M) < 2:
        # a vector or scalar has rank 1 unless it is all zeros, as in JAX and NumPy
        M = as_array(M)  # noqa: N806
        nonzero = lax.ne(M, lax.full_like(M, 0))
        return lax.convert_element_type(red.any(nonzero), dtypes.default_int_dtype())
    M = _matrix("matrix_rank", M, square=False)  # noqa: N806
    s = svd(M, compute_uv=False)
    real = get_aval(s).dtype
    last = get_aval(s).ndim - 1
    if tol is not None:
        cutoff = convert_dtype(as_array(tol), real)
    else:
        rtol = _default_rtol(get_aval(M).shape, real) if rtol is None else rtol
        cutoff = lax.mul(convert_dtype(as_array(rtol), real), lax.reduce_max(s, (last,)))
    if get_aval(cutoff).ndim:
        cutoff = lax.broadcast_in_dim(cutoff, get_aval(s).shape, tuple(range(last)))
    above = lax.convert_element_type(lax.gt(s, cutoff), dtypes.default_int_dtype())
    return lax.reduce_sum(above, (last,))


def matrix_power(a, n: int):
    """`a` raised to the integer power `n` by repeated squaring (`inv` first if n < 0).

    Example:
      >>> matrix_power(np.array([[1, 1], [0, 1]]), 3)
      array([[1, 3],
             [0, 1]], dtype=int32)
    """
    check_arraylike("linalg.matrix_power", a)
    a = as_array(a)
    shape = get_aval(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise TypeError(f"jnp.linalg.matrix_power: a must be a stack of square matrices, got "
                        f"shape {shape}.")  # JAX's type
    n = operator.index(n)
    if n < 0:
        a, n = inv(a), -n
    result = None
    power = a
    while n:
        if n & 1:
            result = power if result is None else np_matmul(result, power)
        n >>= 1
        if n:
            power = np_matmul(power, power)
    if result is None:
        return lax.broadcast_in_dim(eye(shape[-1], dtype=get_aval(a).dtype), shape,
                                    (len(shape) - 2, len(shape) - 1))
    return result


def multi_dot(arrays, *, precision=None):
    """The product of a chain of matrices (1-d first and last arguments are vectors),
    multiplied in the order that minimises the number of scalar multiplications.

    Example:
      >>> multi_dot([np.ones((2, 3)), np.ones((3, 4)), np.ones(4)]).shape
      (2,)
    """
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("jnp.linalg.multi_dot: need at least two arrays.")
    letters = "abcdefghijklmnopqrstuvwxyz"
    terms = []
    for k, x in enumerate(arrays):
        nd = get_aval(as_array(x)).ndim
        first, last = letters[k], letters[k + 1]
        if nd == 1:
            terms.append(last if k == 0 else first)
        elif nd == 2:
            terms.append(first + last)
        else:
            raise ValueError(f"jnp.linalg.multi_dot: argument {k} must be 1-d or 2-d, got "
                             f"{nd} dimensions.")
    out = "".join(c for c in "".join(terms) if "".join(terms).count(c) == 1)
    return einsum(",".join(terms) + "->" + out, *arrays, precision=precision)


# ----- norms --------------------------------------------------------------------------------


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2):  # noqa: A002
    """The vector p-norm over `axis` (all elements if None): `ord` is a number, inf or -inf
    (0 counts the non-zeros).

    Example:
      >>> vector_norm(np.array([3.0, 4.0], np.float32))
      array(5., dtype=float32)
    """
    check_arraylike("linalg.vector_norm", x)
    (x,) = promote_dtypes_inexact(as_array(x))
    if axis is None:
        ndim = get_aval(x).ndim
        out = _vector_norm_axis(lax.reshape(x, (get_aval(x).size,)), 0, False, ord, red,
                                absolute, power)
        return lax.reshape(out, (1,) * ndim) if keepdims else out
    return _vector_norm_axis(x, axis, keepdims, ord, red, absolute, power)


def _vector_norm_axis(x, axis, keepdims, ord, red, absolute, power):  # noqa: A002
    if ord is None or ord == 2:
        squared = lax.real(lax.mul(x, lax.conj(x))) if dtypes.issubdtype(
            get_aval(x).dtype, np.complexfloating) else lax.mul(x, x)
        return lax.sqrt(red.sum(squared, axis=axis, keepdims=keepdims))
    magnitude = absolute(x)
    if ord == np.inf:
        return red.max(magnitude, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return red.min(magnitude, axis=axis, keepdims=keepdims)
    if ord == 0:
        nonzero = lax.ne(x, convert_dtype(np.asarray(0), get_aval(x).dtype))
        return red.sum(lax.convert_element_type(nonzero, get_aval(magnitude).dtype), axis=axis,
                       keepdims=keepdims)
    if ord == 1:
        return red.sum(magnitude, axis=axis, keepdims=keepdims)
    p = float(ord)
    total = red.sum(power(magnitude, p), axis=axis, keepdims=keepdims)
    return power(total, 1.0 / p)


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro"):  # noqa: A002
    """The matrix norm over the last two axes: "fro", "nuc", 1, -1, 2, -2, inf or -inf.

    Example:
      >>> matrix_norm(np.eye(2, dtype=np.float32), ord=1)
      array(1., dtype=float32)
    """
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def norm(x, ord=None, axis=None, keepdims: bool = False):  # noqa: A002
    """The vector or matrix norm (NumPy's `ord` conventions).

    Args:
      x: the array.
      ord: for vectors (1-d, or an int `axis`) a number, inf or -inf; for matrices (2-d, or
        a pair `axis`) "fro", "nuc", 1, -1, 2, -2, inf or -inf. Default: the 2-norm / the
        Frobenius norm.
      axis: None, an int, or a pair of ints.
      keepdims: keep the reduced axes with size 1.

    Returns:
      The norm.

    Example:
      >>> norm(np.array([[3.0, 0.0], [0.0, 4.0]], np.float32))
      array(5., dtype=float32)
    """
    check_arraylike("linalg.norm", x)
    (x,) = promote_dtypes_inexact(as_array(x))
    ndim = get_aval(x).ndim
    if axis is None:
        if ord is None:  # the 2-norm of the flattened array, reduced over every axis
            return _vector_norm_axis(x, tuple(range(ndim)), keepdims, None, red, absolute,
                                     power)
        axes = tuple(range(ndim))
    else:
        axes = canonicalize_axes(axis, ndim, "jnp.linalg.norm")
    if len(axes) == 1:
        return _vector_norm_axis(x, axes[0], keepdims, ord, red, absolute, power)
    if len(axes) != 2:
        raise ValueError(f"jnp.linalg.norm: improper number of axes for a norm: {axes}; use one "
                         "axis (vector norm) or two (matrix norm).")
    return _matrix_norm(x, axes, keepdims, ord, red, absolute)


def _matrix_norm(x, axes, keepdims, ord, red, absolute):  # noqa: A002
    row, col = axes
    if ord in (None, "fro"):
        squared = lax.real(lax.mul(x, lax.conj(x))) if dtypes.issubdtype(
            get_aval(x).dtype, np.complexfloating) else lax.mul(x, x)
        return lax.sqrt(red.sum(squared, axis=axes, keepdims=keepdims))
    if ord in (1, -1, np.inf, -np.inf):
        summed_axis, kept_axis = (row, col) if ord in (1, -1) else (col, row)
        sums = red.sum(absolute(x), axis=summed_axis, keepdims=True)
        pick = red.max if ord in (1, np.inf) else red.min
        out = pick(sums, axis=kept_axis, keepdims=True)
        return out if keepdims else lax.squeeze(out, tuple(sorted(axes)))
    if ord in (2, -2, "nuc"):
        moved = moveaxis(x, (row, col), (-2, -1))
        s = svd(moved, compute_uv=False)
        last = get_aval(s).ndim - 1
        reduce = {"nuc": lax.reduce_sum, 2: lax.reduce_max, -2: lax.reduce_min}[ord]
        out = reduce(s, (last,))
        if keepdims:
            shape = list(get_aval(x).shape)
            shape[row] = shape[col] = 1
            out = lax.reshape(out, tuple(shape))
        return out
    raise ValueError(f"jnp.linalg.norm: invalid ord {ord!r} for a matrix norm.")


def cond(x, p=None):
    """The condition number of a matrix in the norm `p` (the 2-norm by default: the ratio of
    the largest to the smallest singular value).

    Example:
      >>> cond(np.diag(np.array([1.0, 4.0], np.float32)))
      array(4., dtype=float32)
    """
    x = _matrix("cond", x, square=p not in (None, 2, -2))
    if get_aval(x).size == 0:  # JAX's answer (not a NaN from an empty reduction)
        raise ValueError(f"jnp.linalg.cond: input array must not be empty; got shape "
                         f"{get_aval(x).shape}.")
    if p in (None, 2, -2):
        s = svd(x, compute_uv=False)
        last = get_aval(s).ndim - 1
        largest, smallest = lax.reduce_max(s, (last,)), lax.reduce_min(s, (last,))
        return lax.div(largest, smallest) if p != -2 else lax.div(smallest, largest)
    return lax.mul(norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1)))


# ----- general eigenproblem and least squares -----------------------------------------------


class EigResult(NamedTuple):
    """The result of `eig`: the (complex) eigenvalues and right eigenvectors (as columns)."""

    eigenvalues: object
    eigenvectors: object


def eig(a):
    """The eigenvalues and right eigenvectors of a general square matrix (always complex;
    LAPACK's geev on CPU, each eigenvector of unit norm with a real largest component).

    Example:
      >>> eig(np.diag(np.array([2.0, 1.0], np.float32))).eigenvalues
      array([2.+0.j, 1.+0.j], dtype=complex64)
    """
    a = _matrix("eig", a)
    w, v = _linalg().eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


def eigvals(a):
    """The (complex) eigenvalues of a general square matrix.

    Example:
      >>> eigvals(np.array([[3.0, 1.0], [0.0, 2.0]], np.float32))
      array([3.+0.j, 2.+0.j], dtype=complex64)
    """
    a = _matrix("eigvals", a)
    return _linalg().eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


def lstsq(a, b, rcond=None, *, numpy_resid: bool = False):
    """The least-squares solution `x` minimizing `||b - a x||` (via the SVD, as in JAX).

    Args:
      a: an `M x N` matrix.
      b: a vector of length M or an `M x K` matrix.
      rcond: singular values at most `rcond` times the largest count as zero (default:
        eps * max(M, N); a negative value means eps).
      numpy_resid: return empty residuals where NumPy does (rank < N or M <= N); this needs
        concrete values, so not under jit.

    Returns:
      `(x, residuals, rank, s)`: residuals are the squared 2-norms of the columns of b - a x.

    Example:
      >>> x, *_ = lstsq(np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]], np.float32),
      ...               np.array([1.0, 2.0, 3.0], np.float32))
      >>> x
      array([1., 1.], dtype=float32)
    """
    check_arraylike("linalg.lstsq", a, b)
    a, b = promote_dtypes_inexact(as_array(a), as_array(b))
    a_shape, b_shape = get_aval(a).shape, get_aval(b).shape
    if len(a_shape) != 2:
        raise TypeError(f"jnp.linalg.lstsq: a must be 2-dimensional, got shape {a_shape}.")
    if len(b_shape) not in (1, 2):
        raise TypeError(f"jnp.linalg.lstsq: b must be 1- or 2-dimensional, got shape {b_shape}.")
    if a_shape[0] != b_shape[0]:
        raise ValueError(f"jnp.linalg.lstsq: a {a_shape} and b {b_shape} must have the same "
                         "number of rows.")
    vector = len(b_shape) == 1
    if vector:
        b = lax.reshape(b, (b_shape[0], 1))
    (m, n), dtype = a_shape, get_aval(a).dtype
    if m * n == 0:
        s = lax.full((0,), 0, dtype)
        rank = as_array(0)
        x = lax.full((n, get_aval(b).shape[1]), 0, dtype)
    else:
        x, rank, s = _lstsq_svd(a, b, rcond, m, n)
    if numpy_resid and (int(rank) < n or m <= n):
        resid = lax.full((0,), 0, dtype)
    else:
        residual = lax.sub(b, np_matmul(a, x, precision="highest"))
        resid = multiply(*(norm(residual, axis=0),) * 2)
    if vector:
        x = lax.reshape(x, (n,))
    return x, resid, rank, s


def _lstsq_svd(a, b, rcond, m, n):
    dtype = get_aval(a).dtype
    eps = dtypes.finfo(dtype).eps
    if rcond is None:
        rcond = as_array(float(eps) * max(n, m))
    else:
        rcond = as_array(rcond)
        rcond = where(lax.lt(rcond, convert_dtype(np.asarray(0), get_aval(rcond).dtype)),
                      eps, rcond)
    u, s, vt = svd(a, full_matrices=False)
    real = get_aval(s).dtype
    largest = lax.slice_in_dim(s, 0, 1)
    mask = lax.bitwise_and(lax.gt(s, np.zeros((), real)),
                           lax.ge(s, lax.mul(convert_dtype(rcond, real), largest)))
    rank = total(mask)
    safe_s = convert_dtype(where(mask, s, 1), dtype)
    s_inv = lax.expand_dims(where(mask, lax.div(convert_dtype(np.asarray(1), dtype), safe_s), 0),
                            (1,))
    u_t_b = np_matmul(_hermitian(u), b, precision="highest")
    x = np_matmul(_hermitian(vt), lax.mul(lax.broadcast_in_dim(s_inv, get_aval(u_t_b).shape,
                                                            (0, 1)), u_t_b),
               precision="highest")
    return x, rank, s


# ----- array-API spellings over the last two axes -------------------------------------------


def cross(x1, x2, /, *, axis: int = -1):
    """The cross product of 3-vectors along `axis` (both inputs need size 3 there).

    Example:
      >>> cross(np.array([1, 0, 0]), np.array([0, 1, 0]))
      array([0, 0, 1], dtype=int32)
    """
    check_arraylike("linalg.cross", x1, x2)
    x1, x2 = as_array(x1), as_array(x2)
    sizes = (get_aval(x1).shape[axis], get_aval(x2).shape[axis])
    if sizes != (3, 3):
        raise ValueError(f"jnp.linalg.cross: both inputs must have size 3 along axis {axis}, "
                         f"got sizes {sizes}.")
    return np_cross(x1, x2, axis=axis)


def diagonal(x, /, *, offset: int = 0):
    """The `offset`-th diagonal of each matrix (the last two axes).

    Example:
      >>> diagonal(np.arange(4).reshape(2, 2))
      array([0, 3], dtype=int32)
    """
    return np_diagonal(as_array(x, "linalg.diagonal"), offset, -2, -1)


def trace(x, /, *, offset: int = 0, dtype=None):
    """The sum of the `offset`-th diagonal of each matrix (the last two axes).

    Example:
      >>> trace(np.arange(4).reshape(2, 2))
      array(3, dtype=int32)
    """
    return np_trace(as_array(x, "linalg.trace"), offset, -2, -1, dtype=dtype)


def matrix_transpose(x, /):
    """Each matrix transposed (the last two axes swapped).

    Example:
      >>> matrix_transpose(np.arange(6).reshape(2, 3)).shape
      (3, 2)
    """
    x = as_array(x, "linalg.matrix_transpose")
    if get_aval(x).ndim < 2:
        raise ValueError("jnp.linalg.matrix_transpose: x needs at least 2 dimensions, got "
                         f"shape {get_aval(x).shape}.")
    return _swap(x)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """The matrix product (`jnp.matmul` with positional-only operands).

    Example:
      >>> matmul(np.eye(2, dtype=np.float32), np.ones((2, 1), np.float32))
      array([[1.],
             [1.]], dtype=float32)
    """
    return np_matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    """`jnp.tensordot` with positional-only operands.

    Example:
      >>> tensordot(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32), axes=1).shape
      (2, 2)
    """
    return np_tensordot(x1, x2, axes, precision=precision,
                        preferred_element_type=preferred_element_type)


def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
    """The conjugated dot product of vectors along `axis`, batched over the other axes.

    Example:
      >>> vecdot(np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32))
      array(11., dtype=float32)
    """
    return np_vecdot(x1, x2, axis=axis, precision=precision,
                     preferred_element_type=preferred_element_type)


def outer(x1, x2, /):
    """The outer product of two 1-d arrays.

    Example:
      >>> outer(np.array([1, 2]), np.array([3, 4]))
      array([[3, 4],
             [6, 8]], dtype=int32)
    """
    check_arraylike("linalg.outer", x1, x2)
    x1, x2 = as_array(x1), as_array(x2)
    if get_aval(x1).ndim != 1 or get_aval(x2).ndim != 1:
        raise ValueError("jnp.linalg.outer: both inputs must be 1-dimensional, got shapes "
                         f"{get_aval(x1).shape} and {get_aval(x2).shape}.")
    return multiply(lax.expand_dims(x1, (1,)), lax.expand_dims(x2, (0,)))


def tensorinv(a, ind: int = 2):
    """The tensor inverse: `tensordot(tensorinv(a, ind), a, ind)` is the identity.

    Args:
      a: an array whose first `ind` dimensions have the same number of elements as the rest.
      ind: how many leading dimensions take part in the inverse.

    Example:
      >>> tensorinv(np.eye(4, dtype=np.float32).reshape(4, 2, 2), ind=1).shape
      (2, 2, 4)
    """
    a = as_array(a, "linalg.tensorinv")
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"jnp.linalg.tensorinv: ind must be a positive integer, got {ind}.")
    shape = get_aval(a).shape
    rows, cols = int(np.prod(shape[:ind])), int(np.prod(shape[ind:]))
    if rows != cols:
        raise ValueError(f"jnp.linalg.tensorinv: the first {ind} dimensions of {shape} hold "
                         f"{rows} elements and the rest {cols}; they must be equal.")
    return lax.reshape(inv(lax.reshape(a, (rows, cols))), (*shape[ind:], *shape[:ind]))


def tensorsolve(a, b, axes=None):
    """The `x` with `tensordot(a, x, x.ndim) == b`.

    Args:
      a: the coefficient tensor; its leading dimensions (after moving `axes` to the end)
        match `b`'s shape.
      b: the right-hand side.
      axes: axes of `a` moved to the end first.

    Example:
      >>> tensorsolve(np.eye(4, dtype=np.float32).reshape(2, 2, 4),
      ...             np.ones((2, 2), np.float32)).shape
      (4,)
    """
    check_arraylike("linalg.tensorsolve", a, b)
    a, b = as_array(a), as_array(b)
    if axes is not None:
        a = moveaxis(a, axes, len(axes) * (get_aval(a).ndim - 1,))
    a_shape, b_shape = get_aval(a).shape, get_aval(b).shape
    out_shape = a_shape[len(b_shape):]
    if a_shape[:len(b_shape)] != b_shape:
        raise ValueError(f"jnp.linalg.tensorsolve: the leading dimensions of a {a_shape} must "
                         f"match b's shape {b_shape} (after moving `axes` to the end).")
    size = int(np.prod(b_shape))
    if size != int(np.prod(out_shape)):
        raise ValueError(f"jnp.linalg.tensorsolve: a {a_shape} must hold as many elements in "
                         f"its first {len(b_shape)} dimensions as in the rest.")
    flat_a = lax.reshape(a, (size, int(np.prod(out_shape))))
    return lax.reshape(solve(flat_a, lax.reshape(b, (size,))), out_shape)
