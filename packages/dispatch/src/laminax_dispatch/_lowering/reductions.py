"""Lowerings of `laminax_core/lax/_reductions.py`, in the same order.

A reduction is a `stablehlo.reduce` whose body applies one binary op; argmax reduces values
and indices together (ties and NaNs pick the first index, as JAX's lowering does).
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import lax

from laminax_dispatch._lowering._core import compare, ir_constant, lowering_for
from laminax_dispatch._mlir import aval_to_ir_type


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


def _lowest(dtype):
    dtype = np.dtype(dtype)
    if np.issubdtype(dtype, np.inexact):
        return -np.inf
    if dtype == np.bool_:
        return False
    return np.iinfo(dtype).min


@lowering_for(lax.reduce_sum_p)
def _reduce_sum_lower(ctx, x, axes, out_sharding):
    return reduce_with(x, ctx.avals_in[0], ctx.avals_out[0], 0, hlo.add, axes)


@lowering_for(lax.reduce_max_p)
def _reduce_max_lower(ctx, x, axes):
    aval = ctx.avals_in[0]
    return reduce_with(x, aval, ctx.avals_out[0], _lowest(aval.dtype), hlo.maximum, axes)


def _argmax_body(block, dtype, index_dtype):
    # pick (x1, i1) when x1 > x2, or x1 is NaN, or x1 == x2 and i1 < i2
    x1, i1, x2, i2 = block.arguments
    pick = compare(x1, x2, "GT", dtype)
    if np.issubdtype(dtype, np.inexact):
        pick = hlo.or_(pick, compare(x1, x1, "NE", dtype))
    tie = hlo.and_(compare(x1, x2, "EQ", dtype), compare(i1, i2, "LT", index_dtype))
    pick_index = hlo.or_(pick, tie)
    hlo.return_([hlo.select(pick, x1, x2), hlo.select(pick_index, i1, i2)])


@lowering_for(lax.argmax_p)
def _argmax_lower(ctx, x, axes, index_dtype):
    (aval,), (aval_out,) = ctx.avals_in, ctx.avals_out
    (axis,) = axes
    index_aval = aval.update(dtype=index_dtype, weak_type=False)
    indices = hlo.iota(aval_to_ir_type(index_aval), axis)
    inits = [ir_constant(np.asarray(_lowest(aval.dtype), aval.dtype)),
             ir_constant(np.asarray(0, index_dtype))]
    value_out = aval_out.update(dtype=aval.dtype)
    reduce = hlo.ReduceOp([aval_to_ir_type(value_out), aval_to_ir_type(aval_out)],
                          [x, indices], inits, [axis])
    block = reduce.regions[0].blocks.append(
        _scalar_type(aval), _scalar_type(index_aval), _scalar_type(aval), _scalar_type(index_aval)
    )
    with ir.InsertionPoint(block):
        _argmax_body(block, aval.dtype, index_dtype)
    return reduce.results[1]
