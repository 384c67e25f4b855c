"""gather and the scatter family (scatter, scatter-add, scatter-mul, scatter-min, scatter-max),
with XLA's dimension numbers (`GatherDimensionNumbers`, `ScatterDimensionNumbers`) and JAX's
out-of-bounds modes (`GatherScatterMode`).

Indices always carry the index vector in their last dimension, as in JAX. Batching uses the
operand/indices batching dimensions of the dimension numbers, so a vmapped gather is one gather.
"""

from __future__ import annotations

import enum
import operator
from typing import NamedTuple

import numpy as np

from laminax_core import _shape_poly, dtypes
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters.batching import bdim_at_front
from laminax_core._interpreters.jvp import Zero, instantiate_zeros, zeros_like_aval
from laminax_core._interpreters.partial_eval import trace_to_jaxpr
from laminax_core._interpreters.transpose import is_undefined_primal as undefined
from laminax_core._sharding_rules import gather_sharding
from laminax_core._primitive import NOT_LINEAR, define_primitive
from laminax_core.lax import _elementwise
from laminax_core.lax._elementwise import (
    add,
    convert_element_type,
    div,
    eq,
    mul,
    neg,
    select_n,
    sub,
)
from laminax_core.lax._structural import broadcast_in_dim, broadcasted_iota, reshape

__all__ = [
    "GatherDimensionNumbers", "GatherScatterMode", "ScatterDimensionNumbers", "gather",
    "scatter", "scatter_add", "scatter_max", "scatter_min", "scatter_mul", "scatter_sub",
    "default_fill_value",
]  # fmt: skip
# the primitives, which lax exports beside their functions
__all__ += [
    "gather_p", "scatter_add_p", "scatter_max_p", "scatter_min_p", "scatter_mul_p", "scatter_p",
    "scatter_sub_p",
]  # fmt: skip


