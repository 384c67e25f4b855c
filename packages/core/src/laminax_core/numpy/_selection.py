"""Selection and whole-array tests: `where`, `clip`, `iscomplex`/`isreal` and the closeness
tests (`isclose`, `allclose`, `array_equal`, `array_equiv`), built on the elementwise predicates
of `_logic.py`, ufuncs, reductions and `nonzero`."""

from __future__ import annotations

import numpy as np

from laminax_core import dtypes, lax
from laminax_core._avals import get_aval
from laminax_core.numpy import _ufuncs
from laminax_core.numpy._indexing import nonzero
from laminax_core.numpy._logic import (
    _is,
    _to_bool,
    equal,
    isinf,
    isnan,
    logical_and,
    logical_or,
    not_equal,
)
from laminax_core.numpy._operands import (
    as_array,
    broadcast_to_shape,
    check_arraylike,
    convert_dtype,
    promote_args,
    promote_dtypes,
    promote_shapes,
    select,
)
from laminax_core.numpy._reductions import all as all_

__all__ = [
    "allclose", "array_equal", "array_equiv", "clip", "isclose", "iscomplex", "isreal", "where",
]  # fmt: skip


def iscomplex(x):
    """Elementwise test for a non-zero imaginary part.

    Example:
      >>> iscomplex(np.array([1 + 1j, 1], np.complex64))
      array([ True, False])
    """
    return not_equal(_ufuncs.imag(x), 0)


def isreal(x):
    """Elementwise test for a zero imaginary part.

    Example:
      >>> isreal(np.array([1 + 1j, 1], np.complex64))
      array([False,  True])
    """
    return equal(_ufuncs.imag(x), 0)


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """`x` where `condition` is true, else `y`, elementwise (all three broadcast together).

    With only `condition`, this is `nonzero(condition, size=size, fill_value=fill_value)`.

    Args:
      condition: a boolean (or truthy) array.
      x, y: the values to pick from (promoted to a common dtype).
      size, fill_value: for the one-argument form only.

    Returns:
      An array of the broadcast shape.

    Example:
      >>> where(np.array([True, False]), 1.0, np.float32(2))
      array([1., 2.], dtype=float32)
    """
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("jnp.where: pass both x and y, or neither (to find the nonzero "
                         "positions of condition).")
    if size is not None or fill_value is not None:
        raise ValueError("jnp.where: size and fill_value apply only to the one-argument form.")
    check_arraylike("where", condition, x, y)
    condition, x, y = promote_shapes("where", _to_bool(condition), *promote_dtypes(x, y))
    return select(condition, y, x)


_DEPRECATED = object()


def clip(arr=None, /, min=None, max=None, *, a=_DEPRECATED, a_min=_DEPRECATED,  # noqa: A002
         a_max=_DEPRECATED):
    """`arr` limited to `[min, max]` (either bound may be None).

    Args:
      arr: the array.
      min, max: scalars or arrays broadcast against `arr`.
      a, a_min, a_max: NumPy's older names for `arr`, `min` and `max`.

    Returns:
      The clipped array (NaN bounds propagate, as `maximum`/`minimum` do).

    Example:
      >>> clip(np.array([-2, 5, 9]), 0, 6)
      array([0, 5, 6], dtype=int32)
    """
    arr = a if a is not _DEPRECATED else arr
    min = a_min if a_min is not _DEPRECATED else min  # noqa: A001
    max = a_max if a_max is not _DEPRECATED else max  # noqa: A001
    if arr is None:
        raise TypeError("jnp.clip: the array argument (arr) is required.")
    check_arraylike("clip", arr)

    out = as_array(arr)
    if min is not None:
        out = _ufuncs.maximum(min, out)
    if max is not None:
        out = _ufuncs.minimum(max, out)
    return out


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan: bool = False):
    """Elementwise `|a - b| <= atol + rtol * |b|` (infinities equal only to themselves;
    NaNs equal if `equal_nan`). Integer and boolean inputs are compared exactly, as in JAX.

    Example:
      >>> isclose(np.float32(1.0), 1.0 + 1e-7)
      array(True)
    """
    a, b = promote_args("isclose", a, b)
    if not _is(a, np.inexact):
        return lax.eq(a, b)
    dtype = dtypes.finfo(get_aval(a).dtype).dtype  # the real dtype, also for complex inputs
    rtol_, atol_ = (convert_dtype(np.asarray(t), dtype, True) for t in (rtol, atol))
    close = lax.le(lax.abs(lax.sub(a, b)), lax.add(atol_, lax.mul(rtol_, lax.abs(b))))
    if _is(a, np.floating):
        infinite = logical_or(isinf(a), isinf(b))
        close = select(infinite, close, lax.eq(a, b))
    if equal_nan:
        close = logical_or(close, logical_and(isnan(a), isnan(b)))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan: bool = False):
    """Whether every element of `a` and `b` is close (`isclose`), as a 0-d boolean array.

    Example:
      >>> allclose(np.ones(2, np.float32), 1.0)
      array(True)
    """
    return all_(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan: bool = False):
    """Whether `a1` and `a2` have the same shape and elements, as a 0-d boolean array.

    Example:
      >>> array_equal(np.arange(3), np.arange(3))
      array(True)
    """
    check_arraylike("array_equal", a1, a2)
    a1, a2 = as_array(a1), as_array(a2)
    if get_aval(a1).shape != get_aval(a2).shape:
        return np.asarray(False)
    a1, a2 = promote_dtypes(a1, a2)
    equal_ = lax.eq(a1, a2)
    if equal_nan and _is(a1, np.inexact):
        equal_ = logical_or(equal_, logical_and(isnan(a1), isnan(a2)))
    return all_(equal_)


def array_equiv(a1, a2):
    """Whether `a1` and `a2` broadcast to each other with equal elements.

    Example:
      >>> array_equiv(np.ones((2, 2)), np.ones(2))
      array(True)
    """
    check_arraylike("array_equiv", a1, a2)
    a1, a2 = as_array(a1), as_array(a2)
    try:
        shape = np.broadcast_shapes(get_aval(a1).shape, get_aval(a2).shape)
    except ValueError:
        return np.asarray(False)
    a1, a2 = (broadcast_to_shape(v, shape) for v in promote_dtypes(a1, a2))
    return all_(lax.eq(a1, a2))
