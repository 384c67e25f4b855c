"""Differences, sums and signals: `diff`, `ediff1d`, `gradient`, `trapezoid`, `convolve`,
`correlate`, `interp`, `unwrap`, `digitize`, `cov`, `corrcoef`, the window functions, and
polynomials (`polyval`, `polyadd`, `polysub`, `polymul`, `polyder`, `polyint`, `poly`,
`vander`)."""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import dtypes, lax
from laminax_core._avals import get_aval
from laminax_core.numpy import linalg
from laminax_core.numpy._indexing import take
from laminax_core.numpy._linalg_products import diagonal
from laminax_core.numpy._operands import (
    as_array,
    canonicalize_axis,
    check_arraylike,
    convert_dtype,
    promote_dtypes,
    promote_dtypes_inexact,
    select,
)
from laminax_core.numpy._reductions import cumsum
from laminax_core.numpy._reductions import sum as sum_
from laminax_core.numpy._selection import clip
from laminax_core.numpy._shape import atleast_2d, broadcast_to, concatenate, ravel
from laminax_core.numpy._sorting import argsort, searchsorted
from laminax_core.numpy._ufuncs import abs as abs_
from laminax_core.numpy._ufuncs import conjugate, multiply, power, remainder

__all__ = [
    "bartlett", "blackman", "convolve", "corrcoef", "correlate", "cov", "diff", "digitize",
    "ediff1d", "gradient", "hamming", "hanning", "interp", "poly", "polyadd", "polyder",
    "polyint", "polymul", "polysub", "polyval", "trapezoid", "unwrap", "vander",
]  # fmt: skip


def _slice_axis(x, axis, lo, hi):
    shape = get_aval(x).shape
    start, limit = [0] * len(shape), list(shape)
    start[axis], limit[axis] = lo, hi
    return lax.slice(x, start, limit)


def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None):
    """The `n`-th discrete difference along `axis` (booleans differ by "not equal").

    Example:
      >>> diff(np.array([1, 4, 9]), prepend=0)
      array([1, 3, 5], dtype=int32)
    """
    check_arraylike("diff", a)
    a = as_array(a)
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"jnp.diff: order must be non-negative, got {n}.")
    if n == 0:
        return a
    axis = canonicalize_axis(axis, get_aval(a).ndim, "jnp.diff")
    parts = []
    for extra in (prepend, None, append):
        if extra is None and parts and parts[-1] is a:
            continue
        if extra is not None:
            extra = as_array(extra)
            if get_aval(extra).ndim == 0:
                shape = list(get_aval(a).shape)
                shape[axis] = 1
                extra = broadcast_to(extra, tuple(shape))
            parts.append(extra)
        elif not any(p is a for p in parts):
            parts.append(a)
    if len(parts) > 1:
        a = concatenate(parts, axis)
    for _ in range(n):
        size = get_aval(a).shape[axis]
        hi, lo = _slice_axis(a, axis, 1, size), _slice_axis(a, axis, 0, max(size - 1, 0))
        a = lax.ne(hi, lo) if get_aval(a).dtype == np.bool_ else lax.sub(hi, lo)
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """The differences of the flattened `ary`, optionally with values added at either end.

    Example:
      >>> ediff1d(np.array([1, 2, 4]), to_begin=-9)
      array([-9,  1,  2], dtype=int32)
    """
    check_arraylike("ediff1d", ary)
    flat = ravel(as_array(ary))
    out = diff(flat)
    dtype = get_aval(out).dtype
    parts = [convert_dtype(ravel(as_array(to_begin)), dtype)] if to_begin is not None else []
    parts.append(out)
    if to_end is not None:
        parts.append(convert_dtype(ravel(as_array(to_end)), dtype))
    return concatenate(parts) if len(parts) > 1 else out


