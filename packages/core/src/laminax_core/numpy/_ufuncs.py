"""Elementwise arithmetic and math with NumPy's names and JAX's semantics: dtype promotion
(weak types included), rank promotion, and integer inputs of floating functions computed in
the default float dtype. Bitwise, logical and comparison functions are in `_logic.py`."""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import dtypes, lax
from laminax_core._avals import get_aval
from laminax_core._custom_derivatives import custom_jvp
from laminax_core._trace import Tracer
from laminax_core.numpy._logic import isfinite, isinf, isnan, isneginf, isposinf
from laminax_core.numpy._operands import (
    as_array,
    check_arraylike,
    convert_dtype,
    promote_args,
    promote_args_inexact,
    promote_dtypes,
    promote_dtypes_inexact,
    promote_shapes,
    select,
)

__all__ = [
    "abs", "absolute", "acos", "acosh", "add", "angle", "arccos", "arccosh", "arcsin", "arcsinh",
    "arctan", "arctan2", "arctanh", "around", "asin", "asinh", "atan", "atan2", "atanh", "cbrt",
    "ceil", "conj", "conjugate", "copysign", "cos", "cosh", "deg2rad", "degrees", "divide",
    "divmod", "exp", "exp2", "expm1", "fabs", "float_power", "floor", "floor_divide", "fmax",
    "fmin", "fmod", "frexp", "gcd", "heaviside", "hypot", "imag", "lcm", "ldexp", "log", "log10",
    "log1p", "log2", "logaddexp", "logaddexp2", "maximum", "minimum", "mod", "modf", "multiply",
    "nan_to_num", "negative", "nextafter", "positive", "pow", "power", "rad2deg", "radians", "real",
    "reciprocal", "remainder", "rint", "round", "sign", "signbit", "sin", "sinc", "sinh", "sqrt",
    "square", "subtract", "tan", "tanh", "true_divide", "trunc",
]  # fmt: skip


def _const(x, value):
    """`value` as a constant of `x`'s dtype (weakly typed, so it never changes the result)."""
    return convert_dtype(np.asarray(value), get_aval(x).dtype, weak_type=True)


def _is(x, kind) -> bool:
    return dtypes.issubdtype(get_aval(x).dtype, kind)


def _doc(name: str, summary: str, example: str) -> str:
    return (f"{summary}\n\nArgs:\n  x: an array or scalar (arguments broadcast together).\n\n"
            f"Returns:\n  The elementwise result, with JAX's dtype promotion.\n\n"
            f"Example:\n  >>> {example}\n")


# Names of the one-array elementwise functions: a layer that compiles (the facade) may wrap
# them in an inlined jit, as JAX's own are, so an eager call is one compiled dispatch.
UNARY_ELEMENTWISE: list[str] = []


