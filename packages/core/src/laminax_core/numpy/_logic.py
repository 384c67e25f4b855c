"""Comparisons, logical and bitwise functions and floating-point classification: the
elementwise predicates, built on the operand rules alone (`where`, `clip` and the closeness tests
that need ufuncs, reductions or indexing are in `_selection.py`)."""

from __future__ import annotations

import numpy as np

from laminax_core import dtypes, lax
from laminax_core._avals import get_aval
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

__all__ = [
    "bitwise_and", "bitwise_count", "bitwise_invert", "bitwise_left_shift", "bitwise_not",
    "bitwise_or", "bitwise_right_shift", "bitwise_xor", "equal", "greater", "greater_equal",
    "invert", "iscomplexobj", "isfinite", "isinf", "isnan", "isneginf", "isposinf", "isrealobj",
    "left_shift", "less", "less_equal", "logical_and", "logical_not", "logical_or", "logical_xor",
    "not_equal", "right_shift",
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
