"""Small helpers shared by lax's primitive blocks (operand conversion, broadcasting)."""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import _trace, dtypes
from laminax_core._avals import get_aval, weak_array
from laminax_core.lax import _hooks

__all__ = [
    "as_operands", "broadcast_to_shape", "checked_axis", "highest", "is_python_scalar",
    "is_tracer", "lowest", "unbroadcast",
]  # fmt: skip

_KINDS = {bool: np.bool_, int: np.integer, float: np.floating, complex: np.complexfloating}


def is_python_scalar(x) -> bool:
    return type(x) in _KINDS


def as_operands(*args):
    """lax's operand conversion: a Python scalar takes the dtype of the first array operand
    of its kind (`lax.add(x_f16, 1.0)` computes in float16), else its default dtype; it stays
    weakly typed either way. Other values pass through."""
    for a in args:  # a loop, not any(<genexpr>): this runs on every eager lax call
        if type(a) in _KINDS:
            break
    else:  # the common case: nothing to convert
        return list(args)
    reference = next((a for a in args if not is_python_scalar(a)), None)
    ref_dtype = None if reference is None else get_aval(reference).dtype
    out = []
    for a in args:
        if is_python_scalar(a):
            kind = _KINDS[type(a)]
            if (
                ref_dtype is not None
                and dtypes.issubdtype(ref_dtype, kind)
                and kind is not np.bool_
            ):
                out.append(weak_array(a, ref_dtype))
            elif kind is np.bool_:
                out.append(np.asarray(a))
            else:
                out.append(weak_array(a, dtypes.result_type(a)))
        else:
            out.append(a)
    return out


def broadcast_to_shape(x, shape):
    """`x` broadcast (numpy-style: rank-0 or size-1 dims) to `shape` with broadcast_in_dim."""
    aval = get_aval(x)
    if aval.shape == tuple(shape):
        return x
    if aval.ndim == 0:
        return _hooks.broadcast_in_dim(x, shape, ())
    squeeze_dims = tuple(
        i for i, (a, b) in enumerate(zip(aval.shape, shape, strict=True)) if a == 1 and b != 1
    )
    if squeeze_dims:
        x = _hooks.squeeze(x, squeeze_dims)
    kept = tuple(i for i in range(len(shape)) if i not in squeeze_dims)
    return _hooks.broadcast_in_dim(x, shape, kept)


def unbroadcast(aval, ct):
    """The cotangent of an operand of shape `aval.shape` that was broadcast to `ct`'s shape."""
    ct_shape = get_aval(ct).shape
    if ct_shape == aval.shape:
        return ct
    if aval.ndim == 0:
        return _hooks.reduce_sum(ct, tuple(range(len(ct_shape))))
    dims = tuple(i for i, (a, c) in enumerate(zip(aval.shape, ct_shape, strict=True)) if a != c)
    summed = _hooks.reduce_sum(ct, dims)
    return _hooks.reshape(summed, aval.shape)


def is_tracer(x) -> bool:
    return isinstance(x, _trace.Tracer)


def lowest(dtype):
    """The smallest value of `dtype` (-inf for inexact types): the identity of `max`."""
    dtype = np.dtype(dtype)
    if dtypes.issubdtype(dtype, np.inexact):
        return -np.inf
    return False if dtype == np.bool_ else np.iinfo(dtype).min


def highest(dtype):
    """The largest value of `dtype` (inf for inexact types): the identity of `min`."""
    dtype = np.dtype(dtype)
    if dtypes.issubdtype(dtype, np.inexact):
        return np.inf
    return True if dtype == np.bool_ else np.iinfo(dtype).max


def checked_axis(axis: int, ndim: int, name: str) -> int:
    """`axis` as a non-negative index into `ndim` dimensions; ValueError naming `name` if it is
    out of bounds."""
    axis = operator.index(axis)
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {ndim}.")
    return axis % ndim if ndim else 0