def _unary(name: str, lax_name: str, summary: str, *, inexact: bool = True):
    UNARY_ELEMENTWISE.append(name)

    def fn(x, /):
        check_arraylike(name, x)
        (x,) = promote_dtypes_inexact(x) if inexact else promote_dtypes(x)
        return getattr(lax, lax_name)(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(name, summary, f"{name}(np.ones(3, np.float32)).shape\n  (3,)")
    return fn


def _binary(name: str, lax_name: str, summary: str, *, inexact: bool = False,
            bool_lax_name: str | None = None):
    def fn(x1, x2, /):
        x1, x2 = (promote_args_inexact if inexact else promote_args)(name, x1, x2)
        if bool_lax_name is not None and _is(x1, np.bool_):
            return getattr(lax, bool_lax_name)(x1, x2)
        return getattr(lax, lax_name)(x1, x2)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(name, summary, f"{name}(np.ones(3, np.float32), 2.0).shape\n  (3,)")
    return fn


add = _binary("add", "add", "Elementwise `x1 + x2` (logical or for booleans).",
              bool_lax_name="bitwise_or")
multiply = _binary("multiply", "mul", "Elementwise `x1 * x2` (logical and for booleans).",
                   bool_lax_name="bitwise_and")
true_divide = _binary("true_divide", "div", "Elementwise `x1 / x2` in an inexact dtype.",
                      inexact=True)
divide = _binary("divide", "div", "Elementwise `x1 / x2` in an inexact dtype (true_divide).",
                 inexact=True)
maximum = _binary("maximum", "max", "Elementwise maximum, propagating NaNs.")
minimum = _binary("minimum", "min", "Elementwise minimum, propagating NaNs.")
arctan2 = _binary("arctan2", "atan2", "Elementwise arc tangent of `x1 / x2`, by quadrant.",
                  inexact=True)


def _rem(x1, x2):
    """`lax.rem` with JAX's answer for integer division by zero: 0 (XLA's own is unspecified,
    and differs between backends), by dividing by 1 instead. `x1`, `x2` are promoted."""
    if _is(x2, np.integer):
        x2 = select(lax.eq(x2, _const(x2, 0)), x2, lax.full_like(x2, 1))
    return lax.rem(x1, x2)


def fmod(x1, x2, /):
    """Elementwise remainder of truncating division (sign of `x1`); integer `x % 0` is 0.

    Example:
      >>> fmod(np.int32(-7), 3)
      array(-1, dtype=int32)
    """
    return _rem(*promote_args("fmod", x1, x2))

nextafter = _binary("nextafter", "nextafter", "The next representable value after `x1` towards "
                    "`x2`.", inexact=True)


def subtract(x1, x2, /):
    """Elementwise `x1 - x2`.

    Example:
      >>> subtract(np.int32(5), 2)
      array(3, dtype=int32)
    """
    x1, x2 = promote_args("subtract", x1, x2)
    if _is(x1, np.bool_):
        raise TypeError("jnp.subtract: the numpy boolean subtract is not supported; use "
                        "jnp.logical_xor or convert to an integer dtype first.")
    return lax.sub(x1, x2)


exp = _unary("exp", "exp", "Elementwise exponential.")
expm1 = _unary("expm1", "expm1", "Elementwise `exp(x) - 1`, accurate near zero.")
exp2 = _unary("exp2", "exp2", "Elementwise `2 ** x`.")
log = _unary("log", "log", "Elementwise natural logarithm.")
log1p = _unary("log1p", "log1p", "Elementwise `log(1 + x)`, accurate near zero.")
sqrt = _unary("sqrt", "sqrt", "Elementwise square root.")
cbrt = _unary("cbrt", "cbrt", "Elementwise cube root.")
sin = _unary("sin", "sin", "Elementwise sine.")
cos = _unary("cos", "cos", "Elementwise cosine.")
tan = _unary("tan", "tan", "Elementwise tangent.")
arcsin = _unary("arcsin", "asin", "Elementwise inverse sine.")
arccos = _unary("arccos", "acos", "Elementwise inverse cosine.")
arctan = _unary("arctan", "atan", "Elementwise inverse tangent.")
sinh = _unary("sinh", "sinh", "Elementwise hyperbolic sine.")
cosh = _unary("cosh", "cosh", "Elementwise hyperbolic cosine.")
tanh = _unary("tanh", "tanh", "Elementwise hyperbolic tangent.")
arcsinh = _unary("arcsinh", "asinh", "Elementwise inverse hyperbolic sine.")
arccosh = _unary("arccosh", "acosh", "Elementwise inverse hyperbolic cosine.")
arctanh = _unary("arctanh", "atanh", "Elementwise inverse hyperbolic tangent.")
negative = _unary("negative", "neg", "Elementwise `-x`.", inexact=False)


def log2(x, /):
    """Elementwise base-2 logarithm.

    Example:
      >>> log2(np.float32(8))
      array(3., dtype=float32)
    """
    check_arraylike("log2", x)
    (x,) = promote_dtypes_inexact(x)
    return lax.div(lax.log(x), lax.log(_const(x, 2)))


def log10(x, /):
    """Elementwise base-10 logarithm.

    Example:
      >>> log10(np.float32(100))
      array(2., dtype=float32)
    """
    check_arraylike("log10", x)
    (x,) = promote_dtypes_inexact(x)
    return lax.div(lax.log(x), lax.log(_const(x, 10)))


def positive(x, /):
    """Elementwise `+x` (a numeric copy of `x`).

    Example:
      >>> positive(np.int32(-2))
      array(-2, dtype=int32)
    """
    check_arraylike("positive", x)
    return as_array(x)


def absolute(x, /):
    """Elementwise absolute value (the magnitude, as a real dtype, for complex inputs).

    Example:
      >>> absolute(np.array([-1, 2], np.int32))
      array([1, 2], dtype=int32)
    """
    check_arraylike("absolute", x)
    x = as_array(x)
    if _is(x, np.unsignedinteger) or _is(x, np.bool_):
        return x
    return lax.abs(x)


abs = absolute  # noqa: A001 (NumPy's name)


def sign(x, /):
    """Elementwise sign: -1, 0 or 1 (`x / |x|` for complex inputs).

    Example:
      >>> sign(np.array([-3.0, 0.0, 2.0], np.float32))
      array([-1.,  0.,  1.], dtype=float32)
    """
    check_arraylike("sign", x)
    return lax.sign(as_array(x))


def _rounding(name: str, lax_name: str, summary: str):
    def fn(x, /):
        check_arraylike(name, x)
        x = as_array(x)
        if not _is(x, np.inexact):
            return x  # integers and booleans are already whole
        if _is(x, np.complexfloating):
            raise TypeError(f"jnp.{name} does not support complex inputs.")
        return getattr(lax, lax_name)(x)

    fn.__name__ = fn.__qualname__ = name
    value = "2." if name == "floor" else "3."
    fn.__doc__ = _doc(name, summary, f"{name}(np.float32(2.5))\n  array({value}, dtype=float32)")
    return fn


floor = _rounding("floor", "floor", "Elementwise floor (integer inputs are returned as is).")
ceil = _rounding("ceil", "ceil", "Elementwise ceiling (integer inputs are returned as is).")


def trunc(x, /):
    """Elementwise rounding towards zero (integer inputs are returned as is).

    Example:
      >>> trunc(np.float32(-2.5))
      array(-2., dtype=float32)
    """
    check_arraylike("trunc", x)
    x = as_array(x)
    if not _is(x, np.inexact):
        return x
    return select(lax.lt(x, _const(x, 0)), lax.floor(x), lax.ceil(x))



def _round_even(x):
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


def round(a, decimals: int = 0, out=None):  # noqa: A001 (NumPy's name)
    """Rounds to `decimals` decimal places, halves to even (as NumPy).

    Args:
      a: an array.
      decimals: the number of decimal places (negative rounds to tens, hundreds, ...).
      out: unsupported (arrays are immutable); must be None.

    Returns:
      The rounded array, of `a`'s dtype.

    Example:
      >>> round(np.array([0.5, 1.5, 2.26], np.float32), 1)
      array([0.5, 1.5, 2.3], dtype=float32)
    """
    check_arraylike("round", a)
    if out is not None:
        raise NotImplementedError("jnp.round: the out argument is not supported (arrays are "
                                  "immutable); use the return value.")
    a = as_array(a)
    decimals = operator.index(decimals)  # 1.5 places is an error (JAX's TypeError)
    if _is(a, np.integer) or _is(a, np.bool_):
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0 (as "
                                      "in JAX); convert to a float dtype first.")
        return a
    if _is(a, np.complexfloating):
        return lax.complex(round(lax.real(a), decimals), round(lax.imag(a), decimals))
    if decimals == 0:
        return _round_even(a)
    factor = _const(a, 10.0 ** decimals)
    return lax.div(_round_even(lax.mul(a, factor)), factor)


around = round


def rint(x, /):
    """Rounds to the nearest integer, halves to even; integer inputs become floats.

    Example:
      >>> rint(np.array([0.5, 1.5], np.float32))
      array([0., 2.], dtype=float32)
    """
    check_arraylike("rint", x)
    x = as_array(x)
    if not _is(x, np.inexact):
        # JAX converts integers to the default float dtype here (float64 with x64)
        return convert_dtype(x, dtypes.default_float_dtype())
    if _is(x, np.complexfloating):
        return lax.complex(_round_even(lax.real(x)), _round_even(lax.imag(x)))
    return _round_even(x)


def square(x, /):
    """Elementwise `x * x`.

    Example:
      >>> square(np.int32(3))
      array(9, dtype=int32)
    """
    check_arraylike("square", x)
    return lax.square(as_array(x))


def reciprocal(x, /):
    """Elementwise `1 / x` (integer inputs are computed in the default float dtype).

    Example:
      >>> reciprocal(np.float32(4))
      array(0.25, dtype=float32)
    """
    check_arraylike("reciprocal", x)
    (x,) = promote_dtypes_inexact(x)
    return lax.integer_pow(x, -1)


def _int_pow(x, y):
    # exponentiation by squaring over the low 6 bits of the exponent, as JAX does (anything
    # larger overflows for any base above 1): exponents of 64 and more, and negative ones,
    # give JAX's implementation-defined values, not another overflow pattern
    shape = np.broadcast_shapes(get_aval(x).shape, get_aval(y).shape)
    # 0 ** y is 0 for every non-zero y, also those whose low bits are all zero
    zero_base = lax.bitwise_and(lax.eq(x, _const(x, 0)), lax.ne(y, _const(y, 0)))
    acc = lax.broadcast_in_dim(_const(x, 1), shape, ())
    acc = select(lax.broadcast_in_dim(zero_base, shape, tuple(range(len(shape)))
                                      ) if get_aval(zero_base).shape != shape else zero_base,
                 acc, lax.broadcast_in_dim(_const(x, 0), shape, ()))
    for _ in range(6):
        odd = lax.ne(lax.bitwise_and(y, _const(y, 1)), _const(y, 0))
        acc = select(odd, acc, lax.mul(acc, x))
        x = lax.mul(x, x)
        y = lax.shift_right_logical(y, _const(y, 1))
    return acc


def _concrete_int(x):
    """`x` as a Python int if it is a concrete integer scalar (not a tracer), else None."""
    if isinstance(x, Tracer) or isinstance(x, float | complex) or _is(x, np.inexact):
        return None
    if type(x) is not int and getattr(x, "ndim", 0) != 0:
        return None
    try:
        return operator.index(x)
    except TypeError:
        return None


def power(x1, x2, /):
    """Elementwise `x1 ** x2`. A concrete Python int exponent uses `lax.integer_pow`; integer
    arrays are raised by repeated squaring over the exponent's low 6 bits, as in JAX.

    Example:
      >>> power(np.float32(2), 3)
      array(8., dtype=float32)
    """
    check_arraylike("power", x1, x2)
    exponent = _concrete_int(x2)
    if exponent is not None and not isinstance(x1, (int, float, complex)):
        x1 = as_array(x1)
        if _is(x1, np.bool_):
            x1 = convert_dtype(x1, dtypes.default_int_dtype())
        return lax.integer_pow(x1, exponent)
    if _is(x1, np.inexact) and _is(x2, np.integer):
        # JAX raises a float base to an integer array unpromoted: differentiable at x1 = 0
        return lax.pow(*promote_shapes("power", x1, x2))
    x1, x2 = promote_args("power", x1, x2)
    if _is(x1, np.bool_):  # booleans are raised as integers (JAX's int32 result)
        x1, x2 = (convert_dtype(v, dtypes.default_int_dtype()) for v in (x1, x2))
    if _is(x1, np.integer):
        x1, x2 = (lax.broadcast_in_dim(v, np.broadcast_shapes(get_aval(x1).shape,
                                                              get_aval(x2).shape),
                                       tuple(range(get_aval(v).ndim))) if get_aval(v).ndim
                  else v for v in (x1, x2))
        return _int_pow(x1, x2)
    return lax.pow(x1, x2)


pow = power  # noqa: A001 (NumPy's name)


def float_power(x1, x2, /):
    """`x1 ** x2` in an inexact dtype (JAX's promotion: unlike NumPy, not always float64).

    Example:
      >>> float_power(2, 3)
      array(8., dtype=float32)
    """
    x1, x2 = promote_args_inexact("float_power", x1, x2)
    return lax.pow(x1, x2)


def remainder(x1, x2, /):
    """Elementwise remainder of floor division (the result has the sign of `x2`).

    Example:
      >>> remainder(np.int32(-7), 3)
      array(2, dtype=int32)
    """
    x1, x2 = promote_args("remainder", x1, x2)
    if _is(x1, np.unsignedinteger) or _is(x1, np.bool_):
        return _rem(x1, x2)
    trunc_mod = _rem(x1, x2)
    zero = _const(trunc_mod, 0)
    fix_sign = lax.bitwise_and(lax.ne(trunc_mod, zero),
                               lax.ne(lax.lt(trunc_mod, zero), lax.lt(x2, _const(x2, 0))))
    return select(fix_sign, trunc_mod, lax.add(trunc_mod, x2))


mod = remainder


def _float_divmod(x1, x2):
    mod_ = lax.rem(x1, x2)
    div = lax.div(lax.sub(x1, mod_), x2)
    fix = lax.bitwise_and(lax.ne(mod_, _const(mod_, 0)),
                          lax.ne(lax.sign(x2), lax.sign(mod_)))
    mod_ = select(fix, mod_, lax.add(mod_, x2))
    div = select(fix, div, lax.sub(div, _const(div, 1)))
    return _round_even(div), mod_


def floor_divide(x1, x2, /):
    """Elementwise floor of `x1 / x2`.

    Example:
      >>> floor_divide(np.int32(-7), 2)
      array(-4, dtype=int32)
    """
    x1, x2 = promote_args("floor_divide", x1, x2)
    if _is(x1, np.bool_) or _is(x1, np.unsignedinteger):
        return lax.div(x1, x2)
    if _is(x1, np.integer):
        quotient = lax.div(x1, x2)
        inexact = lax.bitwise_and(lax.ne(lax.sign(x1), lax.sign(x2)),
                                  lax.ne(lax.rem(x1, x2), _const(x1, 0)))
        return select(inexact, quotient, lax.sub(quotient, _const(quotient, 1)))
    if _is(x1, np.complexfloating):
        raise TypeError("jnp.floor_divide does not support complex inputs.")
    return _float_divmod(x1, x2)[0]


def divmod(x1, x2, /):  # noqa: A001 (NumPy's name)
    """`(floor_divide(x1, x2), remainder(x1, x2))`.

    Example:
      >>> divmod(np.int32(7), 2)
      (array(3, dtype=int32), array(1, dtype=int32))
    """
    x1, x2 = promote_args("divmod", x1, x2)
    if _is(x1, np.inexact):
        return _float_divmod(x1, x2)
    return floor_divide(x1, x2), remainder(x1, x2)


def fmax(x1, x2):
    """Elementwise maximum, ignoring NaNs (NaN only where both are NaN).

    Example:
      >>> fmax(np.float32(np.nan), 1.0)
      array(1., dtype=float32)
    """
    x1, x2 = promote_args("fmax", x1, x2)
    return select(isnan(x1), select(isnan(x2), lax.max(x1, x2), x1), x2)


def fmin(x1, x2):
    """Elementwise minimum, ignoring NaNs (NaN only where both are NaN).

    Example:
      >>> fmin(np.float32(np.nan), 1.0)
      array(1., dtype=float32)
    """
    x1, x2 = promote_args("fmin", x1, x2)
    return select(isnan(x1), select(isnan(x2), lax.min(x1, x2), x1), x2)


def logaddexp(x1, x2, /):
    """Elementwise `log(exp(x1) + exp(x2))`, without overflow.

    Its derivative is the softmax weights of the two operands (so 1/2 each where they are
    equal), as JAX defines it, not the derivative of the overflow-safe formula.

    Example:
      >>> logaddexp(np.float32(0), 0.0)
      array(0.6931472, dtype=float32)
    """
    x1, x2 = promote_args_inexact("logaddexp", x1, x2)
    return _logaddexp(x1, x2)


def _logaddexp_value(x1, x2):
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    result = lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta)))))
    # infinities of the same sign give nan in delta; their sum is the right answer
    return select(isnan(delta), result, lax.add(x1, x2))


