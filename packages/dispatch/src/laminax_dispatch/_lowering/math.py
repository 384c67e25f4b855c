"""Lowerings of `laminax_core/lax/_math.py`, in the same order (JAX 0.10.2's ops: CHLO where
JAX uses CHLO, such as `chlo.square` and the inverse trigonometric functions)."""

from __future__ import annotations

import numpy as np
from jaxlib.mlir.dialects import chlo
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import dtypes, lax

from laminax_dispatch._lowering._core import (
    elementwise,
    full_like,
    lowering_for,
    register_lowering,
    result_accuracy,
)
from laminax_dispatch._mlir import aval_to_ir_type


@lowering_for(lax.square_p)
def _square_lower(ctx, x):
    # chlo.square is for floats; integers multiply, as in JAX
    if dtypes.issubdtype(ctx.avals_in[0].dtype, np.integer):
        return hlo.multiply(x, x)
    return chlo.square(x)


register_lowering(lax.rem_p, elementwise(hlo.remainder))
register_lowering(lax.nextafter_p, elementwise(chlo.next_after))
register_lowering(lax.floor_p, elementwise(hlo.floor))
register_lowering(lax.ceil_p, elementwise(hlo.ceil))


@lowering_for(lax.round_p)
def _round_lower(ctx, x, rounding_method):
    if int(rounding_method) == 0:  # away from zero
        return hlo.round_nearest_afz(x)
    return hlo.round_nearest_even(x)


register_lowering(lax.is_finite_p, elementwise(hlo.is_finite))


@lowering_for(lax.exp2_p)
def _exp2_lower(ctx, x, accuracy=None):
    # 2 ** x = exp(log(2) * x), as JAX expands it
    (aval,) = ctx.avals_out
    out = hlo.exponential(hlo.multiply(full_like(np.log(2), aval), x))
    if accuracy is not None:  # JAX asks the exponential for it (logistic asks no op)
        out.owner.attributes["result_accuracy"] = result_accuracy(accuracy)
    return out


register_lowering(lax.log1p_p, elementwise(hlo.log_plus_one))
register_lowering(lax.expm1_p, elementwise(hlo.exponential_minus_one))
register_lowering(lax.tan_p, elementwise(hlo.tan))
register_lowering(lax.asin_p, elementwise(chlo.asin))
register_lowering(lax.acos_p, elementwise(chlo.acos))
register_lowering(lax.atan_p, elementwise(chlo.atan))
register_lowering(lax.atan2_p, elementwise(hlo.atan2))
register_lowering(lax.sinh_p, elementwise(chlo.sinh))
register_lowering(lax.cosh_p, elementwise(chlo.cosh))
register_lowering(lax.asinh_p, elementwise(chlo.asinh))
register_lowering(lax.acosh_p, elementwise(chlo.acosh))
register_lowering(lax.atanh_p, elementwise(chlo.atanh))
register_lowering(lax.cbrt_p, elementwise(hlo.cbrt))
register_lowering(lax.real_p, lambda ctx, x: hlo.real(x))
register_lowering(lax.imag_p, lambda ctx, x: hlo.imag(x))
register_lowering(lax.complex_p, elementwise(hlo.complex))


@lowering_for(lax.conj_p)
def _conj_lower(ctx, x, input_dtype):
    (aval_in,) = ctx.avals_in
    if not dtypes.issubdtype(aval_in.dtype, np.complexfloating):  # a real x: x + 0i
        return hlo.complex(x, full_like(0, aval_in))
    return hlo.complex(hlo.real(x), hlo.negate(hlo.imag(x)))


@lowering_for(lax.clamp_p)
def _clamp_lower(ctx, lo, x, hi):
    # stablehlo.clamp takes a scalar or an x-shaped bound
    return hlo.clamp(lo, x, hi)


@lowering_for(lax.bitcast_convert_type_p)
def _bitcast_convert_type_lower(ctx, x, new_dtype):
    return hlo.bitcast_convert(aval_to_ir_type(ctx.avals_out[0]), x)


@lowering_for(lax.reduce_precision_p)
def _reduce_precision_lower(ctx, x, exponent_bits, mantissa_bits):
    return hlo.reduce_precision(x, exponent_bits, mantissa_bits)
