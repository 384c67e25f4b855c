"""Elementwise functions built on lax's special functions and bit tricks: `i0` (the modified
Bessel function of order 0), the `kaiser` window made from it, and `spacing` (the gap to the
next representable number)."""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import dtypes, lax
from laminax_core._avals import get_aval
from laminax_core._custom_derivatives import custom_jvp
from laminax_core.numpy._operands import as_array, check_arraylike, promote_args_inexact, select
from laminax_core.numpy._ufuncs import copysign, multiply

__all__ = ["i0", "kaiser", "spacing"]


def _i0_value(x):
    # I0(x) = exp(|x|) I0e(|x|): the scaled function cannot overflow
    magnitude = lax.abs(x)
    return lax.mul(lax.exp(magnitude), lax.bessel_i0e(magnitude))


def _i0_jvp(primals, tangents):
    # I0' = I1 = exp(|x|) I1e(x) (I1e is odd, so the sign follows x)
    (x,), (x_dot,) = primals, tangents
    i1 = lax.mul(lax.exp(lax.abs(x)), lax.bessel_i1e(x))
    return _i0(x), lax.mul(x_dot, i1)


_i0 = custom_jvp(_i0_value)
_i0.defjvp(_i0_jvp)


def i0(x):
    """The modified Bessel function of the first kind of order 0, elementwise.

    Args:
      x: a real array (integers are promoted to the default float dtype).

    Returns:
      `I0(x)`, differentiable (its derivative is `I1(x)`).

    Example:
      >>> i0(np.array([0.0, 1.0], np.float32))
      array([1.      , 1.266066], dtype=float32)
    """
    check_arraylike("i0", x)
    (x,) = promote_args_inexact("i0", x)
    if dtypes.issubdtype(get_aval(x).dtype, np.complexfloating):
        raise ValueError(
            f"Unsupported input type to jnp.i0: {get_aval(x).dtype.name}; it is defined for real "
            "inputs only."
        )
    return _i0(x)


def kaiser(M: int, beta):  # noqa: N803 (NumPy's name)
    """The Kaiser window of `M` points with shape parameter `beta`:
    `I0(beta sqrt(1 - ((n - a) / a)^2)) / I0(beta)` with `a = (M - 1) / 2`.

    Example:
      >>> kaiser(3, 0.0)
      array([1., 1., 1.], dtype=float32)
    """
    m = operator.index(M)
    dtype = dtypes.default_float_dtype()
    if m <= 1:
        return lax.full((max(m, 0),), 1, dtype)
    n = lax.iota(dtype, m)
    half = np.asarray(0.5 * (m - 1), dtype)
    ratio = lax.div(lax.sub(n, half), half)
    root = lax.sqrt(lax.sub(np.asarray(1, dtype), lax.mul(ratio, ratio)))

    beta = as_array(beta)
    return lax.div(i0(multiply(beta, root)), i0(beta))


def spacing(x, /):
    """The distance from `x` to the next representable number away from zero (toward +inf
    for float16, as JAX computes it); for 0 the smallest subnormal.

    Example:
      >>> spacing(np.float32(1.0))
      array(1.1920929e-07, dtype=float32)
    """
    check_arraylike("spacing", x)
    (x,) = promote_args_inexact("spacing", x)
    dtype = get_aval(x).dtype
    if dtypes.issubdtype(dtype, np.complexfloating):
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    inf = np.asarray(np.inf, dtype)
    if dtype == np.float16:
        return lax.sub(lax.nextafter(x, lax.full_like(x, inf)), x)
    result = lax.sub(lax.nextafter(x, copysign(inf, x)), x)
    tiny = copysign(np.asarray(dtypes.finfo(dtype).smallest_subnormal, dtype), x)
    return select(lax.eq(result, lax.full_like(result, 0)), result, tiny)
