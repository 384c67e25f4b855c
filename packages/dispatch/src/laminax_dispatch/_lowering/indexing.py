"""Lowerings of `laminax_core/lax/_indexing.py`: gather and the scatter family.

Out-of-bounds modes follow JAX's lowering: a CLIP or PROMISE_IN_BOUNDS gather is one
`stablehlo.gather` (XLA clamps start indices itself); a FILL_OR_DROP gather masks the slices
whose indices are out of bounds and fills them. A scatter drops out-of-bounds updates natively
(FILL_OR_DROP); CLIP clamps the indices first.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import lax
from laminax_core.internal import default_fill_value

from laminax_dispatch._lowering import _dynamic
from laminax_dispatch._lowering._core import (
    ir_constant,
    jaxpr_subcomp,
    lower_fun,
    lowering_for,
    register_lowering,
)
from laminax_dispatch._mlir import aval_to_ir_type

_Mode = lax.GatherScatterMode


def _gather_dnums(dn, index_vector_dim: int):
    return hlo.GatherDimensionNumbers.get(
        offset_dims=list(dn.offset_dims),
        collapsed_slice_dims=list(dn.collapsed_slice_dims),
        operand_batching_dims=list(dn.operand_batching_dims),
        start_indices_batching_dims=list(dn.start_indices_batching_dims),
        start_index_map=list(dn.start_index_map),
        index_vector_dim=index_vector_dim,
    )


def _gather_in_bounds(ctx, x, idx, dimension_numbers, slice_sizes, indices_are_sorted):
    index_vector_dim = ctx.avals_in[1].ndim - 1
    if not _dynamic.is_static(slice_sizes):  # symbolic slice sizes, as JAX lowers them
        return hlo.dynamic_gather(
            x, idx, _dynamic.shape_tensor(slice_sizes),
            _gather_dnums(dimension_numbers, index_vector_dim),
            indices_are_sorted=indices_are_sorted,
            results=[aval_to_ir_type(ctx.avals_out[0])])
    return hlo.gather(
        x,
        idx,
        _gather_dnums(dimension_numbers, index_vector_dim),
        list(slice_sizes),
        indices_are_sorted=indices_are_sorted,
    )


def _gather_fill(
    x, idx, *, dimension_numbers, slice_sizes, indices_are_sorted, unique_indices, mode, fill_value
):
    # gather in bounds, then replace the slices whose start index was out of bounds
    dn = dimension_numbers
    x_shape, idx_shape = x.aval.shape, idx.aval.shape
    upper = _dims_array([x_shape[d] - slice_sizes[d] for d in dn.start_index_map],
                        idx.aval.dtype)
    batch_rank = len(idx_shape) - 1
    upper = lax.broadcast_in_dim(upper, idx_shape, (batch_rank,))
    in_bounds = lax.bitwise_and(lax.ge(idx, np.zeros((), idx.aval.dtype)), lax.le(idx, upper))
    in_bounds = lax.reduce_and(in_bounds, (batch_rank,))
    out = lax.gather_p.bind(
        x,
        idx,
        dimension_numbers=dn,
        slice_sizes=slice_sizes,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=_Mode.PROMISE_IN_BOUNDS,
        fill_value=None,
    )
    out_shape = out.aval.shape
    batch_dims = tuple(d for d in range(len(out_shape)) if d not in dn.offset_dims)
    mask = lax.broadcast_in_dim(in_bounds, out_shape, batch_dims)
    fill = default_fill_value(x.aval.dtype) if fill_value is None else fill_value
    fill = lax.broadcast_in_dim(np.asarray(fill, x.aval.dtype), out_shape, ())
    return lax.select_n(mask, fill, out)


_gather_fill_rule = lower_fun(_gather_fill)


def _dims_array(dims, dtype):
    """A 1-D array of dimensions: constant, or for symbolic ones (shape polymorphism) the
    values the program computes."""
    if all(isinstance(b, int) for b in dims):
        return np.array(dims, dtype)
    return lax.concatenate([
        lax.reshape(lax.convert_element_type(lax.dimension_as_value(b), dtype), (1,))
        for b in dims], 0)


@lowering_for(lax.gather_p)
def _gather_lower(
    ctx,
    x,
    idx,
    *,
    dimension_numbers,
    slice_sizes,
    indices_are_sorted,
    unique_indices,
    mode,
    fill_value,
):
    if mode == _Mode.FILL_OR_DROP:
        return _gather_fill_rule(
            ctx,
            x,
            idx,
            dimension_numbers=dimension_numbers,
            slice_sizes=slice_sizes,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
            mode=mode,
            fill_value=fill_value,
        )
    return _gather_in_bounds(ctx, x, idx, dimension_numbers, slice_sizes, indices_are_sorted)


# ----- the scatter family -------------------------------------------------------------------


def _scatter_dnums(dn, index_vector_dim: int):
    return hlo.ScatterDimensionNumbers.get(
        update_window_dims=list(dn.update_window_dims),
        inserted_window_dims=list(dn.inserted_window_dims),
        input_batching_dims=list(dn.operand_batching_dims),
        scatter_indices_batching_dims=list(dn.scatter_indices_batching_dims),
        scattered_dims_to_operand_dims=list(dn.scatter_dims_to_operand_dims),
        index_vector_dim=index_vector_dim,
    )


def _clamp_indices(x, idx, upd, *, dimension_numbers):
    # CLIP: clamp every index vector so that its whole window lies inside the operand
    dn = dimension_numbers
    window = iter(dn.update_window_dims)
    sizes = [
        1
        if d in dn.inserted_window_dims or d in dn.operand_batching_dims
        else upd.aval.shape[next(window)]
        for d in range(len(x.aval.shape))
    ]
    dtype = idx.aval.dtype
    upper = _dims_array([x.aval.shape[d] - sizes[d] for d in dn.scatter_dims_to_operand_dims],
                        dtype)
    upper = lax.broadcast_in_dim(upper, idx.aval.shape, (len(idx.aval.shape) - 1,))
    return lax.min(lax.max(idx, np.zeros((), dtype)), upper)


_clamp_rule = lower_fun(_clamp_indices)


def _scatter_rule(combine):
    """The lowering of a scatter whose update computation is `combine(old, new)`."""

    def rule(
        ctx,
        x,
        idx,
        upd,
        *,
        dimension_numbers,
        indices_are_sorted,
        unique_indices,
        mode,
        update_jaxpr,
        update_consts,
    ):
        if mode == _Mode.CLIP:
            idx = _clamp_rule(ctx, x, idx, upd, dimension_numbers=dimension_numbers)[0]
        (aval,) = ctx.avals_out
        op = hlo.ScatterOp(
            [aval_to_ir_type(aval)],
            [x],
            idx,
            [upd],
            _scatter_dnums(dimension_numbers, ctx.avals_in[1].ndim - 1),
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
        )
        scalar = aval_to_ir_type(aval.update(shape=()))
        block = op.regions[0].blocks.append(scalar, scalar)
        with ir.InsertionPoint(block):
            old, new = block.arguments
            if update_jaxpr is not None and combine is None:
                consts = [ir_constant(c) for c in update_consts]
                (out,), _ = jaxpr_subcomp(
                    ctx.module_context, update_jaxpr, ctx.name_stack, {}, consts, old, new
                )
            elif combine is None:
                out = new
            elif aval.dtype == np.bool_:  # XLA has no add or multiply on i1: or, and
                out = _BOOL_COMBINERS.get(combine, combine)(old, new)
            else:
                out = combine(old, new)
            hlo.return_([out])
        return op.result

    return rule


_BOOL_COMBINERS = {hlo.add: hlo.or_, hlo.multiply: hlo.and_}


register_lowering(lax.scatter_p, _scatter_rule(None))
register_lowering(lax.scatter_add_p, _scatter_rule(hlo.add))
register_lowering(lax.scatter_sub_p, _scatter_rule(hlo.subtract))
register_lowering(lax.scatter_mul_p, _scatter_rule(hlo.multiply))
register_lowering(lax.scatter_min_p, _scatter_rule(hlo.minimum))
register_lowering(lax.scatter_max_p, _scatter_rule(hlo.maximum))
