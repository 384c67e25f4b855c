"""Lowerings of `laminax_core/lax/_windowed.py`: sliding-window reductions (pooling) and the
select-and-scatter/gather pair that differentiates max and min pooling."""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func
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

__all__ = ["dynamic_reduce_window"]


def _padding_attr(padding) -> ir.DenseIntElementsAttr:
    pads = np.asarray(padding, np.int64).reshape(-1, 2)
    return ir.DenseIntElementsAttr.get(pads, shape=list(pads.shape))


def _reduce_window(
    avals_in,
    avals_out,
    operands,
    inits,
    body,
    window_dimensions,
    window_strides,
    padding,
    base_dilation,
    window_dilation,
    ctx=None,
):
    """A variadic `stablehlo.reduce_window`; `body(block)` fills the reducer region. With
    symbolic windows, strides or padding (shape polymorphism) it is JAX's
    `stablehlo.dynamic_reduce_window` custom call instead (one operand)."""
    if ctx is not None and not _dynamic.is_static(
            (*window_dimensions, *window_strides, *(p for pair in padding for p in pair))):
        return [dynamic_reduce_window(
            ctx, operands[0], inits[0], avals_in[0], avals_out[0], window_dimensions,
            window_strides, padding, base_dilation, window_dilation, body)]
    op = hlo.ReduceWindowOp(
        [aval_to_ir_type(a) for a in avals_out],
        list(operands),
        list(inits),
        list(window_dimensions),
        window_strides=list(window_strides),
        base_dilations=list(base_dilation),
        window_dilations=list(window_dilation),
        padding=_padding_attr(padding),
    )
    scalars = [aval_to_ir_type(a.update(shape=())) for a in avals_in]
    block = op.regions[0].blocks.append(*scalars, *scalars)
    with ir.InsertionPoint(block):
        hlo.return_(list(body(block)))
    return list(op.results)


def _monoid_window(combine, identity):
    def rule(ctx, x, **params):
        (aval,) = ctx.avals_in
        init = ir_constant(np.asarray(identity(aval.dtype), aval.dtype))
        return _reduce_window(
            [aval], ctx.avals_out, [x], [init], lambda block: [combine(*block.arguments)],
            **params, ctx=ctx,
        )[0]

    return rule


register_lowering(lax.reduce_window_sum_p, _monoid_window(hlo.add, lambda dtype: 0))
register_lowering(lax.reduce_window_max_p, _monoid_window(hlo.maximum, lowest))
register_lowering(lax.reduce_window_min_p, _monoid_window(hlo.minimum, highest))


def dynamic_reduce_window(ctx, x, init, aval_in, aval_out, window, strides, pads,
                          base_dilation, window_dilation, body):
    """`stablehlo.dynamic_reduce_window`: operand, init, then window dimensions, strides,
    base and window dilations and padding as tensors; the reducer (`body(block)`) is a
    module function. Shape refinement turns it back into a `reduce_window`."""
    mctx = ctx.module_context
    scalar = aval_to_ir_type(aval_in.update(shape=()))
    name = mctx.unique_symbol(f"reduce_window_{np.dtype(aval_in.dtype).name}_reducer")
    with ir.InsertionPoint(mctx.module.body):
        reducer = func.FuncOp(name, ir.FunctionType.get([scalar, scalar], [scalar]))
        block = reducer.add_entry_block()
    with ir.InsertionPoint(block):
        func.ReturnOp(list(body(block)))
    ndim = aval_in.ndim
    flat_pads = _dynamic.shape_tensor([p for pair in pads for p in pair])
    elt = ir.RankedTensorType(flat_pads.type).element_type
    padding = hlo.reshape(ir.RankedTensorType.get([ndim, 2], elt), flat_pads)
    op = hlo.CustomCallOp(
        [aval_to_ir_type(aval_out)],
        [x, init, _dynamic.shape_tensor(window), _dynamic.shape_tensor(strides),
         _dynamic.shape_tensor(base_dilation), _dynamic.shape_tensor(window_dilation), padding],
        call_target_name="stablehlo.dynamic_reduce_window",
        api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 2),
        called_computations=ir.ArrayAttr.get([ir.FlatSymbolRefAttr.get(name)]),
    )
    return op.result


