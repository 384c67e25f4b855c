"""Structural primitives that read or write a window of an array: slice, pad, dynamic_slice,
dynamic_update_slice, and the `*_in_dim` helpers. All are linear in their array operands."""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import _shape_poly, _trace, dtypes
from laminax_core._avals import ShapedArray, canonicalize_shape, get_aval
from laminax_core._sharding_rules import dynamic_update_slice_sharding, sliced_sharding
from laminax_core._interpreters.batching import batch_rules, bdim_at_front, move_bdim
from laminax_core._interpreters.jvp import Zero, instantiate_zeros, zeros_like_aval
from laminax_core._interpreters.transpose import is_undefined_primal as undefined
from laminax_core._primitive import define_primitive, linear
from laminax_core.lax import _hooks, _indexing
from laminax_core.lax._elementwise import add, convert_element_type, lt, select_n, sub
from laminax_core.lax._helpers import as_operands, checked_axis
from laminax_core.lax._joining import concatenate
from laminax_core.lax._structural import (
    broadcast,
    broadcast_in_dim,
    dimension_as_value,
    expand_dims,
    squeeze,
)

__all__ = [
    "dynamic_index_in_dim", "dynamic_slice", "dynamic_slice_in_dim", "dynamic_update_index_in_dim",
    "dynamic_update_slice", "dynamic_update_slice_in_dim", "index_in_dim", "pad", "slice",
    "slice_in_dim",
]  # fmt: skip
# the primitives, which lax exports beside their functions
__all__ += [
    "dynamic_slice_p", "dynamic_update_slice_p", "pad_p", "slice_p",
]  # fmt: skip


