"""Lowerings of `laminax_core/lax/_structural.py`, in the same order."""

from __future__ import annotations

from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import lax

from laminax_dispatch._lowering._core import lowering_for
from laminax_dispatch._mlir import aval_to_ir_type


@lowering_for(lax.broadcast_in_dim_p)
def _broadcast_in_dim_lower(ctx, x, shape, broadcast_dimensions, sharding):
    return hlo.broadcast_in_dim(aval_to_ir_type(ctx.avals_out[0]), x, list(broadcast_dimensions))


@lowering_for(lax.reshape_p)
def _reshape_lower(ctx, x, new_sizes, dimensions, sharding):
    if dimensions is not None:  # reshape of the operand transposed by `dimensions`
        x = hlo.transpose(x, list(dimensions))
    return hlo.reshape(aval_to_ir_type(ctx.avals_out[0]), x)


@lowering_for(lax.squeeze_p)
def _squeeze_lower(ctx, x, dimensions):
    return hlo.reshape(aval_to_ir_type(ctx.avals_out[0]), x)


@lowering_for(lax.transpose_p)
def _transpose_lower(ctx, x, permutation):
    return hlo.transpose(x, list(permutation))


@lowering_for(lax.slice_p)
def _slice_lower(ctx, x, start_indices, limit_indices, strides):
    strides = list(strides) if strides is not None else [1] * len(start_indices)
    return hlo.slice(x, list(start_indices), list(limit_indices), strides)


@lowering_for(lax.dynamic_slice_p)
def _dynamic_slice_lower(ctx, x, *indices, slice_sizes):
    # stablehlo.dynamic_slice clamps the start indices into range, as lax specifies
    return hlo.dynamic_slice(x, list(indices), list(slice_sizes))


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
    return hlo.pad(x, padding_value, list(low), list(high), list(interior))


@lowering_for(lax.iota_p)
def _iota_lower(ctx, dtype, shape, dimension, sharding):
    return hlo.iota(aval_to_ir_type(ctx.avals_out[0]), dimension)


@lowering_for(lax.rev_p)
def _rev_lower(ctx, x, dimensions):
    return hlo.reverse(x, list(dimensions))