def gradient(f, *varargs, axis=None, edge_order=None):
    """The gradient by central differences inside, one-sided at the edges (first order).

    Example:
      >>> gradient(np.array([1.0, 2.0, 4.0, 7.0], np.float32))
      array([1. , 1.5, 2.5, 3. ], dtype=float32)
    """
    if edge_order not in (None, 1):
        raise NotImplementedError("jnp.gradient: only edge_order=1 is supported (as in JAX).")
    check_arraylike("gradient", f)
    (f,) = promote_dtypes_inexact(as_array(f))
    ndim = get_aval(f).ndim
    axes = list(range(ndim)) if axis is None else [
        canonicalize_axis(a, ndim, "jnp.gradient") for a in (axis if isinstance(axis, (list, tuple))
                                                              else [axis])]
    spacing = list(varargs) if varargs else [1.0] * len(axes)
    if len(spacing) == 1 and len(axes) > 1:
        spacing *= len(axes)
    out = []
    for ax, h in zip(axes, spacing, strict=True):
        if np.ndim(h) != 0:
            raise NotImplementedError("jnp.gradient: only scalar spacings are supported.")
        n = get_aval(f).shape[ax]
        if n < 2:
            raise ValueError(f"jnp.gradient: axis {ax} needs at least 2 points, has {n}.")
        h = convert_dtype(np.asarray(h), get_aval(f).dtype)
        first = lax.sub(_slice_axis(f, ax, 1, 2), _slice_axis(f, ax, 0, 1))
        last = lax.sub(_slice_axis(f, ax, n - 1, n), _slice_axis(f, ax, n - 2, n - 1))
        parts = [first]
        if n > 2:
            inner = lax.sub(_slice_axis(f, ax, 2, n), _slice_axis(f, ax, 0, n - 2))
            parts.append(lax.div(inner, convert_dtype(np.asarray(2), get_aval(f).dtype)))
        parts.append(last)
        out.append(lax.div(concatenate(parts, ax), h))
    return out[0] if len(out) == 1 else out


def trapezoid(y, x=None, dx=1.0, axis: int = -1):
    """The integral of `y` along `axis` by the trapezoidal rule (at points `x`, or spacing
    `dx`).

    Example:
      >>> trapezoid(np.array([1.0, 2.0, 3.0], np.float32))
      array(4., dtype=float32)
    """
    check_arraylike("trapezoid", y)
    (y,) = promote_dtypes_inexact(as_array(y))
    axis = canonicalize_axis(axis, get_aval(y).ndim, "jnp.trapezoid")
    n = get_aval(y).shape[axis]
    pair_sums = lax.add(_slice_axis(y, axis, 1, n), _slice_axis(y, axis, 0, n - 1))
    if x is None:
        widths = convert_dtype(as_array(dx), get_aval(y).dtype)
    else:
        (x,) = promote_dtypes_inexact(as_array(x))
        x_axis = axis if get_aval(x).ndim == get_aval(y).ndim else 0
        widths = diff(x, axis=x_axis)
        if get_aval(widths).ndim == 1 and get_aval(y).ndim > 1:
            shape = [1] * get_aval(y).ndim
            shape[axis] = n - 1
            widths = lax.reshape(widths, tuple(shape))

    total = sum_(multiply(pair_sums, widths), axis=axis)
    return lax.mul(total, convert_dtype(np.asarray(0.5), get_aval(total).dtype))