def _logaddexp_jvp(primals, tangents):
    # d logaddexp = exp(x1 - out) dx1 + exp(x2 - out) dx2, with +inf read as 0 on both sides
    # of each difference so that an infinite operand gives weight 1, not nan.
    x1, x2 = primals
    t1, t2 = tangents
    out = _logaddexp_value(x1, x2)
    safe_out = _replace_posinf(out)
    weight1 = lax.exp(lax.sub(_replace_posinf(x1), safe_out))
    weight2 = lax.exp(lax.sub(_replace_posinf(x2), safe_out))
    return out, lax.add(lax.mul(t1, weight1), lax.mul(t2, weight2))


def _replace_posinf(x):
    return select(lax.eq(x, _const(x, np.inf)), x, lax.full_like(x, 0))


_logaddexp = custom_jvp(_logaddexp_value)
_logaddexp.defjvp(_logaddexp_jvp)


def logaddexp2(x1, x2, /):
    """Elementwise `log2(2**x1 + 2**x2)`, without overflow.

    Example:
      >>> logaddexp2(np.float32(1), 1.0)
      array(2., dtype=float32)
    """
    x1, x2 = promote_args_inexact("logaddexp2", x1, x2)
    ln2 = _const(x1, np.log(2))
    return lax.div(logaddexp(lax.mul(x1, ln2), lax.mul(x2, ln2)), ln2)