@lowering_for(lax.reduce_window_p)
def _reduce_window_lower(ctx, x, init, *, jaxpr, consts, **params):
    def body(block):
        values = [ir_constant(c) for c in consts]
        outs, _ = jaxpr_subcomp(
            ctx.module_context, jaxpr, ctx.name_stack, {}, values, *block.arguments
        )
        return outs

    return _reduce_window(ctx.avals_in[:1], ctx.avals_out, [x], [init], body, **params,
                          ctx=ctx)[0]


def _direction(select_prim) -> str:
    return "GE" if select_prim.name == "ge" else "LE"


@lowering_for(lax.select_and_gather_add_p)
def _select_and_gather_add_lower(ctx, tangents, x, *, select_prim, **params):
    # reduce (operand, tangent) pairs, keeping the pair whose operand select_prim picks
    aval_t, aval_x = ctx.avals_in
    direction = _direction(select_prim)
    init_x = -np.inf if direction == "GE" else np.inf
    if not dtypes.issubdtype(aval_x.dtype, np.inexact):
        init_x = lowest(aval_x.dtype) if direction == "GE" else highest(aval_x.dtype)
    inits = [
        ir_constant(np.asarray(init_x, aval_x.dtype)),
        ir_constant(np.asarray(0, aval_t.dtype)),
    ]

    def body(block):
        kx, vx, ky, vy = block.arguments
        which = compare(kx, ky, direction, aval_x.dtype)
        return [hlo.select(which, kx, ky), hlo.select(which, vx, vy)]

    out_avals = [ctx.avals_out[0].update(dtype=aval_x.dtype), ctx.avals_out[0]]
    return _reduce_window([aval_x, aval_t], out_avals, [x, tangents], inits, body, **params)[1]


@lowering_for(lax.select_and_scatter_add_p)
def _select_and_scatter_add_lower(
    ctx, source, x, *, select_prim, window_dimensions, window_strides, padding
):
    (aval_out,) = ctx.avals_out
    aval_x = ctx.avals_in[1]
    scalar = aval_to_ir_type(aval_x.update(shape=()))
    init = ir_constant(np.asarray(0, aval_out.dtype))
    op = hlo.SelectAndScatterOp(
        aval_to_ir_type(aval_out),
        x,
        source,
        init,
        window_dimensions=list(window_dimensions),
        window_strides=list(window_strides),
        padding=_padding_attr(padding),
    )
    select = op.select.blocks.append(scalar, scalar)
    with ir.InsertionPoint(select):
        hlo.return_([compare(*select.arguments, _direction(select_prim), aval_x.dtype)])
    scatter = op.scatter.blocks.append(scalar, scalar)
    with ir.InsertionPoint(scatter):
        hlo.return_([hlo.add(*scatter.arguments)])
    return op.result


@lowering_for(lax.select_and_scatter_p)
def _select_and_scatter_lower(ctx, operand, source, init_value, *, select_jaxpr, select_consts,
                              scatter_jaxpr, scatter_consts, window_dimensions, window_strides,
                              padding):
    aval = ctx.avals_in[0]
    scalar = aval_to_ir_type(aval.update(shape=()))
    op = hlo.SelectAndScatterOp(
        aval_to_ir_type(ctx.avals_out[0]), operand, source, init_value,
        window_dimensions=list(window_dimensions), window_strides=list(window_strides),
        padding=_padding_attr(padding))
    for region, jaxpr, consts in ((op.select, select_jaxpr, select_consts),
                                  (op.scatter, scatter_jaxpr, scatter_consts)):
        block = region.blocks.append(scalar, scalar)
        with ir.InsertionPoint(block):
            values = [ir_constant(c) for c in consts]
            outs, _ = jaxpr_subcomp(ctx.module_context, jaxpr, ctx.name_stack, {}, values,
                                    *block.arguments)
            hlo.return_(list(outs))
    return op.result