def _conv1d(name, a, v, mode, promote):
    """The full/same/valid 1-d convolution `out[k] = sum_j a[k - j] v[j]`, as a sum of `len(v)`
    shifted products (static sizes)."""
    check_arraylike(name, a, v)
    a, v = promote(as_array(a), as_array(v))
    if get_aval(a).ndim != 1 or get_aval(v).ndim != 1:
        raise ValueError(f"jnp.{name}: both inputs must be 1-d, got shapes {get_aval(a).shape} "
                         f"and {get_aval(v).shape}.")
    n, m = get_aval(a).shape[0], get_aval(v).shape[0]
    if n == 0 or m == 0:
        raise ValueError(f"jnp.{name}: inputs cannot be empty.")
    full = n + m - 1
    padded = lax.pad(a, np.zeros((), get_aval(a).dtype), [(m - 1, m - 1, 0)])
    total = None
    for j in range(m):
        window = lax.slice(padded, (m - 1 - j,), (m - 1 - j + full,))
        term = lax.mul(window, lax.broadcast_in_dim(lax.slice(v, (j,), (j + 1,)), (full,), (0,)))
        total = term if total is None else lax.add(total, term)
    if mode == "full":
        return total
    if mode == "same":
        start = (min(n, m) - 1) // 2
        return lax.slice(total, (start,), (start + max(n, m),))
    if mode == "valid":
        start = min(n, m) - 1
        return lax.slice(total, (start,), (start + max(n, m) - min(n, m) + 1,))
    raise ValueError(f"jnp.{name}: mode must be 'full', 'same' or 'valid', got {mode!r}.")


def convolve(a, v, mode: str = "full", *, precision=None, preferred_element_type=None):
    """The discrete linear convolution of two 1-d arrays.

    Example:
      >>> convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]), mode="same")
      array([1. , 2.5, 4. ], dtype=float32)
    """
    return _conv1d("convolve", a, v, mode, promote_dtypes_inexact)


def correlate(a, v, mode: str = "valid", *, precision=None, preferred_element_type=None):
    """The cross-correlation `out[k] = sum_n a[n + k] conj(v[n])` of two 1-d arrays.

    Example:
      >>> correlate(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]), mode="full")
      array([0.5, 2. , 3.5, 3. , 0. ], dtype=float32)
    """
    check_arraylike("correlate", a, v)
    v = as_array(v)
    if get_aval(v).ndim != 1:
        raise ValueError(f"jnp.correlate: both inputs must be 1-d, got v of shape "
                         f"{get_aval(v).shape}.")
    return _conv1d("correlate", a, conjugate(lax.rev(v, (0,))), mode, promote_dtypes_inexact)


def interp(x, xp, fp, left=None, right=None, period=None):
    """Linear interpolation of the points `(xp, fp)` (`xp` increasing) at `x`.

    Example:
      >>> interp(np.array([2.5, 0.0, 5.0]), np.array([1.0, 2, 3]), np.array([3.0, 2, 0]))
      array([1., 3., 0.], dtype=float32)
    """
    check_arraylike("interp", x, xp, fp)
    x, xp, fp = promote_dtypes_inexact(as_array(x), as_array(xp), as_array(fp))
    if get_aval(xp).ndim != 1 or get_aval(fp).shape != get_aval(xp).shape:
        raise ValueError("jnp.interp: xp and fp must be 1-d arrays of the same length.")
    if period is not None:
        period = convert_dtype(as_array(period), get_aval(x).dtype)
        x = remainder(x, period)
        xp = remainder(xp, period)
        order = argsort(xp)
        xp, fp = take(xp, order), take(fp, order)
        xp = lax.concatenate([lax.sub(lax.slice(xp, (get_aval(xp).shape[0] - 1,),
                                                    (get_aval(xp).shape[0],)), period), xp,
                              lax.add(lax.slice(xp, (0,), (1,)), period)], 0)
        fp = lax.concatenate([lax.slice(fp, (get_aval(fp).shape[0] - 1,), (get_aval(fp).shape[0],)),
                              fp, lax.slice(fp, (0,), (1,))], 0)
    n = get_aval(xp).shape[0]
    i = lax.max(lax.min(searchsorted(xp, x, side="right"), np.asarray(n - 1, np.int32)),
                np.asarray(1, np.int32))
    i = convert_dtype(i, np.int32)
    one = np.int32(1)
    x0, x1 = take(xp, lax.sub(i, one), mode="clip"), take(xp, i, mode="clip")
    y0, y1 = take(fp, lax.sub(i, one), mode="clip"), take(fp, i, mode="clip")
    dx = lax.sub(x1, x0)
    safe_dx = select(lax.eq(dx, np.zeros((), get_aval(dx).dtype)), dx,
                     lax.broadcast_in_dim(np.ones((), get_aval(dx).dtype), get_aval(dx).shape, ()))
    out = lax.add(y0, lax.mul(lax.div(lax.sub(x, x0), safe_dx), lax.sub(y1, y0)))
    if period is None:
        dtype = get_aval(x).dtype
        first, last = (lax.reshape(lax.slice(xp, (k,), (k + 1,)), ()) for k in (0, n - 1))
        f_first, f_last = (lax.reshape(lax.slice(fp, (k,), (k + 1,)), ()) for k in (0, n - 1))
        left_v = f_first if left is None else convert_dtype(as_array(left), dtype)
        right_v = f_last if right is None else convert_dtype(as_array(right), dtype)
        out = select(lax.lt(x, first), out, left_v)
        out = select(lax.gt(x, last), out, right_v)
    return out