def hypot(x1, x2, /):
    """Elementwise `sqrt(x1**2 + x2**2)`, without intermediate overflow.

    Example:
      >>> hypot(np.float32(3), 4.0)
      array(5., dtype=float32)
    """
    x1, x2 = promote_args_inexact("hypot", x1, x2)
    x1, x2 = lax.abs(x1), lax.abs(x2)
    infinite = lax.bitwise_or(isinf(x1), isinf(x2))
    big, small = lax.max(x1, x2), lax.min(x1, x2)
    is_zero = lax.eq(big, _const(big, 0))
    safe = select(is_zero, big, _const(big, 1))
    ratio = lax.div(small, safe)
    out = lax.mul(big, lax.sqrt(lax.add(_const(big, 1), lax.mul(ratio, ratio))))
    out = select(is_zero, out, big)
    return select(infinite, out, _const(out, np.inf))


def _scale(name, factor):
    def fn(x, /):
        check_arraylike(name, x)
        (x,) = promote_dtypes_inexact(x)
        return lax.mul(x, _const(x, factor))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(name, f"Elementwise `x * {factor!r}` (an angle conversion).",
                      f"{name}(np.zeros(2, np.float32))\n  array([0., 0.], dtype=float32)")
    return fn


deg2rad = _scale("deg2rad", np.pi / 180)
radians = _scale("radians", np.pi / 180)
rad2deg = _scale("rad2deg", 180 / np.pi)
degrees = _scale("degrees", 180 / np.pi)


