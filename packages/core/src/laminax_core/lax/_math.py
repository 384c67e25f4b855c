"""The rest of lax's elementwise math: rounding, remainders, the trigonometric and hyperbolic
families, complex parts, clamp, and bit-level conversions. Each block holds the public wrapper,
the rules and the registration, as in `_elementwise.py`."""

from __future__ import annotations

import enum

import numpy as np

from laminax_core import dtypes
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters.batching import bdim_at_front, move_bdim
from laminax_core._interpreters.jvp import zeros_like_aval
from laminax_core._interpreters.transpose import is_undefined_primal as undefined
from laminax_core._primitive import (
    FLOATING,
    INEXACT,
    NOT_LINEAR,
    ZERO_TANGENT,
    batch_elementwise,
    check_dtype,
    check_same_dtypes,
    define_primitive,
    jvp_from,
    linear,
    same_shape,
)
from laminax_core._sharding_rules import with_entries
from laminax_core.lax import _hooks
from laminax_core.lax._bitwise import bitwise_and
from laminax_core.lax._elementwise import (
    _hide_none,
    _like_ans,
    add,
    div,
    gt,
    integer_pow,
    log,
    lt,
    mul,
    neg,
    rsqrt,
    select_n,
    sign,
    sub,
)
from laminax_core.lax._elementwise import abs as _abs
from laminax_core.lax._helpers import as_operands, broadcast_to_shape
from laminax_core.lax._structural import broadcast_in_dim

__all__ = [
    "RoundingMethod", "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh",
    "bitcast_convert_type", "cbrt", "ceil", "clamp", "complex", "conj", "cosh", "exp2",
    "expm1", "floor", "imag", "is_finite", "log1p", "nextafter", "real", "reciprocal",
    "reduce_precision", "rem", "round", "select", "sinh", "square", "tan",
]  # fmt: skip
# the primitives, which lax exports beside their functions
__all__ += [
    "acos_p", "acosh_p", "asin_p", "asinh_p", "atan2_p", "atan_p", "atanh_p",
    "bitcast_convert_type_p", "cbrt_p", "ceil_p", "clamp_p", "complex_p", "conj_p", "cosh_p",
    "exp2_p", "expm1_p", "floor_p", "imag_p", "is_finite_p", "log1p_p", "nextafter_p", "real_p",
    "reduce_precision_p", "rem_p", "round_p", "sinh_p", "square_p", "tan_p",
]  # fmt: skip

_INTEGER_OR_FLOATING = (np.integer, np.floating)


def _in_float32(fn):
    """`fn` evaluated in float32 for the narrow floats NumPy has no ufunc loops for."""

    def reference(x, **_):
        if dtypes.issubdtype(x.dtype, np.floating) and x.dtype.itemsize < 4:
            return np.asarray(fn(x.astype(np.float32))).astype(x.dtype)
        return np.asarray(fn(x)).astype(x.dtype)

    return reference


def _unop(name, reference, jvp_rule, accepted=INEXACT, accuracy=False):
    """An elementwise unary primitive; `accuracy=True` gives it JAX's `accuracy` param."""
    return define_primitive(
        name,
        abstract_eval=same_shape(dtypes=accepted),
        reference=_in_float32(reference),
        jvp=ZERO_TANGENT if jvp_rule is ZERO_TANGENT else jvp_from(jvp_rule),
        transpose=NOT_LINEAR,
        batch=batch_elementwise,
        print_params=_hide_none("accuracy") if accuracy else None,
    )


def _no_jvp(name):
    def rule(primals, tangents, **params):
        raise NotImplementedError(f"Differentiation rule for '{name}' not implemented")

    return rule


# ----- square -------------------------------------------------------------------------------


def square(x):
    """Elementwise `x * x`.

    Example:
      >>> square(np.float32(3))
      array(9., dtype=float32)
    """
    return square_p.bind(x)


square_p = define_primitive(
    "square",
    abstract_eval=same_shape(dtypes=(np.number,)),
    reference=np.square,
    jvp=jvp_from(lambda t, ans, x: mul(t, mul(2.0, x))),  # d x^2 = 2x
    transpose=NOT_LINEAR,
    batch=batch_elementwise,
)


