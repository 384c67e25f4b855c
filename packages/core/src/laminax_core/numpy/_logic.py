"""Comparisons, logical and bitwise functions, floating-point classification, `where`,
`clip`, and the closeness tests (`isclose`, `allclose`, `array_equal`)."""

from __future__ import annotations

import numpy as np

from laminax_core import dtypes, lax
from laminax_core._avals import get_aval
from laminax_core.numpy import _ufuncs
from laminax_core.numpy._indexing import nonzero
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
    "allclose", "array_equal", "array_equiv", "bitwise_and", "bitwise_count", "bitwise_invert",
    "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "clip", "equal", "greater", "greater_equal", "invert", "isclose", "iscomplex",
    "iscomplexobj", "isfinite", "isinf", "isnan", "isneginf", "isposinf", "isreal",
    "isrealobj", "left_shift", "less", "less_equal", "logical_and", "logical_not",
    "logical_or", "logical_xor", "not_equal", "right_shift", "where",
]  # fmt: skip


def _is(x, kind) -> bool:
    return dtypes.issubdtype(get_aval(x).dtype, kind)


def _doc(name: str, summary: str, example: str, result: str) -> str:
    return (f"{summary}\n\nArgs:\n  x1, x2: arrays or scalars (they broadcast together).\n\n"
            f"Returns:\n  The elementwise result.\n\nExample:\n  >>> {example}\n  {result}\n")


def _comparison(name: str, lax_name: str, symbol: str):
    def fn(x1, x2, /):
        x1, x2 = promote_args(name, x1, x2)
        return getattr(lax, lax_name)(x1, x2)

    fn.__name__ = fn.__qualname__ = name
    result = {"==": False, "!=": True, "<": True, "<=": True, ">": False, ">=": False}[symbol]
    fn.__doc__ = _doc(name, f"Elementwise `x1 {symbol} x2` (a boolean array).",
                      f"{name}(np.int32(1), 2)", f"array({result})")
    return fn


equal = _comparison("equal", "eq", "==")
not_equal = _comparison("not_equal", "ne", "!=")
less = _comparison("less", "lt", "<")
less_equal = _comparison("less_equal", "le", "<=")
greater = _comparison("greater", "gt", ">")
greater_equal = _comparison("greater_equal", "ge", ">=")


def _to_bool(x):
    x = as_array(x)
    if _is(x, np.bool_):
        return x
    return lax.ne(x, convert_dtype(np.asarray(0), get_aval(x).dtype))


def _logical(name: str, lax_name: str, symbol: str):
    def fn(x1, x2, /):
        check_arraylike(name, x1, x2)
        x1, x2 = promote_shapes(name, _to_bool(x1), _to_bool(x2))
        return getattr(lax, lax_name)(x1, x2)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(name, f"Elementwise logical {symbol} of the truth values.",
                      f"{name}(True, 0)", f"array({symbol != 'and'})")
    return fn


logical_and = _logical("logical_and", "bitwise_and", "and")
logical_or = _logical("logical_or", "bitwise_or", "or")
logical_xor = _logical("logical_xor", "bitwise_xor", "xor")


def logical_not(x, /):
    """Elementwise logical not of the truth values.

    Example:
      >>> logical_not(np.array([0, 2]))
      array([ True, False])
    """
    check_arraylike("logical_not", x)
    return lax.bitwise_not(_to_bool(x))


def _check_integral(name, x):
    if not (_is(x, np.integer) or _is(x, np.bool_)):
        raise TypeError(f"jnp.{name} accepts integer and boolean arrays, got "
                        f"{get_aval(x).dtype.name}.")


def _bitwise(name: str, lax_name: str, symbol: str):
    def fn(x1, x2, /):
        x1, x2 = promote_args(name, x1, x2)
        _check_integral(name, x1)
        return getattr(lax, lax_name)(x1, x2)

    fn.__name__ = fn.__qualname__ = name
    value = {"&": 4, "|": 7, "^": 3}[symbol]
    fn.__doc__ = _doc(name, f"Elementwise bitwise `x1 {symbol} x2` (integers and booleans).",
                      f"{name}(np.int32(6), 5)", f"array({value}, dtype=int32)")
    return fn


bitwise_and = _bitwise("bitwise_and", "bitwise_and", "&")
bitwise_or = _bitwise("bitwise_or", "bitwise_or", "|")
bitwise_xor = _bitwise("bitwise_xor", "bitwise_xor", "^")