def signbit(x, /):
    """Whether the sign bit is set (true for -0.0 and negative values).

    Example:
      >>> signbit(np.array([-0.0, 1.0], np.float32))
      array([ True, False])
    """
    check_arraylike("signbit", x)
    x = as_array(x)
    if _is(x, np.bool_) or _is(x, np.unsignedinteger):
        return lax.broadcast_in_dim(np.asarray(False), get_aval(x).shape, ())
    if _is(x, np.integer):
        return lax.lt(x, _const(x, 0))
    if _is(x, np.complexfloating):
        raise TypeError("jnp.signbit does not support complex inputs.")
    dtype = get_aval(x).dtype
    int_dtype = np.dtype(f"int{dtypes.itemsize_bits(dtype)}")
    return lax.lt(lax.bitcast_convert_type(x, int_dtype), np.asarray(0, int_dtype))


def copysign(x1, x2, /):
    """`x1`'s magnitude with `x2`'s sign.

    Example:
      >>> copysign(np.float32(2), -0.0)
      array(-2., dtype=float32)
    """
    x1, x2 = promote_args_inexact("copysign", x1, x2)
    if _is(x1, np.complexfloating):
        raise TypeError("jnp.copysign does not support complex inputs.")
    magnitude = lax.abs(x1)
    return select(signbit(x2), magnitude, lax.neg(magnitude))


