"""Bitwise primitives on integers and booleans: `and`, `or`, `xor`, `not` (JAX's primitive
names), the three shifts, population_count and clz. None is differentiable: integer and
boolean values have float0 tangents."""

from __future__ import annotations

import numpy as np

from laminax_core._primitive import (
    INTEGRAL,
    NOT_LINEAR,
    ZERO_TANGENT,
    batch_elementwise,
    define_primitive,
    same_shape,
)
from laminax_core.lax._helpers import as_operands

__all__ = [
    "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "clz", "population_count",
    "shift_left", "shift_right_arithmetic", "shift_right_logical",
]  # fmt: skip
# the primitives, which lax exports beside their functions
__all__ += [
    "and_p", "clz_p", "not_p", "or_p", "population_count_p", "shift_left_p",
    "shift_right_arithmetic_p", "shift_right_logical_p", "xor_p",
]  # fmt: skip

_INTEGER = (np.integer,)


def _bitwise(name, reference, accepted=INTEGRAL):
    return define_primitive(
        name,
        abstract_eval=same_shape(dtypes=accepted),
        reference=reference,
        jvp=ZERO_TANGENT,
        transpose=NOT_LINEAR,
        batch=batch_elementwise,
    )


# ----- and, or, xor, not --------------------------------------------------------------------


def bitwise_and(x, y):
    """Elementwise bitwise AND (logical AND on booleans); the `and` primitive.

    Example:
      >>> bitwise_and(np.int32(6), np.int32(3))
      array(2, dtype=int32)
    """
    return and_p.bind(*as_operands(x, y))


and_p = _bitwise("and", np.bitwise_and)


def bitwise_or(x, y):
    """Elementwise bitwise OR (logical OR on booleans); the `or` primitive."""
    return or_p.bind(*as_operands(x, y))


or_p = _bitwise("or", np.bitwise_or)


def bitwise_xor(x, y):
    """Elementwise bitwise XOR (logical XOR on booleans); the `xor` primitive."""
    return xor_p.bind(*as_operands(x, y))


xor_p = _bitwise("xor", np.bitwise_xor)


def bitwise_not(x):
    """Elementwise bitwise NOT (logical NOT on booleans); the `not` primitive.

    Example:
      >>> bitwise_not(np.uint8(1))
      array(254, dtype=uint8)
    """
    return not_p.bind(x)


not_p = _bitwise("not", np.invert)


# ----- shifts (a shift by the bit width or more, or by a negative amount, saturates) ---------


def _unsigned(x):
    """`x`'s bits as the unsigned integer of its width (0-d arrays included)."""
    x = np.ascontiguousarray(x).reshape(np.shape(x))
    return x.view(np.dtype(f"u{x.dtype.itemsize}"))


def _contiguous(x):
    return np.ascontiguousarray(x).reshape(np.shape(x))


def _out_of_range(y, bits):
    return (_unsigned(np.asarray(y)).astype(np.uint64)) >= bits


def _shift_left_reference(x, y):
    bits = x.dtype.itemsize * 8
    x, y = np.broadcast_arrays(x, y)
    amount = np.where(_out_of_range(y, bits), 0, y).astype(x.dtype)
    shifted = (_unsigned(x) << _unsigned(amount)).view(x.dtype)
    return np.where(_out_of_range(y, bits), np.zeros((), x.dtype), shifted)


def _shift_right_logical_reference(x, y):
    bits = x.dtype.itemsize * 8
    x, y = np.broadcast_arrays(x, y)
    amount = np.where(_out_of_range(y, bits), 0, y).astype(x.dtype)
    shifted = (_unsigned(x) >> _unsigned(amount)).view(x.dtype)
    return np.where(_out_of_range(y, bits), np.zeros((), x.dtype), shifted)


def _shift_right_arithmetic_reference(x, y):
    bits = x.dtype.itemsize * 8
    signed = np.dtype(f"i{x.dtype.itemsize}")
    x, y = np.broadcast_arrays(x, y)
    amount = np.where(_out_of_range(y, bits), bits - 1, y).astype(x.dtype)
    as_signed = _contiguous(x).view(signed)
    return (as_signed >> amount.view(signed)).view(x.dtype)


def shift_left(x, y):
    """Elementwise `x << y` (0 where `y` is at least the bit width).

    Example:
      >>> shift_left(np.int32(3), np.int32(2))
      array(12, dtype=int32)
    """
    return shift_left_p.bind(*as_operands(x, y))


shift_left_p = _bitwise("shift_left", _shift_left_reference, _INTEGER)


def shift_right_logical(x, y):
    """Elementwise logical right shift: zeros shift in from the left."""
    return shift_right_logical_p.bind(*as_operands(x, y))


shift_right_logical_p = _bitwise("shift_right_logical", _shift_right_logical_reference,
                                 _INTEGER)


def shift_right_arithmetic(x, y):
    """Elementwise arithmetic right shift: copies of the sign bit shift in from the left.

    Example:
      >>> shift_right_arithmetic(np.int32(-8), np.int32(1))
      array(-4, dtype=int32)
    """
    return shift_right_arithmetic_p.bind(*as_operands(x, y))


shift_right_arithmetic_p = _bitwise("shift_right_arithmetic", _shift_right_arithmetic_reference,
                                    _INTEGER)


# ----- population_count, clz ----------------------------------------------------------------


def population_count(x):
    """Elementwise number of set bits.

    Example:
      >>> population_count(np.int32(7))
      array(3, dtype=int32)
    """
    return population_count_p.bind(x)


population_count_p = _bitwise(
    "population_count",
    lambda x: np.bitwise_count(_unsigned(x)).astype(x.dtype),
    _INTEGER,
)


def clz(x):
    """Elementwise number of leading zero bits.

    Example:
      >>> clz(np.int32(1))
      array(31, dtype=int32)
    """
    return clz_p.bind(x)


def _clz_reference(x):
    bits = x.dtype.itemsize * 8
    value = _unsigned(x).astype(np.uint64)
    length = np.zeros(x.shape, np.int64)
    for b in range(bits):
        length = np.where(value >> np.uint64(b) != 0, b + 1, length)
    return (bits - length).astype(x.dtype)


clz_p = _bitwise("clz", _clz_reference, _INTEGER)