# ----- rem, nextafter -----------------------------------------------------------------------


def rem(x, y):
    """Elementwise remainder of `x / y` with the sign of `x` (C's `fmod`).

    Example:
      >>> rem(np.int32(-7), np.int32(3))
      array(-1, dtype=int32)
    """
    return rem_p.bind(*as_operands(x, y))


def _rem_jvp_y(t, ans, x, y):
    # rem(x, y) = x - y * trunc(x / y), so d/dy = -trunc(x / y)
    quotient = div(x, y)
    return _like_ans(mul(neg(t), mul(sign(quotient), floor(_abs(quotient)))), ans)


rem_p = define_primitive(
    "rem",
    abstract_eval=same_shape(dtypes=_INTEGER_OR_FLOATING),
    reference=lambda x, y: np.fmod(x, y).astype(x.dtype),
    jvp=jvp_from(lambda t, ans, x, y: _like_ans(t, ans), _rem_jvp_y),
    transpose=NOT_LINEAR,
    batch=batch_elementwise,
)


def nextafter(x1, x2):
    """The next representable float after `x1` in the direction of `x2`.

    Example:
      >>> float(nextafter(np.float32(1), np.float32(2))) > 1.0
      True
    """
    return nextafter_p.bind(*as_operands(x1, x2))


nextafter_p = define_primitive(
    "nextafter",
    abstract_eval=same_shape(dtypes=FLOATING),
    reference=lambda x, y: np.nextafter(x, y).astype(x.dtype),
    jvp=_no_jvp("nextafter"),  # JAX defines none: the function is a step of one ulp
    transpose=NOT_LINEAR,
    batch=batch_elementwise,
)


# ----- floor, ceil, round, is_finite --------------------------------------------------------


def floor(x):
    """Elementwise largest integer `<= x` (as a float)."""
    return floor_p.bind(x)


floor_p = _unop("floor", np.floor, ZERO_TANGENT, accepted=FLOATING)


def ceil(x):
    """Elementwise smallest integer `>= x` (as a float)."""
    return ceil_p.bind(x)


ceil_p = _unop("ceil", np.ceil, ZERO_TANGENT, accepted=FLOATING)