def heaviside(x1, x2, /):
    """The Heaviside step: 0 where `x1 < 0`, `x2` where `x1 == 0`, 1 where `x1 > 0`.

    Example:
      >>> heaviside(np.array([-1.0, 0.0, 2.0], np.float32), 0.5)
      array([0. , 0.5, 1. ], dtype=float32)
    """
    x1, x2 = promote_args_inexact("heaviside", x1, x2)
    zero, one = _const(x1, 0), _const(x1, 1)
    positive_ = select(lax.gt(x1, zero), zero, one)
    return select(lax.eq(x1, zero), positive_, x2)


def sinc(x, /):
    """The normalised sinc, `sin(pi x) / (pi x)`, with `sinc(0) = 1` (and a zero gradient
    there; JAX's higher derivatives at 0 are not reproduced).

    Example:
      >>> sinc(np.array([0.0, 0.5], np.float32))
      array([1.        , 0.63661975], dtype=float32)
    """
    check_arraylike("sinc", x)
    (x,) = promote_dtypes_inexact(x)
    is_zero = lax.eq(x, _const(x, 0))
    safe = select(is_zero, x, _const(x, 1))
    pi_x = lax.mul(safe, _const(x, np.pi))
    return select(is_zero, lax.div(lax.sin(pi_x), pi_x), _const(x, 1))


