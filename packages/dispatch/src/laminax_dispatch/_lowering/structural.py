"""Lowerings of `laminax_core/lax/_structural.py`, `_joining.py` and `_slicing.py`."""

from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import lax

from laminax_dispatch._lowering import _dynamic
from laminax_dispatch._lowering._core import lowering_for
from laminax_dispatch._mlir import aval_to_ir_type


@lowering_for(lax.broadcast_in_dim_p)
def _broadcast_in_dim_lower(ctx, x, shape, broadcast_dimensions, sharding):
    return _dynamic.broadcast_in_dim(aval_to_ir_type(ctx.avals_out[0]), x, ctx.avals_out[0].shape,
                                     broadcast_dimensions)


@lowering_for(lax.reshape_p)
def _reshape_lower(ctx, x, new_sizes, dimensions, sharding):
    if dimensions is not None:  # reshape of the operand transposed by `dimensions`
        x = hlo.transpose(x, list(dimensions))
    return _dynamic.reshape(aval_to_ir_type(ctx.avals_out[0]), x, ctx.avals_out[0].shape)


@lowering_for(lax.squeeze_p)
def _squeeze_lower(ctx, x, dimensions):
    return _dynamic.reshape(aval_to_ir_type(ctx.avals_out[0]), x, ctx.avals_out[0].shape)


@lowering_for(lax.transpose_p)
def _transpose_lower(ctx, x, permutation):
    return hlo.transpose(x, list(permutation))


@lowering_for(lax.slice_p)
def _slice_lower(ctx, x, start_indices, limit_indices, strides):
    strides = list(strides) if strides is not None else [1] * len(start_indices)
    if not _dynamic.is_static((*start_indices, *limit_indices)):
        return hlo.real_dynamic_slice(
            aval_to_ir_type(ctx.avals_out[0]), x, _dynamic.shape_tensor(start_indices),
            _dynamic.shape_tensor(limit_indices), _dynamic.shape_tensor(strides))
    return hlo.slice(x, list(start_indices), list(limit_indices), strides)


@lowering_for(lax.dynamic_slice_p)
def _dynamic_slice_lower(ctx, x, *indices, slice_sizes):
    if not _dynamic.is_static(slice_sizes):
        return _dynamic_sized_slice(ctx, x, indices, slice_sizes)
    # stablehlo.dynamic_slice clamps the start indices into range, as lax specifies
    return hlo.dynamic_slice(x, list(indices), list(slice_sizes))


def _dynamic_sized_slice(ctx, x, indices, slice_sizes):
    """Symbolic slice sizes (as JAX): the starts clamped into [0, shape - sizes] by hand,
    then stablehlo.real_dynamic_slice."""
    elt = ir.RankedTensorType(_dynamic.shape_tensor([0]).type).element_type
    one = ir.RankedTensorType.get([1], elt)
    starts = [hlo.reshape(one, i if ir.RankedTensorType(i.type).element_type == elt
                          else hlo.convert(ir.RankedTensorType.get([], elt), i))
              for i in indices]
    starts = starts[0] if len(starts) == 1 else hlo.concatenate(starts, 0)
    sizes = _dynamic.shape_tensor(slice_sizes)
    room = hlo.subtract(_dynamic.shape_tensor(ctx.avals_in[0].shape), sizes)
    starts = hlo.clamp(_dynamic.shape_tensor([0] * len(slice_sizes)), starts, room)
    return hlo.real_dynamic_slice(aval_to_ir_type(ctx.avals_out[0]), x, starts,
                                  hlo.add(starts, sizes),
                                  _dynamic.shape_tensor([1] * len(slice_sizes)))


@lowering_for(lax.dynamic_update_slice_p)
def _dynamic_update_slice_lower(ctx, x, update, *indices):
    return hlo.dynamic_update_slice(x, update, list(indices))


@lowering_for(lax.concatenate_p)
def _concatenate_lower(ctx, *xs, dimension):
    return hlo.concatenate(list(xs), dimension)


