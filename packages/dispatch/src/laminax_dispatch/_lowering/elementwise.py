"""Lowerings of `laminax_core/lax/_elementwise.py`, in the same order.

Each rule emits the StableHLO ops real JAX 0.10.2 emits for the primitive, so that results
agree bit for bit where XLA is deterministic.
"""

from __future__ import annotations

from jaxlib.mlir.dialects import stablehlo as hlo
import numpy as np
from laminax_core import dtypes, lax

from laminax_dispatch._lowering._core import (
    broadcast_to_aval,
    compare,
    convert,
    elementwise,
    full_like,
    lowering_for,
    register_lowering,
)

# ----- add, sub, add_any, neg ---------------------------------------------------------------

register_lowering(lax.add_p, elementwise(hlo.add))
register_lowering(lax.add_any_p, elementwise(hlo.add))
register_lowering(lax.sub_p, elementwise(hlo.subtract))
register_lowering(lax.neg_p, elementwise(hlo.negate))

# ----- mul, div -----------------------------------------------------------------------------

register_lowering(lax.mul_p, elementwise(hlo.multiply))
register_lowering(lax.div_p, elementwise(hlo.divide))  # integer division truncates, as in C

# ----- max, min -----------------------------------------------------------------------------

register_lowering(lax.max_p, elementwise(hlo.maximum))
register_lowering(lax.min_p, elementwise(hlo.minimum))

# ----- transcendental functions -------------------------------------------------------------

register_lowering(lax.exp_p, elementwise(hlo.exponential))
register_lowering(lax.log_p, elementwise(hlo.log))
register_lowering(lax.sin_p, elementwise(hlo.sine))
register_lowering(lax.cos_p, elementwise(hlo.cosine))
register_lowering(lax.tanh_p, elementwise(hlo.tanh))


@lowering_for(lax.logistic_p)
def _logistic_lower(ctx, x, accuracy=None):
    # 1 / (1 + exp(-x)), the expansion JAX emits (not stablehlo.logistic)
    (aval,) = ctx.avals_out
    denominator = hlo.add(full_like(1, aval), hlo.exponential(hlo.negate(x)))
    return hlo.divide(full_like(1, aval), denominator)


register_lowering(lax.sqrt_p, elementwise(hlo.sqrt))
register_lowering(lax.rsqrt_p, elementwise(hlo.rsqrt))

# ----- pow, integer_pow ---------------------------------------------------------------------



@lowering_for(lax.pow_p)
def _pow_lower(ctx, x, y):
    # an integer exponent is converted to the base's dtype first, as JAX lowers it
    x_aval, y_aval = ctx.avals_in
    (aval,) = ctx.avals_out
    y_as_base = y_aval.update(dtype=x_aval.dtype)
    y = convert(y, y_aval, y_as_base)
    return hlo.power(broadcast_to_aval(x, x_aval, aval), broadcast_to_aval(y, y_as_base, aval))


@lowering_for(lax.integer_pow_p)
def _integer_pow_lower(ctx, x, y):
    # binary exponentiation by repeated squaring; x ** -n = 1 / x ** n
    (aval,) = ctx.avals_out
    if y == 0:
        return full_like(1, aval)
    n, acc = abs(y), None
    while n > 0:
        if n & 1:
            acc = x if acc is None else hlo.multiply(x, acc)
        n >>= 1
        if n > 0:
            x = hlo.multiply(x, x)
    return hlo.divide(full_like(1, aval), acc) if y < 0 else acc


# ----- sign, abs ----------------------------------------------------------------------------

register_lowering(lax.sign_p, elementwise(hlo.sign))
register_lowering(lax.abs_p, elementwise(hlo.abs))

# ----- comparisons --------------------------------------------------------------------------


def _comparison(direction: str):
    def rule(ctx, x, y):
        aval_x, aval_y = ctx.avals_in
        shape = ctx.avals_out[0].shape
        x = broadcast_to_aval(x, aval_x, aval_x.update(shape=shape))
        y = broadcast_to_aval(y, aval_y, aval_y.update(shape=shape))
        return compare(x, y, direction, aval_x.dtype)

    return rule


register_lowering(lax.eq_p, _comparison("EQ"))
register_lowering(lax.ne_p, _comparison("NE"))
register_lowering(lax.lt_p, _comparison("LT"))
register_lowering(lax.le_p, _comparison("LE"))
register_lowering(lax.gt_p, _comparison("GT"))
register_lowering(lax.ge_p, _comparison("GE"))


def _total_order_comparison(direction: str):
    # JAX's eq_to / le_to / lt_to: TOTALORDER for floating and complex operands
    def rule(ctx, x, y):
        aval_x, aval_y = ctx.avals_in
        shape = ctx.avals_out[0].shape
        x = broadcast_to_aval(x, aval_x, aval_x.update(shape=shape))
        y = broadcast_to_aval(y, aval_y, aval_y.update(shape=shape))
        if not dtypes.issubdtype(aval_x.dtype, np.inexact):
            return compare(x, y, direction, aval_x.dtype)
        return hlo.compare(x, y, hlo.ComparisonDirectionAttr.get(direction),
                           compare_type=hlo.ComparisonTypeAttr.get("TOTALORDER"))

    return rule


register_lowering(lax.eq_to_p, _total_order_comparison("EQ"))
register_lowering(lax.le_to_p, _total_order_comparison("LE"))
register_lowering(lax.lt_to_p, _total_order_comparison("LT"))

# ----- select_n -----------------------------------------------------------------------------


def _select_tree(which, which_aval, cases, offset: int):
    # a balanced tree of selects on `which < mid`, as JAX builds it for int32 `which`
    if len(cases) == 1:
        return cases[0]
    if which_aval.dtype == bool:
        return hlo.select(which, cases[1], cases[0])
    mid = len(cases) // 2
    pred = compare(which, full_like(offset + mid, which_aval), "LT", which_aval.dtype)
    return hlo.select(
        pred,
        _select_tree(which, which_aval, cases[:mid], offset),
        _select_tree(which, which_aval, cases[mid:], offset + mid),
    )


@lowering_for(lax.select_n_p)
def _select_n_lower(ctx, which, *cases):
    which_aval, *case_avals = ctx.avals_in
    (aval_out,) = ctx.avals_out
    cases = [broadcast_to_aval(c, a, aval_out) for c, a in zip(cases, case_avals, strict=True)]
    # a scalar `which` stays scalar: stablehlo.select accepts a rank-0 predicate
    return _select_tree(which, which_aval, cases, 0)


# ----- convert_element_type -----------------------------------------------------------------


@lowering_for(lax.convert_element_type_p)
def _convert_element_type_lower(ctx, x, new_dtype, weak_type, sharding):
    return convert(x, ctx.avals_in[0], ctx.avals_out[0])


# ----- stop_gradient, copy, stage (identities on values) ----------------------------------

register_lowering(lax.stop_gradient_p, lambda ctx, x: x)  # the identity on values
register_lowering(lax.copy_p, lambda ctx, x: x)
register_lowering(lax.stage_p, lambda ctx, x: x)


# ----- tokens -------------------------------------------------------------------------------

register_lowering(lax.create_token_p, lambda ctx: hlo.create_token())
register_lowering(lax.after_all_p, lambda ctx, *tokens: hlo.after_all(list(tokens)))