# ----- slice --------------------------------------------------------------------------------


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001 (JAX's name)
    """The static slice `operand[start:limit:stride, ...]`."""
    start = tuple(_shape_poly.dim_index(i) for i in start_indices)
    limit = tuple(_shape_poly.dim_index(i) for i in limit_indices)
    strides = None if strides is None else tuple(operator.index(s) for s in strides)
    return slice_p.bind(operand, start_indices=start, limit_indices=limit, strides=strides)


def _slice_abstract_eval(x, start_indices, limit_indices, strides):
    strides = strides or (1,) * x.ndim
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        raise TypeError(f"slice: start_indices {start_indices}, limit_indices {limit_indices} and "
                        f"strides must each have one entry per dimension of shape {x.shape}.")
    shape = []
    for size, lo, hi, step in zip(x.shape, start_indices, limit_indices, strides, strict=True):
        if not 0 <= lo <= hi <= size or step < 1:
            raise TypeError(f"slice: start_indices {start_indices} and limit_indices "
                            f"{limit_indices} must satisfy 0 <= start <= limit <= {x.shape}.")
        shape.append((hi - lo + step - 1) // step)
    shape = tuple(shape)
    return ShapedArray(shape, x.dtype, x.weak_type, sliced_sharding(x, shape, "slicing"))


def _slice_reference(x, start_indices, limit_indices, strides):
    strides = strides or (1,) * x.ndim
    index = tuple(
        np.s_[lo:hi:step] for lo, hi, step in zip(start_indices, limit_indices, strides, strict=True)
    )
    return x[index]


def _slice_transpose(ct, x, start_indices, limit_indices, strides):
    strides = strides or (1,) * x.aval.ndim
    out_shape = get_aval(ct).shape
    config = []
    for size, lo, step, n in zip(x.aval.shape, start_indices, strides, out_shape, strict=True):
        if n == 0:
            config.append((size, 0, 0))
        else:
            config.append((lo, size - (lo + (n - 1) * step + 1), step - 1))
    return [pad(ct, np.zeros((), get_aval(ct).dtype), tuple(config))]


def _slice_batch(axis_data, args, dims, start_indices, limit_indices, strides):
    x = move_bdim(args[0], dims[0], 0)
    strides = None if strides is None else (1, *strides)
    return slice(x, (0, *start_indices), (axis_data.size, *limit_indices), strides), 0


slice_p = define_primitive(
    "slice",
    abstract_eval=_slice_abstract_eval,
    reference=_slice_reference,
    jvp=linear,
    transpose=_slice_transpose,
    batch=_slice_batch,
)


# ----- dynamic_slice, dynamic_update_slice --------------------------------------------------


def _start_operand(i, size: int, allow_negative: bool):
    """One start index as a scalar integer operand; a negative one counts from the end of its
    dimension where `allow_negative` (statically for Python and NumPy integers, else staged)."""
    if isinstance(i, (int, np.integer)) and not isinstance(i, bool):
        dtype = get_aval(as_operands(i)[0]).dtype
        if dtypes.issubdtype(dtype, np.unsignedinteger):
            return i
        if i < 0 and not allow_negative:
            raise ValueError(f"Index {i} is out of bounds for dimension {size} with "
                             "allow_negative_indices=False; pass a non-negative index.")
        return np.asarray(i + size if i < 0 else i, dtype)
    (i,) = as_operands(i)
    aval = get_aval(i)
    if not dtypes.issubdtype(aval.dtype, np.integer) or aval.ndim != 0:
        raise TypeError(f"dynamic slice indices must be integer scalars, got {aval}.")
    if not allow_negative or dtypes.issubdtype(aval.dtype, np.unsignedinteger):
        return i
    if isinstance(size, _shape_poly.DimExpr):  # the dimension's value, computed
        return select_n(lt(i, 0), i, add(i, convert_element_type(
            dimension_as_value(size), aval.dtype)))
    end = np.asarray(size, aval.dtype)
    if isinstance(i, np.ndarray):  # a constant: the test is concrete, the sum is staged
        return select_n(np.less(i, 0), i, add(i, end))
    if isinstance(i, _trace.Tracer):  # `+` promotes a weakly typed index as JAX does
        return select_n(lt(i, 0), i, i + end)
    return select_n(lt(i, 0), i, add(i, end))


def _start_operands(shape, start_indices, allow_negative_indices, name: str) -> list:
    if len(start_indices) != len(shape):
        raise ValueError(f"{name}: an operand of shape {shape} needs {len(shape)} start "
                         f"indices, got {len(start_indices)}.")
    allow = allow_negative_indices
    allow = [allow] * len(shape) if isinstance(allow, bool) else list(allow)
    if len(allow) != len(shape):
        raise ValueError(f"{name}: allow_negative_indices needs one bool per dimension of "
                         f"{shape}, got {len(allow)}.")
    starts = [_start_operand(i, d, a) for i, d, a in zip(start_indices, shape, allow, strict=True)]
    kinds = [get_aval(as_operands(i)[0]).dtype for i in starts]
    if len(set(kinds)) > 1:  # StableHLO takes one index type; JAX checks it here too
        raise TypeError(f"index arguments to {name} must be integers of the same type, got: "
                        f"{', '.join(str(k) for k in kinds)}")
    return starts


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """`operand[start:start+size, ...]` with traced starts, clamped to stay in bounds.

    Args:
      operand: the array to slice.
      start_indices: one integer scalar per dimension (traced or not).
      slice_sizes: the static size of the slice in every dimension.
      allow_negative_indices: a bool, or one per dimension: whether a negative start counts
        from the end of its dimension (otherwise it is out of bounds and clamps to 0).

    Returns:
      The slice, of shape `slice_sizes`.

    Example:
      >>> dynamic_slice(np.arange(5, dtype=np.float32), (-2,), (2,))
      array([3., 4.], dtype=float32)
    """
    sizes = canonicalize_shape(slice_sizes, "dynamic_slice")
    shape = get_aval(operand).shape
    starts = _start_operands(shape, start_indices, allow_negative_indices, "dynamic_slice")
    return dynamic_slice_p.bind(operand, *starts, slice_sizes=sizes)


def _clamped_starts(shape, sizes, starts):
    return tuple(int(np.clip(s, 0, d - n)) for d, n, s in zip(shape, sizes, starts, strict=True))


def _dynamic_slice_abstract_eval(x, *indices, slice_sizes):
    if len(indices) != x.ndim or len(slice_sizes) != x.ndim:
        raise TypeError(f"dynamic_slice: an operand of shape {x.shape} needs {x.ndim} start "
                        f"indices and slice sizes, got {len(indices)} and {len(slice_sizes)}.")
    if any(not 0 <= n <= d for n, d in zip(slice_sizes, x.shape, strict=True)):
        raise TypeError(f"dynamic_slice: slice_sizes {slice_sizes} exceed the operand shape "
                        f"{x.shape}.")
    return ShapedArray(slice_sizes, x.dtype, x.weak_type,
                       sliced_sharding(x, tuple(slice_sizes), "dynamic_slice"))


def _dynamic_slice_reference(x, *indices, slice_sizes):
    starts = _clamped_starts(x.shape, slice_sizes, indices)
    return x[tuple(np.s_[s:s + n] for s, n in zip(starts, slice_sizes, strict=True))]


def _dynamic_slice_jvp(primals, tangents, slice_sizes):
    x, *indices = primals
    ans = dynamic_slice_p.bind(x, *indices, slice_sizes=slice_sizes)
    if isinstance(tangents[0], Zero):
        return ans, Zero.from_primal_value(ans)
    return ans, dynamic_slice_p.bind(tangents[0], *indices, slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct, x, *indices, slice_sizes):
    zeros = zeros_like_aval(x.aval)
    return [dynamic_update_slice_p.bind(zeros, ct, *indices)] + [None] * len(indices)


def _batched_start_vector(size: int, starts, dims):
    """The scalar start indices of a batched dynamic slice as one index vector: `(size, n)`
    with its batch dimension first if any start is batched (then 0), else `(n,)` (None)."""
    if not any(d is not None for d in dims):
        return concatenate([broadcast(i, (1,)) for i in starts], 0), None
    columns = [broadcast_in_dim(i, (size, 1), () if d is None else (0,))
               for i, d in zip(starts, dims, strict=True)]
    return concatenate(columns, 1), 0


def _dynamic_slice_batch(axis_data, args, dims, slice_sizes):
    # a dynamic slice is a gather of one window: batch it as that gather (as JAX does)
    everything = tuple(range(len(slice_sizes)))
    dnums = _indexing.GatherDimensionNumbers(offset_dims=everything, collapsed_slice_dims=(),
                                             start_index_map=everything)
    index, index_dim = _batched_start_vector(axis_data.size, args[1:], dims[1:])
    return batch_rules[_indexing.gather_p](
        axis_data, [args[0], index], [dims[0], index_dim], dimension_numbers=dnums,
        slice_sizes=slice_sizes, unique_indices=True, indices_are_sorted=True,
        mode=_indexing.GatherScatterMode.CLIP, fill_value=None)


dynamic_slice_p = define_primitive(
    "dynamic_slice",
    abstract_eval=_dynamic_slice_abstract_eval,
    reference=_dynamic_slice_reference,
    jvp=_dynamic_slice_jvp,
    transpose=_dynamic_slice_transpose,
    batch=_dynamic_slice_batch,
)


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """`operand` with `update` written at traced `start_indices` (clamped to stay in bounds).

    Args:
      operand: the array to update.
      update: the values to write, of the operand's rank and dtype.
      start_indices: one integer scalar per dimension (traced or not).
      allow_negative_indices: a bool, or one per dimension: whether a negative start counts
        from the end of its dimension.

    Returns:
      The updated copy of `operand`.

    Example:
      >>> dynamic_update_slice(np.zeros(4, np.float32), np.ones(2, np.float32), (-2,))
      array([0., 0., 1., 1.], dtype=float32)
    """
    (update,) = as_operands(update)
    shape = get_aval(operand).shape
    starts = _start_operands(shape, start_indices, allow_negative_indices,
                             "dynamic_update_slice")
    return dynamic_update_slice_p.bind(operand, update, *starts)


def _dynamic_update_slice_abstract_eval(x, update, *indices):
    if update.ndim != x.ndim or len(indices) != x.ndim:
        raise TypeError(f"dynamic_update_slice: operand {x.shape}, update {update.shape} and "
                        f"{len(indices)} indices must have the same rank.")
    if any(u > d for u, d in zip(update.shape, x.shape, strict=True)):
        raise TypeError(f"dynamic_update_slice: update shape {update.shape} exceeds the operand "
                        f"shape {x.shape}.")
    if update.dtype != x.dtype:
        raise TypeError(f"dynamic_update_slice: update dtype {update.dtype.name} differs from "
                        f"the operand dtype {x.dtype.name}.")
    return ShapedArray(x.shape, x.dtype, x.weak_type, dynamic_update_slice_sharding(x, update))


def _dynamic_update_slice_reference(x, update, *indices):
    starts = _clamped_starts(x.shape, update.shape, indices)
    out = np.array(x)
    out[tuple(np.s_[s:s + n] for s, n in zip(starts, update.shape, strict=True))] = update
    return out


def _dynamic_update_slice_jvp(primals, tangents):
    x, update, *indices = primals
    ans = dynamic_update_slice_p.bind(x, update, *indices)
    if isinstance(tangents[0], Zero) and isinstance(tangents[1], Zero):
        return ans, Zero.from_primal_value(ans)
    t_x, t_update = instantiate_zeros(tangents[0]), instantiate_zeros(tangents[1])
    return ans, dynamic_update_slice_p.bind(t_x, t_update, *indices)


def _dynamic_update_slice_transpose(ct, x, update, *indices):
    update_aval = update.aval if undefined(update) else get_aval(update)
    ct_x = ct_update = None
    if undefined(x):
        ct_x = dynamic_update_slice_p.bind(ct, zeros_like_aval(update_aval), *indices)
    if undefined(update):
        ct_update = dynamic_slice_p.bind(ct, *indices, slice_sizes=update_aval.shape)
    return [ct_x, ct_update] + [None] * len(indices)


def _dynamic_update_slice_batch(axis_data, args, dims):
    # a dynamic update slice is a scatter of one window: batch it as that scatter (as JAX does)
    x, update, *starts = args
    everything = tuple(range(len(starts)))
    dnums = _indexing.ScatterDimensionNumbers(
        update_window_dims=everything, inserted_window_dims=(),
        scatter_dims_to_operand_dims=everything)
    index, index_dim = _batched_start_vector(axis_data.size, starts, dims[2:])
    return batch_rules[_indexing.scatter_p](
        axis_data, [x, index, update], [dims[0], index_dim, dims[1]], dimension_numbers=dnums,
        indices_are_sorted=True, unique_indices=True, mode=_indexing.GatherScatterMode.CLIP,
        update_jaxpr=None, update_consts=())


dynamic_update_slice_p = define_primitive(
    "dynamic_update_slice",
    abstract_eval=_dynamic_update_slice_abstract_eval,
    reference=_dynamic_update_slice_reference,
    jvp=_dynamic_update_slice_jvp,
    transpose=_dynamic_update_slice_transpose,
    batch=_dynamic_update_slice_batch,
)


# ----- pad ----------------------------------------------------------------------------------


def pad(operand, padding_value, padding_config):
    """Pads `operand` with `padding_value`: `(low, high, interior)` per dimension (low and
    high may be negative, which crops)."""
    operand, padding_value = as_operands(operand, padding_value)
    # low and high may be dimension expressions (shape polymorphism), as in JAX
    config = tuple((_shape_poly.dim_index(lo), _shape_poly.dim_index(hi), operator.index(i))
                   for lo, hi, i in padding_config)
    return pad_p.bind(operand, padding_value, padding_config=config)


def _pad_abstract_eval(x, padding_value, padding_config):
    # JAX's types: a shape problem is a ValueError, a dtype one a TypeError
    if padding_value.ndim != 0:
        raise ValueError(f"pad: padding_value must be a scalar, got "
                         f"{padding_value.str_short()}.")
    if padding_value.dtype != x.dtype:
        raise TypeError(f"pad: padding_value must be a scalar of the operand's dtype "
                        f"{x.dtype.name}, got {padding_value.str_short()}.")
    if len(padding_config) != x.ndim:
        raise ValueError(f"pad: padding_config {padding_config} needs one (low, high, "
                         f"interior) per dimension of shape {x.shape}.")
    if any(i < 0 for _, _, i in padding_config):
        raise ValueError(f"pad: interior padding in padding_config must be nonnegative, got "
                         f"{padding_config}.")
    shape = tuple(lo + hi + d + max(d - 1, 0) * i
                  for d, (lo, hi, i) in zip(x.shape, padding_config, strict=True))
    if any(s < 0 for s in shape):
        raise ValueError(f"pad: padding_config {padding_config} gives a negative dimension "
                         f"{shape} for an operand of shape {x.shape}.")
    return ShapedArray(shape, x.dtype, x.weak_type, sliced_sharding(x, shape, "padding"))


def _pad_reference(x, padding_value, padding_config):
    grown = [max(lo, 0) + max(hi, 0) + d + max(d - 1, 0) * i
             for d, (lo, hi, i) in zip(x.shape, padding_config, strict=True)]
    out = np.full(grown, padding_value, dtype=x.dtype)
    inner = tuple(np.s_[max(lo, 0):max(lo, 0) + d + max(d - 1, 0) * i:i + 1]
                  for d, (lo, _, i) in zip(x.shape, padding_config, strict=True))
    out[inner] = x
    crop = tuple(np.s_[max(-lo, 0):g - max(-hi, 0)]
                 for g, (lo, hi, _) in zip(grown, padding_config, strict=True))
    return out[crop]


def _pad_transpose(ct, x, padding_value, padding_config):
    zero = np.zeros((), get_aval(ct).dtype)
    unpadded = pad(ct, zero, tuple((-lo, -hi, 0) for lo, hi, _ in padding_config))
    ndim = get_aval(ct).ndim
    ct_x = slice(unpadded, (0,) * ndim, get_aval(unpadded).shape,
                 tuple(i + 1 for _, _, i in padding_config))
    ct_value = None
    if undefined(padding_value):
        all_axes = tuple(range(ndim))
        ct_value = sub(_hooks.reduce_sum(ct, all_axes), _hooks.reduce_sum(ct_x, all_axes))
    return [ct_x if undefined(x) else None, ct_value]


def _pad_batch(axis_data, args, dims, padding_config):
    x = bdim_at_front(args[0], dims[0], axis_data.size)
    config = ((0, 0, 0), *padding_config)
    if dims[1] is None:
        return pad(x, args[1], config), 0
    # a batched padding value: pad with zeros, then select it where the mask says "padding"
    aval = get_aval(x)
    mask = pad(np.zeros(aval.shape, np.bool_), True, config)
    value = broadcast_in_dim(move_bdim(args[1], dims[1], 0), get_aval(mask).shape, (0,))
    return select_n(mask, pad(x, np.zeros((), aval.dtype), config), value), 0


pad_p = define_primitive(
    "pad",
    abstract_eval=_pad_abstract_eval,
    reference=_pad_reference,
    jvp=linear,
    transpose=_pad_transpose,
    batch=_pad_batch,
)


# ----- slice_in_dim, index_in_dim and their dynamic forms ------------------------------------


def slice_in_dim(operand, start_index, limit_index, stride: int = 1, axis: int = 0):
    """`operand[start:limit:stride]` along `axis` (None bounds mean the ends)."""
    shape = get_aval(operand).shape
    axis = checked_axis(axis, len(shape), "slice_in_dim")
    start = 0 if start_index is None else operator.index(start_index)
    limit = shape[axis] if limit_index is None else operator.index(limit_index)
    start, limit = (v + shape[axis] if v < 0 else v for v in (start, limit))
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    return slice(operand, starts, limits, strides)


def index_in_dim(operand, index, axis: int = 0, keepdims: bool = True):
    """The static `index` along `axis` (kept as a size-1 dimension if `keepdims`)."""
    shape = get_aval(operand).shape
    axis = checked_axis(axis, len(shape), "index_in_dim")
    index = operator.index(index)
    if not -shape[axis] <= index < shape[axis]:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size "
                         f"{shape[axis]}")
    index %= shape[axis]
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def _in_dim_starts(ndim: int, start_index, axis: int, allow_negative_indices: bool):
    # zeros (of the index's dtype) on the other dimensions, which never count from the end
    zero = get_aval(as_operands(start_index)[0]).dtype.type(0)
    starts = [zero] * ndim
    starts[axis] = start_index
    allow = [False] * ndim
    allow[axis] = allow_negative_indices
    return starts, allow


def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True):
    """`dynamic_slice` along one `axis` (start 0 on the others).

    Example:
      >>> dynamic_slice_in_dim(np.arange(6, dtype=np.float32).reshape(2, 3), 1, 2, axis=1)
      array([[1., 2.],
             [4., 5.]], dtype=float32)
    """
    shape = get_aval(operand).shape
    axis = checked_axis(axis, len(shape), "dynamic_slice_in_dim")
    starts, allow = _in_dim_starts(len(shape), start_index, axis, allow_negative_indices)
    sizes = list(shape)
    sizes[axis] = slice_size
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True):
    """The traced `index` along `axis` (kept as a size-1 dimension if `keepdims`).

    Example:
      >>> dynamic_index_in_dim(np.arange(3, dtype=np.float32), -1, keepdims=False)
      array(2., dtype=float32)
    """
    axis = checked_axis(axis, get_aval(operand).ndim, "dynamic_index_in_dim")
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis: int, *,
                                allow_negative_indices: bool = True):
    """`dynamic_update_slice` with the start given along one `axis` only.

    Example:
      >>> dynamic_update_slice_in_dim(np.zeros(3, np.float32), np.ones(1, np.float32), 1, 0)
      array([0., 1., 0.], dtype=float32)
    """
    ndim = get_aval(operand).ndim
    axis = checked_axis(axis, ndim, "dynamic_update_slice_in_dim")
    starts, allow = _in_dim_starts(ndim, start_index, axis, allow_negative_indices)
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def dynamic_update_index_in_dim(operand, update, index, axis: int, *,
                                allow_negative_indices: bool = True):
    """Writes `update` (without, or with a size-1, `axis` dimension) at `index` along `axis`.

    Example:
      >>> dynamic_update_index_in_dim(np.zeros(3, np.float32), np.float32(1), -1, 0)
      array([0., 0., 1.], dtype=float32)
    """
    ndim = get_aval(operand).ndim
    axis = checked_axis(axis, ndim, "dynamic_update_index_in_dim")
    if get_aval(update).ndim == ndim - 1:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)