def unwrap(p, discont=None, axis: int = -1, period=2 * np.pi):
    """`p` with jumps larger than `discont` replaced by their `period` complement.

    Example:
      >>> unwrap(np.array([0.0, 6.0], np.float32)).round(4)
      array([ 0.    , -0.2832], dtype=float32)
    """
    check_arraylike("unwrap", p)
    (p,) = promote_dtypes_inexact(as_array(p))
    dtype = get_aval(p).dtype
    axis = canonicalize_axis(axis, get_aval(p).ndim, "jnp.unwrap")
    half = period / 2
    discont = half if discont is None else max(discont, half)
    d = diff(p, axis=axis)
    dd = lax.sub(remainder(lax.add(d, np.asarray(half, dtype)), np.asarray(period, dtype)),
                 np.asarray(half, dtype))
    at_boundary = lax.bitwise_and(lax.eq(dd, np.asarray(-half, dtype)),
                                  lax.gt(d, np.zeros((), dtype)))
    dd = select(at_boundary, dd, lax.broadcast_in_dim(np.asarray(half, dtype),
                                                      get_aval(dd).shape, ()))
    correction = lax.sub(dd, d)
    small = lax.lt(abs_(d), np.asarray(discont, dtype))
    correction = select(small, correction, lax.broadcast_in_dim(np.zeros((), dtype),
                                                                get_aval(d).shape, ()))
    shape = list(get_aval(p).shape)
    shape[axis] = 1
    zeros = lax.broadcast_in_dim(np.zeros((), dtype), tuple(shape), ())
    return lax.add(p, concatenate([zeros, cumsum(correction, axis=axis)], axis))


def digitize(x, bins, right: bool = False):
    """The index of the bin of each element of `x` (`bins` monotonic, either direction).

    Example:
      >>> digitize(np.array([0.2, 6.4, 3.0]), np.array([0.0, 1.0, 2.5, 4.0]))
      array([1, 4, 3], dtype=int32)
    """
    check_arraylike("digitize", x, bins)
    x, bins = promote_dtypes(as_array(x), as_array(bins))
    if get_aval(bins).ndim != 1:
        raise ValueError(f"jnp.digitize: bins must be 1-d, got shape {get_aval(bins).shape}.")
    n = get_aval(bins).shape[0]
    if n == 0:
        return lax.broadcast_in_dim(np.zeros((), np.int32), get_aval(x).shape, ())
    side = "left" if right else "right"
    increasing = lax.le(lax.reshape(lax.slice(bins, (0,), (1,)), ()),
                        lax.reshape(lax.slice(bins, (n - 1,), (n,)), ()))
    up = searchsorted(bins, x, side=side)
    # decreasing bins: counted from the end of the reversed bins, with the same side (NumPy's
    # rule: bins[i-1] > x >= bins[i] when right is False)
    down = lax.sub(np.asarray(n, get_aval(up).dtype),
                   searchsorted(lax.rev(bins, (0,)), x, side=side))
    return select(increasing, down, up)


