"""Helpers shared by the `scipy.special` modules: argument promotion and constants."""

from __future__ import annotations

import numpy as np

from laminax_core import dtypes, lax
from laminax_core._avals import get_aval, weak_array
from laminax_core.lax._helpers import broadcast_to_shape


def _inexact(name: str, *args):
    """The arguments promoted to one inexact dtype (Python scalars adopt the arrays' dtype)."""
    converted = []
    for x in args:
        if isinstance(x, bool | int | float):
            x = weak_array(x, dtypes.result_type(x))
        else:
            try:
                get_aval(x)
            except TypeError as err:
                raise TypeError(f"{name} requires array arguments, got "
                                f"{type(x).__name__}.") from err
        converted.append(x)
    dtype = dtypes.result_type(*converted)
    if not dtypes.issubdtype(dtype, np.inexact):
        dtype = dtypes.default_float_dtype()
    weak = all(get_aval(x).weak_type for x in converted)
    out = [x if get_aval(x).dtype == dtype and not (get_aval(x).weak_type and not weak)
           else lax.convert_element_type(x, dtype, weak_type=weak) for x in converted]
    return _broadcast(out) if len(out) > 1 else out[0]


def _broadcast(args):
    shape = np.broadcast_shapes(*(get_aval(x).shape for x in args))
    out = []
    for x in args:
        x_shape = get_aval(x).shape
        if len(x_shape) < len(shape):
            x = lax.reshape(x, (1,) * (len(shape) - len(x_shape)) + x_shape)
        out.append(broadcast_to_shape(x, shape))
    return out


def _c(x, value):
    return np.asarray(value, get_aval(x).dtype)


def _polyval(coefficients, x):
    """sum_k c_k x^(n-k) by Horner's rule from 0, as `jnp.polyval` evaluates it."""
    out = lax.full_like(x, 0)
    for c in coefficients:
        out = lax.add(lax.mul(out, x), _c(x, c))
    return out