def real(val, /):
    """The real part (the value itself for real inputs).

    Example:
      >>> real(np.float32(2))
      array(2., dtype=float32)
    """
    check_arraylike("real", val)
    val = as_array(val)
    return lax.real(val) if _is(val, np.complexfloating) else val


def imag(val, /):
    """The imaginary part (zeros for real inputs).

    Example:
      >>> imag(np.float32(2))
      array(0., dtype=float32)
    """
    check_arraylike("imag", val)
    val = as_array(val)
    if _is(val, np.complexfloating):
        return lax.imag(val)
    return lax.broadcast_in_dim(np.zeros((), get_aval(val).dtype), get_aval(val).shape, ())


def conjugate(x, /):
    """The complex conjugate (the value itself for real inputs).

    Example:
      >>> conjugate(np.float32(2))
      array(2., dtype=float32)
    """
    check_arraylike("conjugate", x)
    x = as_array(x)
    return lax.conj(x) if _is(x, np.complexfloating) else x


conj = conjugate


def angle(z, deg: bool = False):
    """The argument of complex numbers (0 or pi for reals), in radians or degrees.

    Example:
      >>> angle(np.float32(-1))
      array(3.1415927, dtype=float32)
    """
    check_arraylike("angle", z)
    (z,) = promote_dtypes_inexact(z)
    re = real(z)
    out = lax.atan2(imag(z), re)
    return rad2deg(out) if deg else out