def cov(m, y=None, rowvar: bool = True, bias: bool = False, ddof=None, fweights=None,
        aweights=None):
    """The covariance matrix of the variables in the rows (or columns) of `m` (and `y`).

    Example:
      >>> cov(np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]], np.float32))
      array([[ 1., -1.],
             [-1.,  1.]], dtype=float32)
    """
    check_arraylike("cov", m)
    (x,) = promote_dtypes_inexact(atleast_2d(as_array(m)))
    if not rowvar and get_aval(x).shape[0] != 1:
        x = lax.transpose(x, (1, 0))
    if y is not None:
        (y_,) = promote_dtypes_inexact(atleast_2d(as_array(y)))
        if not rowvar and get_aval(y_).shape[0] != 1:
            y_ = lax.transpose(y_, (1, 0))
        x, y_ = promote_dtypes(x, y_)
        x = concatenate([x, y_], 0)
    if ddof is None:
        ddof = 0 if bias else 1
    n = get_aval(x).shape[1]
    dtype = get_aval(x).dtype
    weights = None
    if fweights is not None:
        weights = convert_dtype(as_array(fweights), dtype)
    if aweights is not None:
        aw = convert_dtype(as_array(aweights), dtype)
        weights = aw if weights is None else lax.mul(weights, aw)
    if weights is None:
        weights = lax.broadcast_in_dim(np.ones((), dtype), (n,), ())
    w_sum = lax.reduce_sum(weights, (0,))
    avg = lax.div(lax.reduce_sum(lax.mul(x, lax.broadcast_in_dim(weights, get_aval(x).shape,
                                                                 (1,))), (1,)), w_sum)
    if aweights is None:
        fact = lax.sub(w_sum, np.asarray(ddof, dtype))
    else:
        aw = convert_dtype(as_array(aweights), dtype)
        fact = lax.sub(w_sum, lax.div(lax.mul(np.asarray(ddof, dtype),
                                              lax.reduce_sum(lax.mul(weights, aw), (0,))), w_sum))
    centered = lax.sub(x, lax.broadcast_in_dim(avg, get_aval(x).shape, (0,)))
    weighted = lax.mul(centered, lax.broadcast_in_dim(weights, get_aval(x).shape, (1,)))
    out = lax.dot_general(weighted, conjugate(centered), (((1,), (1,)), ((), ())),
                          preferred_element_type=dtype)
    out = lax.div(out, fact)
    return lax.squeeze(out, (0, 1)) if get_aval(out).shape == (1, 1) else out


def corrcoef(x, y=None, rowvar: bool = True):
    """The Pearson correlation coefficients (the covariance normalised by the deviations).

    Example:
      >>> corrcoef(np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]], np.float32))
      array([[ 1., -1.],
             [-1.,  1.]], dtype=float32)
    """
    c = cov(x, y, rowvar)
    if get_aval(c).ndim == 0:
        return lax.div(c, c)
    d = diagonal(c)
    std = lax.sqrt(d)
    n = get_aval(d).shape[0]
    c = lax.div(c, lax.broadcast_in_dim(std, (n, n), (0,)))
    c = lax.div(c, lax.broadcast_in_dim(std, (n, n), (1,)))
    return clip(c, -1, 1) if not dtypes.issubdtype(get_aval(c).dtype, np.complexfloating) else c


def _window(name, m, fn):
    m = operator.index(m)
    dtype = dtypes.default_float_dtype()
    if m <= 1:
        return np.ones((max(m, 0),), dtype)
    n = lax.iota(dtype, m)
    return fn(n, np.asarray(m - 1, dtype), dtype)