def invert(x, /):
    """Elementwise bitwise not (logical not for booleans).

    Example:
      >>> invert(np.int32(0))
      array(-1, dtype=int32)
    """
    check_arraylike("invert", x)
    x = as_array(x)
    _check_integral("invert", x)
    return lax.bitwise_not(x)


bitwise_not = invert
bitwise_invert = invert


def left_shift(x1, x2, /):
    """Elementwise `x1 << x2`.

    Example:
      >>> left_shift(np.int32(1), 3)
      array(8, dtype=int32)
    """
    x1, x2 = promote_args("left_shift", x1, x2)
    _check_integral("left_shift", x1)
    return lax.shift_left(x1, x2)


def right_shift(x1, x2, /):
    """Elementwise `x1 >> x2` (arithmetic for signed integers, logical for unsigned).

    Example:
      >>> right_shift(np.int32(-8), 1)
      array(-4, dtype=int32)
    """
    x1, x2 = promote_args("right_shift", x1, x2)
    _check_integral("right_shift", x1)
    if _is(x1, np.signedinteger):
        return lax.shift_right_arithmetic(x1, x2)
    return lax.shift_right_logical(x1, x2)


bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


def bitwise_count(x, /):
    """The number of set bits in each element's absolute value.

    Example:
      >>> bitwise_count(np.int32(7))
      array(3, dtype=uint8)
    """
    check_arraylike("bitwise_count", x)
    x = as_array(x)
    _check_integral("bitwise_count", x)
    return lax.convert_element_type(lax.population_count(lax.abs(x) if _is(x, np.signedinteger)
                                                         else x), np.uint8)


def _false_like(x):
    return lax.broadcast_in_dim(np.asarray(False), get_aval(x).shape, ())


def isnan(x, /):
    """Elementwise test for NaN (all false for integers).

    Example:
      >>> isnan(np.array([np.nan, 1.0], np.float32))
      array([ True, False])
    """
    check_arraylike("isnan", x)
    x = as_array(x)
    return lax.ne(x, x) if _is(x, np.inexact) else _false_like(x)


def isinf(x, /):
    """Elementwise test for positive or negative infinity.

    Example:
      >>> isinf(np.array([-np.inf, 1.0], np.float32))
      array([ True, False])
    """
    check_arraylike("isinf", x)
    x = as_array(x)
    if _is(x, np.complexfloating):
        return logical_or(isinf(lax.real(x)), isinf(lax.imag(x)))
    if not _is(x, np.floating):
        return _false_like(x)
    return lax.eq(lax.abs(x), convert_dtype(np.asarray(np.inf), get_aval(x).dtype, True))


def _signed_inf(name, sign):
    def fn(x, /):
        check_arraylike(name, x)
        x = as_array(x)
        if not _is(x, np.floating):
            return _false_like(x)
        return lax.eq(x, convert_dtype(np.asarray(sign * np.inf), get_aval(x).dtype, True))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(name, f"Elementwise test for {'+' if sign > 0 else '-'}infinity.",
                      f"{name}(np.float32({'-' if sign < 0 else ''}np.inf))", "array(True)")
    return fn


isposinf = _signed_inf("isposinf", 1)
isneginf = _signed_inf("isneginf", -1)


def isfinite(x, /):
    """Elementwise test for finite values (not NaN, not infinite).

    Example:
      >>> isfinite(np.array([np.inf, 1.0], np.float32))
      array([False,  True])
    """
    check_arraylike("isfinite", x)
    x = as_array(x)
    if _is(x, np.complexfloating):
        return logical_and(isfinite(lax.real(x)), isfinite(lax.imag(x)))
    if not _is(x, np.floating):
        return lax.broadcast_in_dim(np.asarray(True), get_aval(x).shape, ())
    return lax.is_finite(x)


def iscomplexobj(x) -> bool:
    """Whether `x` has a complex dtype.

    Example:
      >>> iscomplexobj(np.ones(1, np.complex64))
      True
    """
    if x is None:
        return False
    # JAX's scalar types (jnp.float32 ...) carry a `.dtype`; NumPy's classes and dtypes do not
    dtype = getattr(x, "dtype", None)
    if isinstance(dtype, np.dtype):
        return bool(dtypes.issubdtype(dtype, np.complexfloating))
    return _is(as_array(x), np.complexfloating)


def isrealobj(x) -> bool:
    """Whether `x` does not have a complex dtype.

    Example:
      >>> isrealobj(1.0)
      True
    """
    return not iscomplexobj(x)


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