def nan_to_num(x, copy: bool = True, nan=0.0, posinf=None, neginf=None):
    """Replaces NaN by `nan` and infinities by `posinf`/`neginf` (default: the largest and
    smallest finite values of the dtype).

    Example:
      >>> nan_to_num(np.array([np.nan, np.inf], np.float32))
      array([0.0000000e+00, 3.4028235e+38], dtype=float32)
    """
    del copy
    check_arraylike("nan_to_num", x)
    x = as_array(x)
    if not _is(x, np.inexact):
        return x
    if _is(x, np.complexfloating):
        parts = [nan_to_num(p, nan=nan, posinf=posinf, neginf=neginf)
                 for p in (lax.real(x), lax.imag(x))]
        return lax.complex(*parts)
    info = dtypes.finfo(get_aval(x).dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    x = select(isnan(x), x, _const(x, nan))
    x = select(isposinf(x), x, _const(x, posinf))
    return select(isneginf(x), x, _const(x, neginf))


# ----- floating-point decomposition, integer gcd/lcm, Array API aliases ----------------------


def ldexp(x1, x2, /):
    """Elementwise `x1 * 2**x2` (`x2` an integer array).

    Example:
      >>> ldexp(np.float32(1.5), 3)
      array(12., dtype=float32)
    """
    check_arraylike("ldexp", x1, x2)
    x2 = as_array(x2)
    if not _is(x2, np.integer):
        raise TypeError(f"jnp.ldexp: x2 must be an integer array, got {get_aval(x2).dtype.name}.")
    (x1,) = promote_dtypes_inexact(x1)
    x1, x2 = promote_args_inexact("ldexp", x1, lax.convert_element_type(x2, get_aval(x1).dtype))
    return lax.mul(x1, lax.exp2(x2))


def frexp(x, /):
    """The mantissa and exponent of `x`: `x = m * 2**e` with `0.5 <= |m| < 1` (m = x and
    e = 0 for zeros, infinities and NaNs).

    Example:
      >>> frexp(np.array([8.0, 0.3], np.float32))
      (array([0.5, 0.6], dtype=float32), array([ 4, -1], dtype=int32))
    """
    check_arraylike("frexp", x)
    (x,) = promote_dtypes_inexact(x)
    if _is(x, np.complexfloating):
        raise TypeError("jnp.frexp does not support complex inputs.")
    magnitude = lax.abs(x)
    special = lax.bitwise_or(lax.eq(x, _const(x, 0)), lax.bitwise_not(isfinite(x)))
    safe = select(special, magnitude, _const(x, 1))
    exponent = lax.add(lax.floor(lax.div(lax.log(safe), lax.log(_const(x, 2)))), _const(x, 1))
    mantissa = lax.div(safe, lax.exp2(exponent))
    # the logarithm may be off by one next to powers of two: renormalise into [0.5, 1)
    high = lax.ge(mantissa, _const(x, 1))
    exponent = select(high, exponent, lax.add(exponent, _const(x, 1)))
    mantissa = select(high, mantissa, lax.div(mantissa, _const(x, 2)))
    low = lax.lt(mantissa, _const(x, 0.5))
    exponent = select(low, exponent, lax.sub(exponent, _const(x, 1)))
    mantissa = select(low, mantissa, lax.mul(mantissa, _const(x, 2)))
    mantissa = select(lax.lt(x, _const(x, 0)), mantissa, lax.neg(mantissa))
    mantissa = select(special, mantissa, x)
    exponent = lax.convert_element_type(select(special, exponent, _const(exponent, 0)), np.int32)
    return mantissa, exponent


def modf(x, /, out=None):
    """The fractional and integral parts of `x` (both with `x`'s sign).

    Example:
      >>> modf(np.array([-2.5, 1.25], np.float32))
      (array([-0.5 ,  0.25], dtype=float32), array([-2.,  1.], dtype=float32))
    """
    if out is not None:
        raise NotImplementedError("jnp.modf: the out argument is not supported.")
    check_arraylike("modf", x)
    (x,) = promote_dtypes_inexact(x)
    whole = trunc(x)
    return lax.sub(x, whole), whole


def _euclid(a, b):
    # a fixed number of Euclid steps: enough for the worst case (consecutive Fibonacci numbers)
    steps = int(1.45 * dtypes.iinfo(get_aval(a).dtype).bits) + 2
    zero = _const(b, 0)
    for _ in range(steps):
        b_zero = lax.eq(b, zero)
        safe_b = select(b_zero, b, _const(b, 1))
        a, b = select(b_zero, b, a), select(b_zero, lax.rem(a, safe_b), zero)
    return a


def gcd(x1, x2, /):
    """Elementwise greatest common divisor of integers (non-negative).

    Example:
      >>> gcd(np.array([12, -18, 0]), np.array([8, 12, 5]))
      array([4, 6, 5], dtype=int32)
    """
    x1, x2 = promote_args("gcd", x1, x2)
    if not _is(x1, np.integer):
        raise TypeError(f"jnp.gcd accepts integer arrays, got {get_aval(x1).dtype.name}.")
    shape = np.broadcast_shapes(get_aval(x1).shape, get_aval(x2).shape)
    x1, x2 = (lax.broadcast_in_dim(v, shape, tuple(range(len(shape) - get_aval(v).ndim,
                                                         len(shape)))) for v in (x1, x2))
    return _euclid(lax.abs(x1), lax.abs(x2))


def lcm(x1, x2, /):
    """Elementwise least common multiple of integers (non-negative; 0 if either is 0).

    Example:
      >>> lcm(np.array([4, 6]), np.array([6, 4]))
      array([12, 12], dtype=int32)
    """
    x1, x2 = promote_args("lcm", x1, x2)
    divisor = gcd(x1, x2)
    zero = lax.eq(divisor, _const(divisor, 0))
    safe = select(zero, divisor, _const(divisor, 1))
    out = lax.mul(lax.div(lax.abs(x1), safe), lax.abs(x2))
    return select(zero, out, _const(out, 0))


def fabs(x, /):
    """Elementwise absolute value in an inexact dtype (integers become floats).

    Example:
      >>> fabs(np.int32(-2))
      array(2., dtype=float32)
    """
    check_arraylike("fabs", x)
    (x,) = promote_dtypes_inexact(x)
    if _is(x, np.complexfloating):
        raise TypeError("jnp.fabs does not support complex inputs; use jnp.abs.")
    return lax.abs(x)


acos = arccos
acosh = arccosh
asin = arcsin
asinh = arcsinh
atan = arctan
atanh = arctanh
atan2 = arctan2