def hamming(M: int):  # noqa: N803 (NumPy's name)
    """The Hamming window of `M` points.

    Example:
      >>> hamming(3).round(4)
      array([0.08, 1.  , 0.08], dtype=float32)
    """
    return _window("hamming", M, lambda n, d, t: lax.sub(
        np.asarray(0.54, t), lax.mul(np.asarray(0.46, t),
                                     lax.cos(lax.div(lax.mul(np.asarray(2 * np.pi, t), n), d)))))


def hanning(M: int):  # noqa: N803 (NumPy's name)
    """The Hann window of `M` points.

    Example:
      >>> hanning(3)
      array([0., 1., 0.], dtype=float32)
    """
    return _window("hanning", M, lambda n, d, t: lax.sub(
        np.asarray(0.5, t), lax.mul(np.asarray(0.5, t),
                                    lax.cos(lax.div(lax.mul(np.asarray(2 * np.pi, t), n), d)))))


def blackman(M: int):  # noqa: N803 (NumPy's name)
    """The Blackman window of `M` points.

    Example:
      >>> blackman(3).round(4)
      array([-0.,  1., -0.], dtype=float32)
    """
    def fn(n, d, t):
        angle = lax.div(lax.mul(np.asarray(2 * np.pi, t), n), d)
        return lax.add(lax.sub(np.asarray(0.42, t), lax.mul(np.asarray(0.5, t), lax.cos(angle))),
                       lax.mul(np.asarray(0.08, t), lax.cos(lax.mul(np.asarray(2, t), angle))))

    return _window("blackman", M, fn)


def bartlett(M: int):  # noqa: N803 (NumPy's name)
    """The Bartlett (triangular) window of `M` points.

    Example:
      >>> bartlett(5)
      array([0. , 0.5, 1. , 0.5, 0. ], dtype=float32)
    """
    def fn(n, d, t):
        half = lax.div(d, np.asarray(2, t))
        return lax.sub(np.asarray(1, t), lax.abs(lax.div(lax.sub(n, half), half)))

    return _window("bartlett", M, fn)


# ----- polynomials --------------------------------------------------------------------------


def polyval(p, x, *, unroll: int = 16):
    """The polynomial with coefficients `p` (highest power first) at `x` (Horner's rule).

    Example:
      >>> polyval(np.array([3, 0, 1]), 5)
      array(76, dtype=int32)
    """
    check_arraylike("polyval", p, x)
    p, x = promote_dtypes(as_array(p), as_array(x))
    if get_aval(p).ndim != 1:
        raise ValueError(f"jnp.polyval: p must be 1-d, got shape {get_aval(p).shape}.")
    shape = get_aval(x).shape
    out = lax.broadcast_in_dim(np.zeros((), get_aval(x).dtype), shape, ())
    for k in range(get_aval(p).shape[0]):
        coefficient = lax.broadcast_in_dim(lax.reshape(lax.slice(p, (k,), (k + 1,)), ()), shape,
                                           ())
        out = lax.add(lax.mul(out, x), coefficient)
    return out


def _poly_pad(a, n):
    size = get_aval(a).shape[0]
    return lax.pad(a, np.zeros((), get_aval(a).dtype), [(n - size, 0, 0)]) if size < n else a


def polyadd(a1, a2):
    """The sum of two polynomials (coefficients, highest power first).

    Example:
      >>> polyadd(np.array([1, 2]), np.array([1, 0, 0]))
      array([1, 1, 2], dtype=int32)
    """
    check_arraylike("polyadd", a1, a2)
    a1, a2 = promote_dtypes(as_array(a1), as_array(a2))
    n = max(get_aval(a1).shape[0], get_aval(a2).shape[0])
    return lax.add(_poly_pad(a1, n), _poly_pad(a2, n))


