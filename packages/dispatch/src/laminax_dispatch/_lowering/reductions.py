"""Lowerings of `laminax_core/lax/_reductions.py`, in the same order.

A reduction is a `stablehlo.reduce` whose body applies one binary op; argmax reduces values
and indices together (ties and NaNs pick the first index, as JAX's lowering does).
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import dtypes, lax
from laminax_core.internal import highest, lowest

from laminax_dispatch._lowering import _dynamic
from laminax_dispatch._lowering._core import (
    compare,
    ir_constant,
    jaxpr_subcomp,
    lowering_for,
    register_lowering,
)
from laminax_dispatch._mlir import aval_to_ir_type

__all__ = ["reduce_with"]


def _scalar_type(aval) -> ir.Type:
    return aval_to_ir_type(aval.update(shape=()))


def reduce_with(x, aval_in, aval_out, init, op, axes) -> ir.Value:
    """`stablehlo.reduce` of `x` over `axes`, starting at `init`, combining with `op`."""
    init_value = ir_constant(np.asarray(init, dtype=aval_in.dtype))
    reduce = hlo.ReduceOp([aval_to_ir_type(aval_out)], [x], [init_value], list(axes))
    scalar = _scalar_type(aval_in)
    block = reduce.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.return_([op(*block.arguments)])
    return reduce.result


def _all_bits(dtype):
    dtype = np.dtype(dtype)
    return True if dtype == np.bool_ else np.array(-1).astype(dtype)


@lowering_for(lax.reduce_sum_p)
def _reduce_sum_lower(ctx, x, axes, out_sharding):
    return reduce_with(x, ctx.avals_in[0], ctx.avals_out[0], 0, hlo.add, axes)


@lowering_for(lax.reduce_max_p)
def _reduce_max_lower(ctx, x, axes):
    aval = ctx.avals_in[0]
    return reduce_with(x, aval, ctx.avals_out[0], lowest(aval.dtype), hlo.maximum, axes)


def _arg_reduce_body(block, dtype, index_dtype, direction: str):
    # pick (x1, i1) when x1 beats x2 (GT for argmax, LT for argmin), or x1 is NaN, or they tie
    # and i1 < i2: the first index wins, as in JAX's lowering
    x1, i1, x2, i2 = block.arguments
    pick = compare(x1, x2, direction, dtype)
    if dtypes.issubdtype(dtype, np.inexact):
        pick = hlo.or_(pick, compare(x1, x1, "NE", dtype))
    tie = hlo.and_(compare(x1, x2, "EQ", dtype), compare(i1, i2, "LT", index_dtype))
    pick_index = hlo.or_(pick, tie)
    hlo.return_([hlo.select(pick, x1, x2), hlo.select(pick_index, i1, i2)])


def _arg_reduce(ctx, x, axes, index_dtype, direction, init):
    (aval,), (aval_out,) = ctx.avals_in, ctx.avals_out
    (axis,) = axes
    index_aval = aval.update(dtype=index_dtype, weak_type=False)
    if _dynamic.is_static(aval.shape):
        indices = hlo.iota(aval_to_ir_type(index_aval), axis)
    else:
        indices = hlo.dynamic_iota(aval_to_ir_type(index_aval), _dynamic.shape_tensor(aval.shape),
                                   axis)
    inits = [ir_constant(np.asarray(init, aval.dtype)), ir_constant(np.asarray(0, index_dtype))]
    value_out = aval_out.update(dtype=aval.dtype)
    reduce = hlo.ReduceOp(
        [aval_to_ir_type(value_out), aval_to_ir_type(aval_out)], [x, indices], inits, [axis]
    )
    block = reduce.regions[0].blocks.append(
        _scalar_type(aval), _scalar_type(index_aval), _scalar_type(aval), _scalar_type(index_aval)
    )
    with ir.InsertionPoint(block):
        _arg_reduce_body(block, aval.dtype, index_dtype, direction)
    return reduce.results[1]


@lowering_for(lax.argmax_p)
def _argmax_lower(ctx, x, axes, index_dtype):
    return _arg_reduce(ctx, x, axes, index_dtype, "GT", lowest(ctx.avals_in[0].dtype))


def _monoid(op, identity):
    def rule(ctx, x, axes, **params):
        aval = ctx.avals_in[0]
        return reduce_with(x, aval, ctx.avals_out[0], identity(aval.dtype), op, axes)

    return rule


register_lowering(lax.reduce_min_p, _monoid(hlo.minimum, highest))
register_lowering(lax.reduce_prod_p, _monoid(hlo.multiply, lambda dtype: 1))
register_lowering(lax.reduce_and_p, _monoid(hlo.and_, _all_bits))
register_lowering(lax.reduce_or_p, _monoid(hlo.or_, lambda dtype: 0))
register_lowering(lax.reduce_xor_p, _monoid(hlo.xor, lambda dtype: 0))


@lowering_for(lax.argmin_p)
def _argmin_lower(ctx, x, axes, index_dtype):
    return _arg_reduce(ctx, x, axes, index_dtype, "LT", highest(ctx.avals_in[0].dtype))


@lowering_for(lax.reduce_p)
def _reduce_lower(ctx, *args, computation, jaxpr, dimensions):
    # a stablehlo.reduce whose body is the traced computation (accumulators, then elements)
    n = len(args) // 2
    operands, inits = args[:n], args[n:]
    reduce = hlo.ReduceOp(
        [aval_to_ir_type(a) for a in ctx.avals_out], list(operands), list(inits), list(dimensions)
    )
    scalars = [_scalar_type(a) for a in ctx.avals_in[n:]]
    block = reduce.regions[0].blocks.append(*scalars, *scalars)
    with ir.InsertionPoint(block):
        consts = [ir_constant(c) for c in jaxpr.consts]
        outs, _ = jaxpr_subcomp(
            ctx.module_context, jaxpr.jaxpr, ctx.name_stack, {}, consts, *block.arguments
        )
        hlo.return_(outs)
    return list(reduce.results)