class RoundingMethod(enum.IntEnum):
    """How `round` breaks ties: away from zero (0) or to the nearest even integer (1)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001 (JAX's name)
    """Elementwise rounding to the nearest integer; ties per `rounding_method`.

    Example:
      >>> round(np.array([0.5, 2.5], np.float32), RoundingMethod.TO_NEAREST_EVEN)
      array([0., 2.], dtype=float32)
    """
    return round_p.bind(x, rounding_method=RoundingMethod(rounding_method))


def _round_away_from_zero(x):
    truncated = np.trunc(x)
    return np.where(np.abs(x - truncated) >= 0.5, truncated + np.sign(x), truncated)


def _round_reference(x, rounding_method):
    fn = np.rint if rounding_method == RoundingMethod.TO_NEAREST_EVEN else _round_away_from_zero
    return _in_float32(fn)(x)


round_p = define_primitive(
    "round",
    abstract_eval=same_shape(dtypes=FLOATING),
    reference=_round_reference,
    jvp=ZERO_TANGENT,
    transpose=NOT_LINEAR,
    batch=batch_elementwise,
)


def is_finite(x):
    """Elementwise: whether `x` is neither infinite nor NaN (bool)."""
    return is_finite_p.bind(x)


is_finite_p = define_primitive(
    "is_finite",
    abstract_eval=same_shape(dtypes=FLOATING, result_dtype=np.bool_),
    reference=lambda x: np.isfinite(x.astype(np.float32) if x.dtype.itemsize < 4 else x),
    jvp=ZERO_TANGENT,
    transpose=NOT_LINEAR,
    batch=batch_elementwise,
)


# ----- exponentials and logarithms ----------------------------------------------------------


def exp2(x, accuracy=None):
    """Elementwise `2 ** x`."""
    return exp2_p.bind(x, accuracy=accuracy)


# d 2^x = log(2) 2^x
exp2_p = _unop("exp2", np.exp2, lambda t, ans, x, **_: mul(log(_like(2.0, x)), mul(t, ans)),
               accuracy=True)


def _like(value, x):
    return np.asarray(value, get_aval(x).dtype)


def log1p(x, accuracy=None):
    """Elementwise `log(1 + x)`, accurate for small `x`."""
    return log1p_p.bind(x, accuracy=accuracy)


log1p_p = _unop("log1p", np.log1p, lambda t, ans, x, **_: div(t, add(x, 1.0)), accuracy=True)


def expm1(x, accuracy=None):
    """Elementwise `exp(x) - 1`, accurate for small `x`."""
    return expm1_p.bind(x, accuracy=accuracy)


expm1_p = _unop("expm1", np.expm1, lambda t, ans, x, **_: mul(t, add(ans, 1.0)), accuracy=True)


# ----- trigonometric functions --------------------------------------------------------------


def tan(x, accuracy=None):
    """Elementwise tangent."""
    return tan_p.bind(x, accuracy=accuracy)


# d tan x = 1 + tan(x)^2
tan_p = _unop("tan", np.tan, lambda t, ans, x, **_: mul(t, add(1.0, square(ans))), accuracy=True)


def asin(x):
    """Elementwise arcsine."""
    return asin_p.bind(x)


# d asin x = 1 / sqrt(1 - x^2)
asin_p = _unop("asin", np.arcsin, lambda t, ans, x: mul(t, rsqrt(sub(1.0, square(x)))))


def acos(x):
    """Elementwise arccosine."""
    return acos_p.bind(x)


acos_p = _unop("acos", np.arccos, lambda t, ans, x: mul(t, neg(rsqrt(sub(1.0, square(x))))))


def atan(x):
    """Elementwise arctangent."""
    return atan_p.bind(x)


atan_p = _unop("atan", np.arctan, lambda t, ans, x: div(t, add(1.0, square(x))))


def atan2(x, y):
    """Elementwise `atan(x / y)` with the quadrant of the point `(y, x)`.

    Example:
      >>> atan2(np.float32(1), np.float32(-1))
      array(2.3561945, dtype=float32)
    """
    return atan2_p.bind(*as_operands(x, y))


def _atan2_jvp_x(t, ans, x, y):
    return _like_ans(mul(t, div(y, add(square(x), square(y)))), ans)  # d/dx = y / (x^2+y^2)


def _atan2_jvp_y(t, ans, x, y):
    return _like_ans(mul(t, div(neg(x), add(square(x), square(y)))), ans)  # -x / (x^2+y^2)


def _atan2_reference(x, y):
    if dtypes.issubdtype(x.dtype, np.complexfloating):  # atan(x / y), JAX's complex extension
        return np.arctan(x / y).astype(x.dtype)
    return _in_float32(lambda a: np.arctan2(a, y.astype(a.dtype)))(x)


atan2_p = define_primitive(
    "atan2",
    abstract_eval=same_shape(dtypes=INEXACT),
    reference=_atan2_reference,
    jvp=jvp_from(_atan2_jvp_x, _atan2_jvp_y),
    transpose=NOT_LINEAR,
    batch=batch_elementwise,
)


# ----- hyperbolic functions -----------------------------------------------------------------


def sinh(x):
    """Elementwise hyperbolic sine."""
    return sinh_p.bind(x)


sinh_p = _unop("sinh", np.sinh, lambda t, ans, x: mul(t, cosh(x)))


def cosh(x):
    """Elementwise hyperbolic cosine."""
    return cosh_p.bind(x)


cosh_p = _unop("cosh", np.cosh, lambda t, ans, x: mul(t, sinh(x)))


def asinh(x):
    """Elementwise inverse hyperbolic sine."""
    return asinh_p.bind(x)


# d asinh x = 1 / sqrt(x^2 + 1)
asinh_p = _unop("asinh", np.arcsinh, lambda t, ans, x: mul(t, rsqrt(add(square(x), 1.0))))


def acosh(x):
    """Elementwise inverse hyperbolic cosine (`x >= 1`)."""
    return acosh_p.bind(x)


# d acosh x = 1 / sqrt(x^2 - 1)
acosh_p = _unop("acosh", np.arccosh, lambda t, ans, x: mul(t, rsqrt(sub(square(x), 1.0))))


def atanh(x):
    """Elementwise inverse hyperbolic tangent (`|x| < 1`)."""
    return atanh_p.bind(x)


# d atanh x = 1 / ((1 + x)(1 - x))
atanh_p = _unop("atanh", np.arctanh,
                lambda t, ans, x: mul(div(1.0, add(1.0, x)), div(t, sub(1.0, x))))


def cbrt(x, accuracy=None):
    """Elementwise real cube root."""
    return cbrt_p.bind(x, accuracy=accuracy)


# d x^(1/3) = 1/3 cbrt(x)^-2
cbrt_p = _unop("cbrt", np.cbrt, lambda t, ans, x, **_: mul(t, mul(1 / 3, integer_pow(ans, -2))),
               accepted=FLOATING, accuracy=True)


# ----- complex parts ------------------------------------------------------------------------


def _real_dtype(dtype):
    return np.empty((), dtype).real.dtype


def _complex_dtype(dtype):
    return np.result_type(dtype, np.complex64)


def _complex_part_abstract_eval(name):
    def rule(x):
        check_dtype(name, x.dtype, (np.complexfloating,))
        return ShapedArray(x.shape, _real_dtype(x.dtype), x.weak_type)

    return rule


def real(x):
    """Elementwise real part of a complex array.

    Example:
      >>> real(np.complex64(1 + 2j))
      array(1., dtype=float32)
    """
    return real_p.bind(x)


real_p = define_primitive(
    "real",
    abstract_eval=_complex_part_abstract_eval("real"),
    reference=np.real,
    jvp=linear,
    transpose=lambda ct, x: [complex(ct, np.zeros((), get_aval(ct).dtype))],
    batch=batch_elementwise,
)


def imag(x):
    """Elementwise imaginary part of a complex array."""
    return imag_p.bind(x)


imag_p = define_primitive(
    "imag",
    abstract_eval=_complex_part_abstract_eval("imag"),
    reference=np.imag,
    jvp=linear,
    transpose=lambda ct, x: [complex(np.zeros((), get_aval(ct).dtype), neg(ct))],
    batch=batch_elementwise,
)


def complex(x, y):  # noqa: A001 (JAX's name)
    """Elementwise `x + 1j * y` from two real arrays of the same dtype."""
    return complex_p.bind(*as_operands(x, y))


def _complex_abstract_eval(x, y):
    rule = same_shape(dtypes=FLOATING)
    rule.primitive_name = "complex"
    out = rule(x, y)
    if out.dtype not in (np.float32, np.float64):
        raise TypeError(f"complex accepts float32 or float64 parts, got {out.dtype.name}. "
                        "Convert first, for example with x.astype(jnp.float32).")
    return out.update(dtype=_complex_dtype(out.dtype))


def _complex_transpose(ct, x, y):
    return [real(ct) if undefined(x) else None, imag(neg(ct)) if undefined(y) else None]


complex_p = define_primitive(
    "complex",
    abstract_eval=_complex_abstract_eval,
    reference=lambda x, y: (x + 1j * y).astype(_complex_dtype(x.dtype)),
    jvp=linear,
    transpose=_complex_transpose,
    batch=batch_elementwise,
)


def conj(x):
    """Elementwise complex conjugate (a real input gives a complex result)."""
    return conj_p.bind(x, input_dtype=get_aval(x).dtype)


def _conj_abstract_eval(x, input_dtype):
    check_dtype("conj", x.dtype, INEXACT)
    return ShapedArray(x.shape, _complex_dtype(x.dtype), x.weak_type)


def _conj_transpose(ct, x, input_dtype):
    if dtypes.issubdtype(input_dtype, np.complexfloating):
        return [conj(ct)]
    return [real(ct)]


conj_p = define_primitive(
    "conj",
    abstract_eval=_conj_abstract_eval,
    reference=lambda x, input_dtype: np.conj(x).astype(_complex_dtype(x.dtype)),
    jvp=linear,
    transpose=_conj_transpose,
    batch=batch_elementwise,
)


# ----- clamp --------------------------------------------------------------------------------


def clamp(min, x, max):  # noqa: A002 (JAX's names)
    """Elementwise `min(max(x, min), max)`; `min` and `max` are scalars or have `x`'s shape.

    Example:
      >>> clamp(0.0, np.array([-1, 0.5, 3], np.float32), 1.0)
      array([0. , 0.5, 1. ], dtype=float32)
    """
    x, lo, hi = as_operands(x, min, max)
    return clamp_p.bind(lo, x, hi)


def _clamp_abstract_eval(lo, x, hi):
    for what, bound in (("min", lo), ("max", hi)):
        if bound.shape not in ((), x.shape):
            raise TypeError(f"clamp requires {what}.shape == operand.shape or {what}.shape == "
                            f"(), got {what}.shape={bound.shape}, operand.shape={x.shape}.")
    check_same_dtypes("clamp", (lo, x, hi))
    return ShapedArray(x.shape, x.dtype, x.weak_type, x.sharding)  # the operand's, as JAX


def _zeros_where(cond, t):
    shape = get_aval(cond).shape
    t = broadcast_to_shape(t, shape)
    return select_n(cond, zeros_like_aval(get_aval(t)), t)


def _and(a, b):
    return bitwise_and(a, b)


clamp_p = define_primitive(
    "clamp",
    abstract_eval=_clamp_abstract_eval,
    reference=lambda lo, x, hi: np.clip(x, lo, hi).astype(x.dtype),
    jvp=jvp_from(
        lambda t, ans, lo, x, hi: _zeros_where(_and(gt(lo, x), lt(lo, hi)), t),
        lambda t, ans, lo, x, hi: _zeros_where(_and(gt(x, lo), lt(x, hi)), t),
        lambda t, ans, lo, x, hi: _zeros_where(lt(hi, x), t),
    ),
    transpose=NOT_LINEAR,
    batch=lambda axis_data, args, dims: _clamp_batch(axis_data.size, args, dims),
)


def _clamp_batch(size, args, dims):
    x = bdim_at_front(args[1], dims[1], size)
    shape = get_aval(x).shape

    def fit(bound, d):
        if d is None and get_aval(bound).ndim == 0:
            return bound
        bound = bdim_at_front(bound, d, size)
        if get_aval(bound).shape != shape:
            bound = broadcast_in_dim(bound, shape, (0,))
        return bound

    return clamp_p.bind(fit(args[0], dims[0]), x, fit(args[2], dims[2])), 0


# ----- bitcast_convert_type -----------------------------------------------------------------


def bitcast_convert_type(operand, new_dtype):
    """Reinterprets the bits of `operand` as `new_dtype`; a narrower dtype adds a trailing
    dimension, a wider one consumes it.

    Example:
      >>> bitcast_convert_type(np.float32(1), np.int32)
      array(1065353216, dtype=int32)
    """
    return bitcast_convert_type_p.bind(operand, new_dtype=dtypes.canonicalize_dtype(new_dtype))


def _bitcast_abstract_eval(x, new_dtype):
    old_bits, new_bits = x.dtype.itemsize * 8, np.dtype(new_dtype).itemsize * 8
    split = x.sharding.aval_partitions if x.sharding is not None else ()
    if old_bits == new_bits:
        return ShapedArray(x.shape, new_dtype, sharding=x.sharding)
    if old_bits > new_bits:
        if old_bits % new_bits:
            raise TypeError(f"bitcast_convert_type: {x.dtype.name} ({old_bits} bits) is not a "
                            f"multiple of {np.dtype(new_dtype).name} ({new_bits} bits).")
        return ShapedArray((*x.shape, old_bits // new_bits), new_dtype,
                           sharding=with_entries(x, (*split, None)))
    if not x.shape or x.shape[-1] * old_bits != new_bits:
        raise ValueError(f"bitcast_convert_type: converting an array of shape {x.shape} from "
                         f"{x.dtype.name} ({old_bits} bits) to {np.dtype(new_dtype).name} "
                         f"({new_bits} bits) needs a last dimension of {new_bits // old_bits}.")
    return ShapedArray(x.shape[:-1], new_dtype, sharding=with_entries(x, split[:-1]))


def _bitcast_reference(x, new_dtype):
    x = np.ascontiguousarray(x).reshape(np.shape(x))
    if x.dtype.itemsize > np.dtype(new_dtype).itemsize:
        return x.reshape((*x.shape, 1)).view(new_dtype)
    out = x.view(new_dtype)
    return out.reshape(x.shape[:-1]) if x.dtype.itemsize < np.dtype(new_dtype).itemsize else out


def _bitcast_batch(axis_data, args, dims, new_dtype):
    return bitcast_convert_type(move_bdim(args[0], dims[0], 0), new_dtype), 0


bitcast_convert_type_p = define_primitive(
    "bitcast_convert_type",
    abstract_eval=_bitcast_abstract_eval,
    reference=_bitcast_reference,
    jvp=ZERO_TANGENT,
    transpose=NOT_LINEAR,
    batch=_bitcast_batch,
)


# ----- reduce_precision ---------------------------------------------------------------------


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
    """Rounds `operand` to the float format with the given exponent and mantissa bits (to
    nearest even; overflow gives inf, underflow signed zero), in its own dtype.

    Example:
      >>> reduce_precision(np.float32(1.0009765625), 5, 7)
      array(1., dtype=float32)
    """
    return reduce_precision_p.bind(operand, exponent_bits=int(exponent_bits),
                                   mantissa_bits=int(mantissa_bits))


def _reduce_precision_abstract_eval(x, exponent_bits, mantissa_bits):
    check_dtype("reduce_precision", x.dtype, FLOATING)
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(f"reduce_precision: exponent_bits={exponent_bits} must be >= 1 and "
                         f"mantissa_bits={mantissa_bits} >= 0.")
    return ShapedArray(x.shape, x.dtype, x.weak_type, x.sharding)


_UINT = {4: np.uint32, 8: np.uint64}
_FORMAT = {4: (8, 23), 8: (11, 52)}


def _reduce_precision_reference(x, exponent_bits, mantissa_bits):
    wide = x if x.dtype.itemsize >= 4 else x.astype(np.float32)
    size = wide.dtype.itemsize
    uint, (src_exp, src_mant) = _UINT[size], _FORMAT[size]
    bits = wide.view(uint).astype(np.uint64)
    one = np.uint64(1)
    if mantissa_bits < src_mant:
        shift = np.uint64(src_mant - mantissa_bits)
        last_bit_mask = one << shift
        bias = ((bits & last_bit_mask) >> shift) + (last_bit_mask >> one) - one
        bits = (bits + bias) & ~(last_bit_mask - one)
    if exponent_bits < src_exp:
        sign_mask = one << np.uint64(size * 8 - 1)
        exp_mask = ((one << np.uint64(src_exp)) - one) << np.uint64(src_mant)
        bias, reduced_bias = (1 << (src_exp - 1)) - 1, (1 << (exponent_bits - 1)) - 1
        exponent = bits & exp_mask
        overflows = exponent > np.uint64((bias + reduced_bias) << src_mant)
        underflows = exponent <= np.uint64((bias - reduced_bias) << src_mant)
        signed_zero = bits & sign_mask
        bits = np.where(overflows, signed_zero | exp_mask, np.where(underflows, signed_zero, bits))
    out = (bits & np.uint64(np.iinfo(uint).max)).astype(uint).view(wide.dtype)
    if mantissa_bits > 0:
        out = np.where(np.isnan(wide), wide, out)
    return out.astype(x.dtype)


reduce_precision_p = define_primitive(
    "reduce_precision",
    abstract_eval=_reduce_precision_abstract_eval,
    reference=_reduce_precision_reference,
    jvp=linear,
    transpose=lambda ct, x, **params: [reduce_precision_p.bind(ct, **params)],
    batch=batch_elementwise,
)


# ----- compositions: select, reciprocal -----------------------------------------------------


def select(pred, on_true, on_false):
    """Elementwise `on_true` where `pred` else `on_false` (select_n with the cases swapped).

    Example:
      >>> select(np.array([True, False]), np.ones(2, np.float32), np.zeros(2, np.float32))
      array([1., 0.], dtype=float32)
    """
    return select_n(pred, on_false, on_true)


def reciprocal(x):
    """Elementwise `1 / x` (integer_pow with exponent -1).

    Example:
      >>> reciprocal(np.float32(4))
      array(0.25, dtype=float32)
    """
    return integer_pow(x, -1)


_hooks.install(conj=conj, real=real)