def polysub(a1, a2):
    """The difference of two polynomials.

    Example:
      >>> polysub(np.array([1, 2]), np.array([1, 0, 0]))
      array([-1,  1,  2], dtype=int32)
    """
    check_arraylike("polysub", a1, a2)
    a1, a2 = promote_dtypes(as_array(a1), as_array(a2))
    n = max(get_aval(a1).shape[0], get_aval(a2).shape[0])
    return lax.sub(_poly_pad(a1, n), _poly_pad(a2, n))


def polymul(a1, a2, *, trim_leading_zeros: bool = False):
    """The product of two polynomials (the convolution of their coefficients, in an inexact
    dtype as in JAX).

    Example:
      >>> polymul(np.array([1, 1]), np.array([1, -1]))
      array([ 1.,  0., -1.], dtype=float32)
    """
    return _conv1d("polymul", a1, a2, "full", promote_dtypes_inexact)


def polyder(p, m: int = 1):
    """The `m`-th derivative of a polynomial.

    Example:
      >>> polyder(np.array([1, 2, 3]))
      array([2, 2], dtype=int32)
    """
    check_arraylike("polyder", p)
    p = as_array(p)
    for _ in range(operator.index(m)):
        n = get_aval(p).shape[0]
        if n <= 1:
            return lax.slice(p, (0,), (0,))
        powers = np.arange(n - 1, 0, -1).astype(get_aval(p).dtype)
        p = lax.mul(lax.slice(p, (0,), (n - 1,)), powers)
    return p


def polyint(p, m: int = 1, k=None):
    """The `m`-th antiderivative of a polynomial (integration constants `k`, default 0).

    Example:
      >>> polyint(np.array([3.0, 2.0], np.float32))
      array([1.5, 2. , 0. ], dtype=float32)
    """
    check_arraylike("polyint", p)
    (p,) = promote_dtypes_inexact(as_array(p))
    dtype = get_aval(p).dtype
    constants = np.zeros(m) if k is None else np.broadcast_to(np.asarray(k), (m,))
    for j in range(operator.index(m)):
        n = get_aval(p).shape[0]
        divisors = np.arange(n, 0, -1).astype(dtype)
        p = lax.concatenate([lax.div(p, divisors), np.asarray([constants[j]], dtype)], 0)
    return p


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots (or of the
    characteristic polynomial of a square matrix's eigenvalues, for symmetric matrices).

    Example:
      >>> poly(np.array([1.0, 2.0], np.float32))
      array([ 1., -3.,  2.], dtype=float32)
    """
    check_arraylike("poly", seq_of_zeros)
    (roots,) = promote_dtypes_inexact(as_array(seq_of_zeros))
    if get_aval(roots).ndim == 2:
        roots = linalg.eigvalsh(roots)
    out = np.ones((1,), get_aval(roots).dtype)
    for k in range(get_aval(roots).shape[0]):
        root = lax.slice(roots, (k,), (k + 1,))
        factor = lax.concatenate([np.ones((1,), get_aval(roots).dtype), lax.neg(root)], 0)
        out = polymul(out, factor)
    return out


def vander(x, N: int | None = None, increasing: bool = False):  # noqa: N803 (NumPy's name)
    """The Vandermonde matrix: columns are powers of the 1-d `x`.

    Example:
      >>> vander(np.array([2, 3]), 3)
      array([[4, 2, 1],
             [9, 3, 1]], dtype=int32)
    """
    check_arraylike("vander", x)
    x = as_array(x)
    if get_aval(x).ndim != 1:
        raise ValueError(f"jnp.vander: x must be 1-d, got shape {get_aval(x).shape}.")
    n = get_aval(x).shape[0] if N is None else operator.index(N)
    exponents = np.arange(n) if increasing else np.arange(n - 1, -1, -1)
    columns = [power(x, int(e)) for e in exponents]
    return lax.concatenate([lax.expand_dims(c, (1,)) for c in columns], 1) if columns else \
        lax.broadcast_in_dim(np.zeros((), get_aval(x).dtype), (get_aval(x).shape[0], 0), ())