@lowering_for(lax.split_p)
def _split_lower(ctx, x, sizes, axis):
    # one stablehlo.slice per piece along `axis`
    shape = ctx.avals_in[0].shape
    pieces, start = [], 0
    for size in sizes:
        starts = [start if d == axis else 0 for d in range(len(shape))]
        limits = [start + size if d == axis else n for d, n in enumerate(shape)]
        pieces.append(hlo.slice(x, starts, limits, [1] * len(shape)))
        start += size
    return pieces


@lowering_for(lax.pad_p)
def _pad_lower(ctx, x, padding_value, padding_config):
    low, high, interior = zip(*padding_config, strict=True) if padding_config else ((), (), ())
    if not _dynamic.is_static((*low, *high)):
        return hlo.dynamic_pad(aval_to_ir_type(ctx.avals_out[0]), x, padding_value,
                               _dynamic.shape_tensor(low), _dynamic.shape_tensor(high),
                               _dynamic.shape_tensor(interior))
    return hlo.pad(x, padding_value, list(low), list(high), list(interior))


@lowering_for(lax.iota_p)
def _iota_lower(ctx, dtype, shape, dimension, sharding):
    if not _dynamic.is_static(shape):
        return hlo.dynamic_iota(aval_to_ir_type(ctx.avals_out[0]), _dynamic.shape_tensor(shape),
                                dimension)
    return hlo.iota(aval_to_ir_type(ctx.avals_out[0]), dimension)


@lowering_for(lax.rev_p)
def _rev_lower(ctx, x, dimensions):
    return hlo.reverse(x, list(dimensions))


# ----- tile, stack, unstack (laminax primitives; the ops of JAX's compositions) ----------------


@lowering_for(lax.tile_p)
def _tile_lower(ctx, x, reps):
    # reshape to (1, d0, 1, d1, ...), broadcast to (r0, d0, r1, d1, ...), reshape to the result
    (aval,), (aval_out,) = ctx.avals_in, ctx.avals_out
    rank = max(len(reps), aval.ndim)
    shape = (1,) * (rank - aval.ndim) + aval.shape
    reps = (1,) * (rank - len(reps)) + tuple(reps)
    interleaved = tuple(n for d in shape for n in (1, d))
    x = _dynamic.reshape(aval_to_ir_type(aval.update(shape=interleaved)), x, interleaved)
    grown = tuple(n for r, d in zip(reps, shape, strict=True) for n in (r, d))
    x = _dynamic.broadcast_in_dim(
        aval_to_ir_type(aval.update(shape=grown)), x, grown, list(range(2 * rank))
    )
    return _dynamic.reshape(aval_to_ir_type(aval_out), x, aval_out.shape)


@lowering_for(lax.stack_p)
def _stack_lower(ctx, *xs, axis):
    # each operand gets a size-1 `axis` (broadcast_in_dim), then one concatenate
    pieces = []
    for x, aval in zip(xs, ctx.avals_in, strict=True):
        shape = aval.shape[:axis] + (1,) + aval.shape[axis:]
        dims = [d for d in range(len(shape)) if d != axis]
        pieces.append(_dynamic.broadcast_in_dim(aval_to_ir_type(aval.update(shape=shape)), x,
                                                shape, dims))
    return hlo.concatenate(pieces, axis)


@lowering_for(lax.unstack_p)
def _unstack_lower(ctx, x, axis):
    # one slice of width 1 along `axis` per result, reshaped to drop the axis
    (aval,) = ctx.avals_in
    outs = []
    for i, aval_out in enumerate(ctx.avals_out):
        starts = [i if d == axis else 0 for d in range(aval.ndim)]
        limits = [i + 1 if d == axis else n for d, n in enumerate(aval.shape)]
        piece = hlo.slice(x, starts, limits, [1] * aval.ndim)
        outs.append(hlo.reshape(aval_to_ir_type(aval_out), piece))
    return outs


@lowering_for(lax.dimension_value_p)
def _dimension_value_lower(ctx, *, dim):
    value = _dynamic.eval_dim(dim)
    want = aval_to_ir_type(ctx.avals_out[0])
    return value if value.type == want else hlo.convert(want, value)