class GatherDimensionNumbers(NamedTuple):
    """How `gather` maps indices to operand slices (XLA's dimension numbers).

    Attributes:
      offset_dims: output dimensions that index into a slice (sorted).
      collapsed_slice_dims: operand dimensions of slice size 1 dropped from the output.
      start_index_map: the operand dimension each entry of an index vector starts.
      operand_batching_dims: operand dimensions matched one-to-one with indices dimensions.
      start_indices_batching_dims: the matching dimensions of the indices.
    """

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter maps indices and updates into the operand (XLA's dimension numbers).

    Attributes:
      update_window_dims: update dimensions that index into a window (sorted).
      inserted_window_dims: operand dimensions of window size 1 absent from the updates.
      scatter_dims_to_operand_dims: the operand dimension each index vector entry starts.
      operand_batching_dims: operand dimensions matched one-to-one with indices dimensions.
      scatter_indices_batching_dims: the matching dimensions of the indices.
    """

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


class GatherScatterMode(enum.Enum):
    """What gather and scatter do with out-of-bounds indices.

    CLIP clamps indices into bounds; FILL_OR_DROP returns `fill_value` for out-of-bounds gather
    slices and drops out-of-bounds scatter updates; PROMISE_IN_BOUNDS lets the backend assume
    the indices are in bounds (laminax's reference clamps gathers and drops scatters).
    """

    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3
    ONE_HOT = 4

    @staticmethod
    def from_any(s) -> GatherScatterMode:
        """The mode named by `s` ('clip', 'fill', 'drop', 'promise_in_bounds', a mode, None)."""
        if isinstance(s, GatherScatterMode):
            return s
        names = {"clip": GatherScatterMode.CLIP, None: GatherScatterMode.FILL_OR_DROP,
                 "fill": GatherScatterMode.FILL_OR_DROP, "drop": GatherScatterMode.FILL_OR_DROP,
                 "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS,
                 "one_hot": GatherScatterMode.ONE_HOT}
        if s not in names:
            raise ValueError(f"Unknown gather mode {s!r}; use 'clip', 'fill', 'drop' or "
                             "'promise_in_bounds'.")
        return names[s]


def _ints(values) -> tuple[int, ...]:
    return tuple(operator.index(v) for v in values)


# ----- the shared index arithmetic of the references --------------------------------------


def _full_starts(indices, operand_shape, index_map, operand_batching, indices_batching):
    """Per batch position, the start of its window in every operand dimension: `(N, ndim)`."""
    batch_shape = indices.shape[:-1]
    flat = indices.reshape(-1, indices.shape[-1]).astype(np.int64)
    starts = np.zeros((flat.shape[0], len(operand_shape)), np.int64)
    for k, d in enumerate(index_map):
        starts[:, d] = flat[:, k]
    coords = np.indices(batch_shape).reshape(len(batch_shape), -1) if batch_shape else None
    for od, idim in zip(operand_batching, indices_batching, strict=True):
        starts[:, od] = coords[idim]
    return starts


def _window_offsets(window):
    return np.indices(window).reshape(len(window), -1).T.astype(np.int64)  # (W, ndim)


def default_fill_value(dtype):
    """What an out-of-bounds gather reads in "fill" mode when no `fill_value` is given.

    NaN for inexact types, the minimum for signed integers, the maximum for unsigned ones and
    True for booleans. Shared by `lax.gather`, `jnp`'s `.at[].get`/`take` and dispatch's lowering.
    """
    if dtypes.issubdtype(dtype, dtypes.extended):
        return None  # typed keys: gathered from their data, which has its own default
    dtype = np.dtype(dtype)
    if dtypes.issubdtype(dtype, np.inexact):
        return np.nan
    if dtype == np.bool_:
        return True
    if dtypes.issubdtype(dtype, np.signedinteger):
        return dtypes.iinfo(dtype).min
    return dtypes.iinfo(dtype).max


# ----- gather -------------------------------------------------------------------------------


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """Gathers slices of `operand` at `start_indices` (XLA's Gather).

    Args:
      operand: the array to slice.
      start_indices: integer array whose last dimension holds the index vectors.
      dimension_numbers: a `GatherDimensionNumbers`.
      slice_sizes: the slice size in every operand dimension.
      unique_indices, indices_are_sorted: promises the backend may use.
      mode: a `GatherScatterMode` or its name (default: PROMISE_IN_BOUNDS, as in JAX).
      fill_value: the fill for FILL_OR_DROP (default NaN, or the dtype's extreme integer).

    Returns:
      The gathered array.

    Example:
      >>> dn = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
      ...                             start_index_map=(0,))
      >>> gather(np.arange(6.0).reshape(3, 2), np.array([[2], [0]]), dn, (1, 2))
      array([[4., 5.],
             [0., 1.]], dtype=float32)
    """
    dnums = GatherDimensionNumbers(*(_ints(f) for f in dimension_numbers))
    return gather_p.bind(operand, start_indices, dimension_numbers=dnums,
                         slice_sizes=tuple(_shape_poly.dim_index(d) for d in slice_sizes),
                         indices_are_sorted=bool(indices_are_sorted),
                         unique_indices=bool(unique_indices), mode=_gather_mode(mode),
                         fill_value=fill_value)


def _gather_mode(mode) -> GatherScatterMode:
    # as in JAX, a gather without a mode promises in-bounds indices (the reference clamps)
    return GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else GatherScatterMode.from_any(
        mode)


def _gather_abstract_eval(x, idx, dimension_numbers, slice_sizes, indices_are_sorted,
                          unique_indices, mode, fill_value):
    dn = dimension_numbers
    if mode == GatherScatterMode.ONE_HOT:
        raise ValueError("gather does not support mode ONE_HOT (scatter-add does); use 'clip', "
                         "'fill' or 'promise_in_bounds'.")
    if not dtypes.issubdtype(idx.dtype, np.integer) or idx.ndim < 1:
        raise TypeError(f"gather: start_indices must be an integer array of rank >= 1 (the index "
                        f"vectors in the last dimension), got {idx.str_short()}.")
    if len(slice_sizes) != x.ndim:
        raise TypeError(f"gather: slice_sizes {slice_sizes} must have one entry per dimension of "
                        f"the operand {x.str_short()}.")
    if len(dn.start_index_map) != idx.shape[-1]:
        raise TypeError(f"gather: start_index_map {dn.start_index_map} must have one entry per "
                        f"index vector entry; start_indices {idx.str_short()} has {idx.shape[-1]}.")
    for size, dim in zip(slice_sizes, x.shape, strict=True):
        if not 0 <= size <= dim:
            raise TypeError(f"gather: slice_sizes {slice_sizes} must lie within the operand "
                            f"shape {x.shape}.")
    for d in (*dn.collapsed_slice_dims, *dn.operand_batching_dims):
        if not 0 <= d < x.ndim or slice_sizes[d] > 1:
            raise TypeError(f"gather: collapsed and batching dimensions must be operand "
                            f"dimensions of slice size <= 1; got {dn} with slice_sizes "
                            f"{slice_sizes}.")
    offset_sizes = [s for d, s in enumerate(slice_sizes)
                    if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    rank = idx.ndim - 1 + len(offset_sizes)
    if len(dn.offset_dims) != len(offset_sizes) or list(dn.offset_dims) != sorted(
            dn.offset_dims) or any(not 0 <= d < rank for d in dn.offset_dims):
        raise TypeError(f"gather: offset_dims {dn.offset_dims} must be sorted output dimensions, "
                        f"one per slice dimension that is not collapsed ({len(offset_sizes)}).")
    batch = iter(idx.shape[:-1])
    offsets = iter(offset_sizes)
    shape = tuple(next(offsets) if d in dn.offset_dims else next(batch) for d in range(rank))
    return ShapedArray(shape, x.dtype, x.weak_type,
                       gather_sharding(x, idx, dn, slice_sizes, shape, x.dtype))


def _gather_reference(x, idx, dimension_numbers, slice_sizes, indices_are_sorted,
                      unique_indices, mode, fill_value):
    dn = dimension_numbers
    starts = _full_starts(idx, x.shape, dn.start_index_map, dn.operand_batching_dims,
                          dn.start_indices_batching_dims)
    limit = np.asarray(x.shape) - np.asarray(slice_sizes)
    in_bounds = np.all((starts >= 0) & (starts <= limit), axis=1)
    starts = np.clip(starts, 0, limit)
    where = starts[:, None, :] + _window_offsets(slice_sizes)[None]
    values = x[tuple(np.moveaxis(where, -1, 0))] if x.size else np.zeros(where.shape[:2], x.dtype)
    if mode == GatherScatterMode.FILL_OR_DROP:
        fill = default_fill_value(x.dtype) if fill_value is None else fill_value
        values = np.where(in_bounds[:, None], values, np.asarray(fill).astype(x.dtype))
    values = values.reshape(idx.shape[:-1] + tuple(slice_sizes))
    batch_rank = idx.ndim - 1
    dropped = [batch_rank + d for d in (*dn.collapsed_slice_dims, *dn.operand_batching_dims)]
    values = values.reshape([s for i, s in enumerate(values.shape) if i not in dropped])
    rank = values.ndim
    batch_positions = [d for d in range(rank) if d not in dn.offset_dims]
    source = {p: i for i, p in enumerate(batch_positions)}
    source.update({p: batch_rank + i for i, p in enumerate(dn.offset_dims)})
    return np.transpose(values, [source[p] for p in range(rank)]).astype(x.dtype)


def _gather_jvp(primals, tangents, **params):
    x, idx = primals
    ans = gather_p.bind(x, idx, **params)
    if isinstance(tangents[0], Zero):
        return ans, Zero.from_primal_value(ans)
    return ans, gather_p.bind(tangents[0], idx, **{**params, "fill_value": 0})


def _gather_to_scatter_dnums(dn: GatherDimensionNumbers) -> ScatterDimensionNumbers:
    return ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims, inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims)


def _gather_transpose(ct, x, idx, dimension_numbers, slice_sizes, indices_are_sorted,
                      unique_indices, mode, fill_value):
    if isinstance(ct, Zero):
        return [None, None]
    zeros = zeros_like_aval(x.aval)
    out = scatter_add(zeros, idx, ct, _gather_to_scatter_dnums(dimension_numbers),
                      indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                      mode=mode)
    return [out, None]


def _shift(dims) -> tuple[int, ...]:
    return tuple(d + 1 for d in dims)


def _gather_batch(axis_data, args, dims, dimension_numbers, slice_sizes, **params):
    x, idx = args
    dn = dimension_numbers
    if dims[1] is None:  # only the operand: the whole batch dimension is one more window dim
        x = bdim_at_front(x, dims[0], axis_data.size)
        new = GatherDimensionNumbers(
            offset_dims=(0, *_shift(dn.offset_dims)),
            collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
            start_index_map=_shift(dn.start_index_map),
            operand_batching_dims=_shift(dn.operand_batching_dims),
            start_indices_batching_dims=dn.start_indices_batching_dims)
        return gather_p.bind(x, idx, dimension_numbers=new,
                             slice_sizes=(get_aval(x).shape[0], *slice_sizes), **params), 0
    idx = bdim_at_front(idx, dims[1], axis_data.size)
    if dims[0] is None:  # only the indices: one more batch dimension (no longer sorted/unique)
        new = dn._replace(offset_dims=_shift(dn.offset_dims),
                          start_indices_batching_dims=_shift(dn.start_indices_batching_dims))
        params.update(indices_are_sorted=False, unique_indices=False)
        return gather_p.bind(x, idx, dimension_numbers=new, slice_sizes=slice_sizes,
                             **params), 0
    x = bdim_at_front(x, dims[0], axis_data.size)
    new = GatherDimensionNumbers(
        offset_dims=_shift(dn.offset_dims), collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
        start_index_map=_shift(dn.start_index_map),
        operand_batching_dims=(0, *_shift(dn.operand_batching_dims)),
        start_indices_batching_dims=(0, *_shift(dn.start_indices_batching_dims)))
    size = min(get_aval(x).shape[0], 1)
    return gather_p.bind(x, idx, dimension_numbers=new, slice_sizes=(size, *slice_sizes),
                         **params), 0


gather_p = define_primitive(
    "gather",
    abstract_eval=_gather_abstract_eval,
    reference=_gather_reference,
    jvp=_gather_jvp,
    transpose=_gather_transpose,
    batch=_gather_batch,
)


# ----- the scatter family -------------------------------------------------------------------

_COMBINERS = {"scatter": None, "scatter-add": np.add, "scatter-sub": np.subtract,
              "scatter-mul": np.multiply, "scatter-min": np.minimum, "scatter-max": np.maximum}
_update_jaxprs: dict = {}


def _update_jaxpr(name: str, dtype):
    """The scalar combiner jaxpr JAX stores in a scatter's params (None for plain scatter)."""
    combine = {"scatter-add": add, "scatter-sub": sub, "scatter-mul": mul,
               "scatter-min": _elementwise.min, "scatter-max": _elementwise.max}.get(name)
    if combine is None:
        return None
    key = (name, np.dtype(dtype))
    if key not in _update_jaxprs:
        scalar = ShapedArray((), dtype)
        closed, _ = trace_to_jaxpr(lambda a, b: [combine(a, b)], [scalar, scalar],
                                   transformation=name)
        _update_jaxprs[key] = closed.jaxpr
    return _update_jaxprs[key]


def _scatter_bind(primitive, operand, indices, updates, dimension_numbers, *,
                  indices_are_sorted=False, unique_indices=False, mode=None):
    dnums = ScatterDimensionNumbers(*(_ints(f) for f in dimension_numbers))
    return primitive.bind(
        operand, indices, updates, dimension_numbers=dnums,
        indices_are_sorted=bool(indices_are_sorted), unique_indices=bool(unique_indices),
        mode=GatherScatterMode.from_any(mode),
        update_jaxpr=_update_jaxpr(primitive.name, get_aval(operand).dtype), update_consts=())


def _scatter_abstract_eval(name):
    def rule(x, idx, upd, dimension_numbers, **_):
        dn = dimension_numbers
        if not dtypes.issubdtype(idx.dtype, np.integer) or idx.ndim < 1:
            raise TypeError(f"{name}: indices must be an integer array of rank >= 1 (the index "
                            f"vectors in the last dimension), got {idx.str_short()}.")
        if upd.dtype != x.dtype:
            raise TypeError(f"{name}: updates dtype {upd.dtype.name} must equal the operand "
                            f"dtype {x.dtype.name}.")
        if len(dn.scatter_dims_to_operand_dims) != idx.shape[-1]:
            raise TypeError(f"{name}: scatter_dims_to_operand_dims "
                            f"{dn.scatter_dims_to_operand_dims} must have one entry per index "
                            f"vector entry; indices {idx.str_short()} have {idx.shape[-1]}.")
        window_rank = x.ndim - len(dn.inserted_window_dims) - len(dn.operand_batching_dims)
        if len(dn.update_window_dims) != window_rank or upd.ndim != idx.ndim - 1 + window_rank:
            raise TypeError(f"{name}: updates {upd.str_short()} must have {window_rank} window "
                            f"dimensions (update_window_dims {dn.update_window_dims}) plus the "
                            f"{idx.ndim - 1} batch dimensions of indices {idx.str_short()}.")
        scatter_sizes = [s for d, s in enumerate(upd.shape) if d not in dn.update_window_dims]
        if scatter_sizes != list(idx.shape[:-1]):
            raise TypeError(f"{name}: the scatter dimensions of updates {upd.str_short()} must "
                            f"match the batch dimensions of indices {idx.str_short()}.")
        window_dims = [d for d in range(x.ndim)
                       if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
        for d, u in zip(window_dims, dn.update_window_dims, strict=True):
            if upd.shape[u] > x.shape[d]:
                raise TypeError(f"{name}: update window {upd.shape} exceeds the operand shape "
                                f"{x.shape} in operand dimension {d}.")
        return ShapedArray(x.shape, x.dtype, x.weak_type, x.sharding)

    return rule


def _scatter_targets(x_shape, idx, upd, dn, mode):
    """Flat operand positions and flat update positions of every in-bounds update element."""
    starts = _full_starts(idx, x_shape, dn.scatter_dims_to_operand_dims, dn.operand_batching_dims,
                          dn.scatter_indices_batching_dims)
    window_dims = [d for d in range(len(x_shape))
                   if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    window = [1] * len(x_shape)
    for d, u in zip(window_dims, dn.update_window_dims, strict=True):
        window[d] = upd.shape[u]
    limit = np.asarray(x_shape) - np.asarray(window)
    if mode == GatherScatterMode.CLIP:
        starts = np.clip(starts, 0, limit)
    in_bounds = np.all((starts >= 0) & (starts <= limit), axis=1)
    where = starts[:, None, :] + _window_offsets(window)[None]  # (N, W, ndim)
    # update elements in the same (batch, window) order: scatter dims first, then the window
    scatter_dims = [d for d in range(upd.ndim) if d not in dn.update_window_dims]
    ordered = np.transpose(upd, (*scatter_dims, *dn.update_window_dims)).reshape(
        where.shape[0], -1)
    keep = np.broadcast_to(in_bounds[:, None], where.shape[:2])
    flat_targets = np.ravel_multi_index(tuple(np.moveaxis(where[keep], -1, 0)), x_shape) if (
        keep.any()) else np.zeros(0, np.int64)
    return flat_targets, ordered[keep]


def _scatter_reference(name):
    combine = _COMBINERS[name]

    def reference(x, idx, upd, dimension_numbers, mode, **_):
        out = np.array(x).reshape(-1)
        targets, values = _scatter_targets(x.shape, idx, upd, dimension_numbers, mode)
        if combine is None:
            out[targets] = values
        else:
            combine.at(out, targets, values)
        return out.reshape(x.shape)

    return reference


def _scatter_batch(primitive_of):
    """The batching rule of the scatter `primitive_of()` (a thunk: the block defines it)."""

    def rule(axis_data, args, dims, dimension_numbers, **params):
        x, idx, upd = args
        x = bdim_at_front(x, dims[0], axis_data.size)
        upd = bdim_at_front(upd, dims[2], axis_data.size)
        dn = dimension_numbers
        if dims[1] is None:  # shared indices: the batch dimension is one more window dim
            new = ScatterDimensionNumbers(
                update_window_dims=(0, *_shift(dn.update_window_dims)),
                inserted_window_dims=_shift(dn.inserted_window_dims),
                scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
                operand_batching_dims=_shift(dn.operand_batching_dims),
                scatter_indices_batching_dims=dn.scatter_indices_batching_dims)
            return primitive_of().bind(x, idx, upd, dimension_numbers=new, **params), 0
        idx = bdim_at_front(idx, dims[1], axis_data.size)
        new = ScatterDimensionNumbers(
            update_window_dims=_shift(dn.update_window_dims),
            inserted_window_dims=_shift(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=(0, *_shift(dn.operand_batching_dims)),
            scatter_indices_batching_dims=(0, *_shift(dn.scatter_indices_batching_dims)))
        return primitive_of().bind(x, idx, upd, dimension_numbers=new, **params), 0

    return rule


def _scatter_to_gather(dn: ScatterDimensionNumbers, x_shape, upd_shape, mode):
    window_dims = [d for d in range(len(x_shape))
                   if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    sizes = [1] * len(x_shape)
    for d, u in zip(window_dims, dn.update_window_dims, strict=True):
        sizes[d] = upd_shape[u]
    gdn = GatherDimensionNumbers(
        offset_dims=dn.update_window_dims, collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims)
    return dict(dimension_numbers=gdn, slice_sizes=tuple(sizes), mode=mode)


def _gather_like_updates(x, idx, dn, upd_shape, mode, **flags):
    params = _scatter_to_gather(dn, get_aval(x).shape, upd_shape, mode)
    return gather(x, idx, **params, fill_value=0, **flags)


def _flags(params):
    return {k: params[k] for k in ("indices_are_sorted", "unique_indices")}


# scatter-add: linear in the operand and the updates


def scatter_add(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """`operand` with `updates` added at `scatter_indices` (duplicates accumulate).

    Example:
      >>> dn = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
      ...                              scatter_dims_to_operand_dims=(0,))
      >>> scatter_add(np.zeros(3, np.float32), np.array([[1], [1]]), np.ones(2, np.float32), dn)
      array([0., 2., 0.], dtype=float32)
    """
    return _scatter_bind(scatter_add_p, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                         mode=mode)


def _linear_scatter_jvp(get_primitive):
    """The jvp of a scatter linear in operand and updates (add, sub): the same scatter of the
    tangents; `get_primitive` defers the lookup until the primitive exists."""

    def rule(primals, tangents, **params):
        primitive = get_primitive()
        x, idx, upd = primals
        ans = primitive.bind(x, idx, upd, **params)
        if isinstance(tangents[0], Zero) and isinstance(tangents[2], Zero):
            return ans, Zero.from_primal_value(ans)
        t_x, t_upd = instantiate_zeros(tangents[0]), instantiate_zeros(tangents[2])
        return ans, primitive.bind(t_x, idx, t_upd, **params)

    return rule


def _scatter_add_transpose(ct, x, idx, upd, dimension_numbers, mode, **params):
    if isinstance(ct, Zero):
        return [None, None, None]
    ct_upd = None
    if undefined(upd):
        ct_upd = _gather_like_updates(ct, idx, dimension_numbers, upd.aval.shape, mode,
                                      **_flags(params))
    return [ct if undefined(x) else None, None, ct_upd]


scatter_add_p = define_primitive(
    "scatter-add",
    abstract_eval=_scatter_abstract_eval("scatter-add"),
    reference=_scatter_reference("scatter-add"),
    jvp=_linear_scatter_jvp(lambda: scatter_add_p),
    transpose=_scatter_add_transpose,
    batch=_scatter_batch(lambda: scatter_add_p),
)


# scatter-sub: linear in the operand and the updates


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """`operand` with `updates` subtracted at `scatter_indices` (duplicates accumulate)."""
    return _scatter_bind(scatter_sub_p, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                         mode=mode)


def _scatter_sub_transpose(ct, x, idx, upd, dimension_numbers, mode, **params):
    cts = _scatter_add_transpose(ct, x, idx, upd, dimension_numbers, mode, **params)
    return [cts[0], None, None if cts[2] is None else neg(cts[2])]


scatter_sub_p = define_primitive(
    "scatter-sub",
    abstract_eval=_scatter_abstract_eval("scatter-sub"),
    reference=_scatter_reference("scatter-sub"),
    jvp=_linear_scatter_jvp(lambda: scatter_sub_p),
    transpose=_scatter_sub_transpose,
    batch=_scatter_batch(lambda: scatter_sub_p),
)


# scatter (set): the jvp masks the updates that lose to a later duplicate


def scatter(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
            unique_indices=False, mode=None):
    """`operand` with `updates` written at `scatter_indices` (for duplicate indices one update
    wins, unspecified which)."""
    return _scatter_bind(scatter_p, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                         mode=mode)


def _update_ids(idx, upd, dn):
    """1, 2, ... numbering the scatter windows, broadcast over each window's elements."""
    batch_shape = get_aval(idx).shape[:-1]
    count = int(np.prod(batch_shape, dtype=np.int64))
    ids = reshape(add(broadcasted_iota(np.int32, (count,), 0), np.int32(1)), batch_shape)
    upd_shape = get_aval(upd).shape
    scatter_dims = tuple(d for d in range(len(upd_shape)) if d not in dn.update_window_dims)
    return broadcast_in_dim(ids, upd_shape, scatter_dims)


def _scatter_jvp(primals, tangents, dimension_numbers, mode, **params):
    x, idx, upd = primals
    full = dict(dimension_numbers=dimension_numbers, mode=mode, **params)
    ans = scatter_p.bind(x, idx, upd, **full)
    if isinstance(tangents[0], Zero) and isinstance(tangents[2], Zero):
        return ans, Zero.from_primal_value(ans)
    t_x, t_upd = instantiate_zeros(tangents[0]), instantiate_zeros(tangents[2])
    if params["unique_indices"]:  # no two updates overlap: the tangents scatter the same way
        return ans, scatter_p.bind(t_x, idx, t_upd, **full)
    ids = _update_ids(idx, upd, dimension_numbers)
    id_params = {**full, "update_jaxpr": None}
    written = scatter_p.bind(np.zeros(get_aval(x).shape, np.int32), idx, ids, **id_params)
    winners = _gather_like_updates(written, idx, dimension_numbers, get_aval(upd).shape, mode,
                                   **_flags(params))
    keep_x = eq(written, np.int32(0))
    keep_upd = eq(ids, winners)
    masked_x = select_n(keep_x, zeros_like_aval(get_aval(t_x)), t_x)
    masked_upd = select_n(keep_upd, zeros_like_aval(get_aval(t_upd)), t_upd)
    tangent = scatter_add(masked_x, idx, masked_upd, dimension_numbers, mode=mode,
                          **_flags(params))
    return ans, tangent


def _scatter_transpose(ct, x, idx, upd, dimension_numbers, mode, **params):
    if not params["unique_indices"]:
        raise NotImplementedError("scatter transpose is only implemented where "
                                  "unique_indices=True (differentiate instead: its jvp is "
                                  "linear in scatter-add).")
    if isinstance(ct, Zero):
        return [None, None, None]
    upd_aval = upd.aval if undefined(upd) else get_aval(upd)
    ct_x = ct_upd = None
    if undefined(x):
        ct_x = scatter(ct, idx, zeros_like_aval(upd_aval), dimension_numbers, mode=mode,
                       **_flags(params))
    if undefined(upd):
        ct_upd = _gather_like_updates(ct, idx, dimension_numbers, upd_aval.shape, mode,
                                      **_flags(params))
    return [ct_x, None, ct_upd]


scatter_p = define_primitive(
    "scatter",
    abstract_eval=_scatter_abstract_eval("scatter"),
    reference=_scatter_reference("scatter"),
    jvp=_scatter_jvp,
    transpose=_scatter_transpose,
    batch=_scatter_batch(lambda: scatter_p),
)


# scatter-mul: linear in the operand; updates differentiable with unique indices


def scatter_mul(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """`operand` multiplied by `updates` at `scatter_indices` (duplicates multiply)."""
    return _scatter_bind(scatter_mul_p, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                         mode=mode)


def _scatter_mul_jvp(primals, tangents, dimension_numbers, mode, **params):
    x, idx, upd = primals
    full = dict(dimension_numbers=dimension_numbers, mode=mode, **params)
    ans = scatter_mul_p.bind(x, idx, upd, **full)
    tangent = Zero.from_primal_value(ans)
    if not isinstance(tangents[0], Zero):
        tangent = scatter_mul_p.bind(tangents[0], idx, upd, **full)
    if not isinstance(tangents[2], Zero):
        if not params["unique_indices"]:
            raise NotImplementedError("scatter_mul gradients with respect to the updates are "
                                      "only implemented if unique_indices=True.")
        # out = x * u at the written positions: d out = x * du there
        written = scatter(zeros_like_aval(get_aval(x)), idx, tangents[2], dimension_numbers,
                          mode=mode, **_flags(params))
        part = mul(x, written)
        tangent = part if isinstance(tangent, Zero) else add(tangent, part)
    return ans, tangent


def _scatter_mul_transpose(ct, x, idx, upd, **params):
    if undefined(upd):
        raise NotImplementedError("scatter_mul is not linear in its updates.")
    if isinstance(ct, Zero):
        return [None, None, None]
    return [scatter_mul_p.bind(ct, idx, upd, **params), None, None]


scatter_mul_p = define_primitive(
    "scatter-mul",
    abstract_eval=_scatter_abstract_eval("scatter-mul"),
    reference=_scatter_reference("scatter-mul"),
    jvp=_scatter_mul_jvp,
    transpose=_scatter_mul_transpose,
    batch=_scatter_batch(lambda: scatter_mul_p),
)


# scatter-min, scatter-max: ties share the tangent equally, as reduce_max does


def scatter_min(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """`operand` with the elementwise minimum of it and `updates` at `scatter_indices`."""
    return _scatter_bind(scatter_min_p, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                         mode=mode)


def scatter_max(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """`operand` with the elementwise maximum of it and `updates` at `scatter_indices`.

    Example:
      >>> dn = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
      ...                              scatter_dims_to_operand_dims=(0,))
      >>> scatter_max(np.zeros(2, np.float32), np.array([[0], [0]]),
      ...             np.array([3, 5], np.float32), dn)
      array([5., 0.], dtype=float32)
    """
    return _scatter_bind(scatter_max_p, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                         mode=mode)


def _scatter_extremum_jvp(primitive_of):
    def rule(primals, tangents, dimension_numbers, mode, **params):
        x, idx, upd = primals
        full = dict(dimension_numbers=dimension_numbers, mode=mode, **params)
        ans = primitive_of().bind(x, idx, upd, **full)
        if isinstance(tangents[0], Zero) and isinstance(tangents[2], Zero):
            return ans, Zero.from_primal_value(ans)
        t_x, t_upd = instantiate_zeros(tangents[0]), instantiate_zeros(tangents[2])
        dtype = get_aval(x).dtype
        flags = _flags(params)
        x_hits = convert_element_type(eq(x, ans), dtype)
        at_updates = _gather_like_updates(ans, idx, dimension_numbers, get_aval(upd).shape,
                                          mode, **flags)
        upd_hits = convert_element_type(eq(upd, at_updates), dtype)
        zeros = zeros_like_aval(get_aval(x))
        counts = add(x_hits, scatter_add(zeros, idx, upd_hits, dimension_numbers, mode=mode,
                                         **flags))
        total = add(mul(t_x, x_hits), scatter_add(zeros, idx, mul(t_upd, upd_hits),
                                                  dimension_numbers, mode=mode, **flags))
        return ans, div(total, counts)

    return rule


scatter_min_p = define_primitive(
    "scatter-min",
    abstract_eval=_scatter_abstract_eval("scatter-min"),
    reference=_scatter_reference("scatter-min"),
    jvp=_scatter_extremum_jvp(lambda: scatter_min_p),
    transpose=NOT_LINEAR,
    batch=_scatter_batch(lambda: scatter_min_p),
)

scatter_max_p = define_primitive(
    "scatter-max",
    abstract_eval=_scatter_abstract_eval("scatter-max"),
    reference=_scatter_reference("scatter-max"),
    jvp=_scatter_extremum_jvp(lambda: scatter_max_p),
    transpose=NOT_LINEAR,
    batch=_scatter_batch(lambda: scatter_max_p),
)

