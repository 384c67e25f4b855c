"""Indexing: `x[idx]` (basic, advanced integer, boolean masks), the `x.at[idx]` update API,
`take`, `take_along_axis`, and `nonzero`/`argwhere`/`flatnonzero`.

How an index becomes lax (`_rewrite`): Ellipsis is expanded; each `None` becomes a new size-1
axis; every slice is applied up front with `lax.slice` (and `lax.rev` for negative steps), so
what remains per axis is either a full slice or an "advanced" index (an int, a traced int, an
integer array; a concrete boolean mask becomes its `nonzero` arrays). Static ints alone are a
slice and a squeeze, traced scalars a `dynamic_slice`, and any array makes one `gather`, laid
out as NumPy lays out advanced indexing (the broadcast index dims replace the indexed axes if
those are adjacent, else they go first). As in JAX, gathers clamp out-of-bounds indices unless
a `mode` says otherwise.

Updates (`x.at[idx].set/add/...`) scatter into the flattened array at the flat positions that
`_rewrite` gathers from an iota of positions (filled with an out-of-bounds sentinel where an
index is out of bounds), so every index form `x[idx]` accepts is also an update target, and
out-of-bounds updates are dropped as in JAX.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from laminax_core import _shape_poly, _trace, dtypes, errors, lax
from laminax_core._avals import ShardingTypeError, get_aval
from laminax_core.lax._approx_top_k import install_take_along_axis
from laminax_core.lax._indexing import default_fill_value
from laminax_core.lax._indexing_helpers import apply_counted
from laminax_core import _dslice
from laminax_core.numpy import _ufuncs
from laminax_core.numpy._operands import (
    as_array,
    broadcast_to_shape,
    canonicalize_axis,
    check_arraylike,
    convert_dtype,
    flatten_or_axis,
    is_concrete,
    select,
)
from laminax_core.numpy._reductions import cumsum

__all__ = [
    "argwhere",
    "flatnonzero",
    "nonzero",
    "take",
    "take_along_axis",
    "getitem",
    "IndexUpdateRef",
    "IndexUpdateHelper",
    "along_axis_index",
    "scatter_sharding_check",
]

# Not in jnp's namespace (JAX has no such names there): `getitem` is `x[idx]`, and
# `IndexUpdateHelper`/`IndexUpdateRef` are what `x.at` / `x.at[idx]` return.

_MODES = ("promise_in_bounds", "clip", "fill", "drop", None)


def _is_int_scalar(i) -> bool:
    if isinstance(i, bool | np.bool_):
        return False
    if isinstance(i, int | np.integer):
        return True
    return (not isinstance(i, slice) and i is not None and i is not Ellipsis
            and _is_array(i) and get_aval(i).ndim == 0
            and dtypes.issubdtype(get_aval(i).dtype, np.integer))


def _is_array(i) -> bool:
    # static entries first: an aval for a Python scalar costs more than the rest of x[0]
    if i is None or i is Ellipsis or isinstance(i, bool | int | float | complex | slice):
        return False
    try:
        get_aval(i)
    except TypeError:
        return False
    return not isinstance(i, (bool, int, float, complex))


def _index_error(message):
    raise IndexError(message + " Valid indices are ints, slices, None, Ellipsis, integer "
                     "arrays and boolean arrays.")


def _index_type_error(message):
    raise TypeError(message + " Valid indices are ints, slices, None, Ellipsis, integer "
                    "arrays and boolean arrays.")


def _canonical_entries(idx):
    """The index as a list of entries (lists made arrays, scalar bools made masks)."""
    if not isinstance(idx, tuple) and isinstance(idx, Sequence) and not isinstance(
            idx, (str, np.ndarray)) and not _is_array(idx):
        # NumPy guesses whether x[[0, 1]] means x[(0, 1)] or x[np.array([0, 1])]; as JAX
        # does, refuse to guess
        if any(isinstance(i, (Sequence, slice)) or i is None or i is Ellipsis
               or (_is_array(i) and get_aval(i).ndim) for i in idx):
            fix = "`arr[tuple(seq)]`"
        else:
            fix = "`arr[array(seq)]`"
        raise TypeError("Using a non-tuple sequence for multidimensional indexing is not "
                        f"allowed; use {fix} instead of `arr[seq]`.")
    entries = list(idx) if isinstance(idx, tuple) else [idx]
    out = []
    for i in entries:
        if isinstance(i, (list, tuple)):
            try:
                i = np.asarray(i)
            except ValueError:
                _index_error(f"Cannot index with the ragged sequence {i!r}.")
            if i.dtype == np.float64 and i.size == 0:
                i = i.astype(np.int32)
        if isinstance(i, (bool, np.bool_)):
            i = np.asarray(i)
        if isinstance(i, _shape_poly.DimExpr):  # JAX's IndexError, word for word
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), newaxis (`None`) and integer "
                f"or boolean arrays are valid indices. Got {i}")
        # an index of the wrong type is JAX's TypeError (NumPy says IndexError)
        if isinstance(i, (float, complex, str)):
            _index_type_error(f"Indexing with a {type(i).__name__} ({i!r}) is not supported.")
        if _is_array(i) and not dtypes.issubdtype(get_aval(i).dtype, np.integer) and \
                not dtypes.issubdtype(get_aval(i).dtype, np.bool_):
            _index_type_error(f"Indexing with an array of dtype {get_aval(i).dtype.name} is "
                              "not supported; convert it to an integer dtype.")
        out.append(i)
    return out


def _is_mask(i) -> bool:
    return _is_array(i) and dtypes.issubdtype(get_aval(i).dtype, np.bool_)


def _axes_consumed(i) -> int:
    if i is None or i is Ellipsis:
        return 0
    return get_aval(i).ndim if _is_mask(i) else 1


def _expand_masks(entries, shape):
    """Concrete boolean masks replaced by their nonzero index arrays (one per masked axis).

    Every mask must have the shape of the axes it indexes (a size-0 mask axis also passes, as
    in JAX): a shorter or longer mask would otherwise select the wrong elements silently."""
    out = []
    axis = 0
    ellipsis_axes = len(shape) - sum(_axes_consumed(i) for i in entries)
    for position, i in enumerate(entries):
        if i is Ellipsis:
            axis += max(ellipsis_axes, 0)
        elif _is_mask(i):
            if not is_concrete(i):
                raise errors.NonConcreteBooleanIndexError(i)
            mask = np.asarray(i.to_concrete_value() if isinstance(i, _trace.Tracer) else i)
            expected = list(shape[axis:axis + mask.ndim])
            if mask.ndim and (len(expected) < mask.ndim or not all(
                    m in (0, s) for m, s in zip(mask.shape, expected, strict=True))):
                raise IndexError(
                    f"boolean index did not match shape of indexed array in index {position}: "
                    f"got {mask.shape}, expected {expected}. A mask must have the shape of the "
                    "axes it selects from."
                )
            axis += mask.ndim
            if mask.ndim == 0:
                out.append(("scalar_bool", bool(mask)))
            else:
                out.extend(n.astype(np.int32) for n in np.nonzero(mask))
                out.append(("mask_end", mask.ndim))
            continue
        else:
            axis += _axes_consumed(i)
        out.append(i)
    return out


def _expand_ellipsis(entries, ndim):
    consumed = sum(1 for i in entries if i is not None and i is not Ellipsis
                   and not isinstance(i, tuple))
    if sum(1 for i in entries if i is Ellipsis) > 1:
        raise IndexError("An index can only have a single ellipsis ('...').")
    if consumed > ndim:
        raise IndexError(f"Too many indices for array: array is {ndim}-dimensional, but "
                         f"{consumed} were indexed.")
    fill = [slice(None)] * (ndim - consumed)
    if any(i is Ellipsis for i in entries):
        at = next(k for k, i in enumerate(entries) if i is Ellipsis)
        return entries[:at] + fill + entries[at + 1:]
    return entries + fill


def _new_axes(x, entries):
    """Each None (and scalar boolean) becomes a size-1 axis of `x` with a full slice."""
    positions, out = [], []
    for i in entries:
        if isinstance(i, tuple) and i[0] == "mask_end":
            continue
        if i is None or (isinstance(i, tuple) and i[0] == "scalar_bool"):
            positions.append(len(out))
            out.append(slice(None) if i is None or i[1] else slice(0, 0))
        else:
            out.append(i)
    if positions:
        x = lax.expand_dims(x, tuple(positions))
    return x, out


def _apply_slices(x, entries, squeeze_static_ints: bool):
    """Static slices (and, if asked, static ints) applied to `x`; they become full slices."""
    shape = get_aval(x).shape
    start, limit, strides, flips, squeezed = [], [], [], [], []
    out = []
    for dim, i in enumerate(entries):
        size = shape[dim]
        if isinstance(i, slice) and any(isinstance(v, _shape_poly.DimExpr)
                                        for v in (size, i.start, i.stop)):
            lo, hi, step = _shape_poly.slice_indices(i, size)
            if step < 0:  # visited forwards from the last element taken, then reversed
                count = _shape_poly.max_dim((lo - hi - step - 1) // -step, 0)
                lo, hi, step = lo + (count - 1) * step, lo + 1, -step
                flips.append(dim)
            start.append(lo)
            limit.append(_shape_poly.max_dim(lo, hi))
            strides.append(step)
            out.append(slice(None))
        elif isinstance(i, slice):
            lo, hi, step = i.indices(size)
            if step < 0:
                count = len(range(lo, hi, step))
                # the same elements, visited forwards, then reversed with lax.rev
                first = lo + (count - 1) * step if count else 0
                lo, hi, step = first, lo + 1 if count else 0, -step
                flips.append(dim)
            start.append(lo)
            limit.append(max(lo, hi))
            strides.append(step)
            out.append(slice(None))
        elif squeeze_static_ints and isinstance(i, int | np.integer):
            k = operator.index(i)
            if size == 0:
                raise IndexError(f"index {k} is out of bounds for axis {dim} with size 0")
            # out of bounds clamps, as XLA's dynamic_slice and JAX's indexing do
            k = min(max(k + size if k < 0 else k, 0), size - 1)
            start.append(k)
            limit.append(k + 1)
            strides.append(1)
            squeezed.append(dim)
            out.append(None)
        else:
            start.append(0)
            limit.append(size)
            strides.append(1)
            out.append(i)
    if (tuple(start), tuple(limit)) != ((0,) * len(shape), shape) or set(strides) - {1}:
        x = lax.slice(x, start, limit, None if set(strides) <= {1} else strides)
    if flips:
        x = lax.rev(x, tuple(flips))
    if squeezed:
        x = lax.squeeze(x, tuple(squeezed))
    return x, [i for i in out if i is not None]


def _normalize_index(i, size):
    """A (possibly negative) integer index array as a non-negative one (int32 if it fits)."""
    i = as_array(i)
    dtype = get_aval(i).dtype
    if dtypes.issubdtype(dtype, np.unsignedinteger):
        return i
    if isinstance(i, np.ndarray) and not isinstance(i, _trace.Tracer) and isinstance(size, int):
        return np.where(i < 0, i + size, i).astype(dtype)
    zero = convert_dtype(np.asarray(0), dtype)
    size = as_array(size) if isinstance(size, _shape_poly.DimExpr) else np.asarray(size)
    return select(lax.lt(i, zero), i, lax.add(i, convert_dtype(size, dtype)))


def _dynamic_ints(x, entries):
    shape = get_aval(x).shape
    starts, sizes, squeezed = [], [], []
    for dim, i in enumerate(entries):
        if isinstance(i, slice):
            starts.append(np.int32(0))
            sizes.append(shape[dim])
        else:
            starts.append(_normalize_index(i, shape[dim]))
            sizes.append(1)
            squeezed.append(dim)
    # one index type for all starts (StableHLO's rule): int64 if an index is (x64), else int32
    dtype = _index_dtype([as_array(starts[d]) for d in squeezed])
    starts = [convert_dtype(as_array(i), dtype) for i in starts]
    # the starts are already normalized: no second wrap of negative indices
    sliced = lax.dynamic_slice(x, starts, sizes, allow_negative_indices=False)
    return lax.squeeze(sliced, tuple(squeezed))


def _index_dtype(arrays):
    found = [get_aval(a).dtype for a in arrays]
    if any(d.itemsize > 4 for d in found):
        return np.dtype(dtypes.canonicalize_dtype(np.int64))
    return np.dtype(np.int32)


def _gather(x, entries, mode, fill_value, normalize):
    shape = get_aval(x).shape
    advanced = [d for d, i in enumerate(entries) if not isinstance(i, slice)]
    index_shape = _shape_poly.broadcast_shapes(*(get_aval(as_array(entries[d])).shape for d in advanced))
    dtype = _index_dtype([as_array(entries[d]) for d in advanced])
    contiguous = advanced == list(range(advanced[0], advanced[-1] + 1))
    kept_sizes = tuple(shape[d] for d in range(len(shape)) if d not in advanced)
    if 0 in index_shape or 0 in kept_sizes:
        # nothing to gather (an empty index, or empty slices): the empty result directly, as
        # JAX does; a gather of size-1 slices could not even be stated on an empty axis
        lead = advanced[0] if contiguous else 0
        out_shape = (*kept_sizes[:lead], *index_shape, *kept_sizes[lead:])
        return lax.broadcast_in_dim(np.zeros((), get_aval(x).dtype), out_shape, ())
    columns = []
    for d in advanced:
        i = _normalize_index(entries[d], shape[d]) if normalize else as_array(entries[d])
        i = convert_dtype(i, dtype)
        i = broadcast_to_shape(i, index_shape)
        columns.append(lax.expand_dims(i, (len(index_shape),)))
    indices = columns[0] if len(columns) == 1 else lax.concatenate(columns, len(index_shape))
    kept = [d for d in range(len(shape)) if d not in advanced]
    # NumPy's layout: the index dims replace adjacent indexed axes, else they go first
    offset_dims = tuple(n if contiguous and d < advanced[0] else n + len(index_shape)
                        for n, d in enumerate(kept))
    dnums = lax.GatherDimensionNumbers(offset_dims=offset_dims,
                                       collapsed_slice_dims=tuple(advanced),
                                       start_index_map=tuple(advanced))
    slice_sizes = tuple(1 if d in advanced else shape[d] for d in range(len(shape)))
    return lax.gather(x, indices, dnums, slice_sizes, mode=_gather_mode(mode),
                      fill_value=fill_value)


def _gather_mode(mode):
    if mode not in _MODES:
        raise ValueError(f"Invalid indexing mode {mode!r}: use one of 'promise_in_bounds', "
                         "'clip', 'fill' (or 'drop').")
    if mode is None or mode == "promise_in_bounds":
        return lax.GatherScatterMode.PROMISE_IN_BOUNDS
    if mode == "clip":
        return lax.GatherScatterMode.CLIP
    return lax.GatherScatterMode.FILL_OR_DROP


def _basic_new_axes(entries):
    """Without arrays, None only adds output axes: the entries without them, and the output
    positions of the new axes (so they are added last, after slicing, as JAX does)."""
    positions, kept, out_dim = [], [], 0
    for i in entries:
        if i is None:
            positions.append(out_dim)
            out_dim += 1
        else:
            kept.append(i)
            out_dim += isinstance(i, slice)
    return kept, positions


def _rewrite(x, idx, mode=None, fill_value=None, normalize=True):
    x = as_array(x)
    entries = _expand_masks(_canonical_entries(idx), get_aval(x).shape)
    entries = _expand_ellipsis(entries, get_aval(x).ndim)
    if get_aval(x).sharding is not None and not isinstance(x, _trace.Tracer):
        _check_eager_split_slices(x, entries)
    has_arrays = any(_is_array(i) and get_aval(i).ndim > 0 for i in entries
                     if not isinstance(i, tuple))
    basic = mode is None and not has_arrays and not any(isinstance(i, tuple) for i in entries)
    if basic:
        entries, new_axes = _basic_new_axes(entries)
        x, entries = _apply_slices(x, entries, squeeze_static_ints=True)
        if not all(isinstance(i, slice) for i in entries):
            x = _dynamic_ints(x, entries)
        return lax.expand_dims(x, tuple(new_axes)) if new_axes else x
    x, entries = _new_axes(x, entries)
    x, entries = _apply_slices(x, entries, squeeze_static_ints=False)
    if all(isinstance(i, slice) for i in entries):
        return x
    return _gather(x, entries, mode, fill_value, normalize)


def _check_eager_split_slices(x, entries):
    """JAX indexes a concrete array laid out over several devices with a gather when any
    entry takes part of a dimension (its static slices lose the layout), and a gather into a
    split dimension has no sharding: the same error here, before slicing."""
    aval = get_aval(x)
    split = aval.sharding.aval_partitions
    for dim, i in _entry_dims(entries):
        if isinstance(i, slice):
            lo, hi, step = i.indices(aval.shape[dim])
            partial = abs(step) != 1 or abs(hi - lo) != aval.shape[dim]
        else:
            partial = True
        if partial and split[dim] is not None:
            raise ShardingTypeError(
                "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the "
                "gather indexing as out sharding could not be resolved unambiguously (or would "
                f"require collectives on inputs). Got operand={aval.str_short()} indexed along "
                f"its split dimension {dim}; reshard it (or index inside jit, where a static "
                "slice keeps the split)."
            )


def _entry_dims(entries):
    """(operand dimension, entry) for each entry that consumes dimensions (a mask's index
    arrays, a tuple, consume one each)."""
    dim = 0
    for i in entries:
        if i is None:
            continue
        for part in (i if isinstance(i, tuple) else (i,)):
            yield dim, part
            dim += 1


def scatter_sharding_check(x, entries):
    """JAX's rule for `x.at[idx]` updates of an operand split along Explicit mesh axes: a
    split dimension must be taken whole (the result keeps the operand's type)."""
    aval = get_aval(x)
    if aval.sharding is None:
        return
    split = aval.sharding.aval_partitions
    for dim, i in _entry_dims(entries):
        whole = isinstance(i, slice) and i.indices(aval.shape[dim]) == (0, aval.shape[dim], 1)
        if not whole and split[dim] is not None:
            raise ShardingTypeError(
                "Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec "
                "for the scatter update as out sharding could not be resolved unambiguously "
                f"(or would require collectives on inputs). Got operand={aval.str_short()} "
                f"updated along its split dimension {dim}; reshard it first."
            )


def getitem(x, idx, mode=None, fill_value=None, normalize_indices=True):
    """`x[idx]` with NumPy's indexing rules and JAX's out-of-bounds behaviour.

    Args:
      x: the array.
      idx: an int, slice, None, Ellipsis, integer or boolean array, or a tuple of them.
      mode: how out-of-bounds array indices are handled: None/"promise_in_bounds" (clamp, as
        XLA does), "clip", or "fill" (give `fill_value`).
      fill_value: the value for out-of-bounds indices in "fill" mode.
      normalize_indices: whether negative array indices count from the end (as in NumPy).

    Returns:
      The indexed array.

    Raises:
      IndexError: a static int indexes an empty axis (other out-of-bounds ints clamp, as in
        JAX), a boolean mask does not match its axes, or the index has too many entries.
      TypeError: the index is a list or other non-tuple sequence.
      NonConcreteBooleanIndexError: a boolean mask is a traced value.

    Example:
      >>> getitem(np.arange(6).reshape(2, 3), (Ellipsis, np.array([2, 0])))
      array([[2, 0],
             [5, 3]], dtype=int32)
    """
    if mode == "fill" and fill_value is None:
        fill_value = default_fill_value(get_aval(as_array(x)).dtype)
    x, idx = _dslice.apply_slices(as_array(x), idx)
    return _rewrite(x, idx, mode, fill_value, normalize_indices)


# ----- updates: x.at[idx] -------------------------------------------------------------------


def _flat_positions(shape, idx):
    """The flat positions `idx` selects in an array of `shape`; out of bounds become `size`."""
    size = _size(shape)
    if _shape_poly.is_symbolic_dim(size):
        # the scatter drops any out-of-bounds position, a negative one as well as `size`
        positions = lax.reshape(lax.broadcasted_iota(dtypes.default_int_dtype(), (size,), 0),
                                shape)
        return getitem(positions, idx, mode="fill", fill_value=-1), size
    dtype = np.int32 if size < 2**31 else dtypes.canonicalize_dtype(np.int64)
    positions = lax.reshape(lax.iota(dtype, size), shape)
    return getitem(positions, idx, mode="fill", fill_value=size), size


def _size(shape):
    """The number of elements of `shape`: an int, or a dimension expression."""
    if any(_shape_poly.is_symbolic_dim(d) for d in shape):
        size = 1
        for d in shape:
            size = d * size
        return size
    return int(np.prod(shape, dtype=np.int64))


def _scatter(name, x, idx, values, combine, indices_are_sorted, unique_indices, mode):
    x = as_array(x)
    aval = get_aval(x)
    if mode not in (None, "drop", "fill", "clip", "promise_in_bounds"):
        raise ValueError(f"x.at[...].{name}: invalid mode {mode!r}.")
    if aval.sharding is not None:
        entries = _expand_masks(_canonical_entries(idx), aval.shape)
        scatter_sharding_check(x, _expand_ellipsis(entries, aval.ndim))
    positions, size = _flat_positions(aval.shape, idx)
    if mode == "clip":
        positions, _ = _clipped_positions(aval.shape, idx)
    values = convert_dtype(as_array(values), aval.dtype)
    target = get_aval(positions).shape
    try:
        values = broadcast_to_shape(values, target)
    except TypeError as err:
        raise ValueError(f"x.at[...].{name}: values of shape {get_aval(values).shape} cannot be "
                         f"broadcast to the indexed shape {target}.") from err
    n = _size(target)
    flat = lax.reshape(x, (size,))
    dnums = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                        scatter_dims_to_operand_dims=(0,))
    out = combine(flat, lax.reshape(positions, (n, 1)), lax.reshape(values, (n,)), dnums,
                  indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                  mode=lax.GatherScatterMode.FILL_OR_DROP)
    return lax.reshape(out, aval.shape)


def _clipped_positions(shape, idx):
    size = _size(shape)
    positions = lax.reshape(lax.broadcasted_iota(np.int32, (size,), 0), shape)
    return getitem(positions, idx, mode="clip"), size


class IndexUpdateRef:
    """`x.at[idx]`: the functional update methods of the indexed part of `x`.

    Each method returns a new array; `x` is unchanged. Out-of-bounds updates are dropped
    (`mode="clip"` clamps them instead), and repeated indices combine for `add`, `multiply`,
    `min` and `max` (for `set`, one of the repeated values wins).
    """

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None, out_sharding=None):
        """`x[idx]`, with the out-of-bounds `mode` ("fill" uses `fill_value`).

        Example:
          >>> np_x = np.arange(3.0)
          >>> IndexUpdateRef(np_x, 5).get(mode="fill", fill_value=-1.0)
          array(-1., dtype=float32)
        """
        return getitem(self.array, self.index, mode=mode, fill_value=fill_value)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """A copy of `x` with `x[idx] = values`.

        Example:
          >>> IndexUpdateRef(np.zeros(3, np.float32), 1).set(5.0)
          array([0., 5., 0.], dtype=float32)
        """
        return _scatter("set", self.array, self.index, values, lax.scatter,
                        indices_are_sorted, unique_indices, mode)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """A copy of `x` with `x[idx] += values` (repeated indices accumulate).

        Example:
          >>> IndexUpdateRef(np.zeros(3, np.float32), np.array([1, 1])).add(1.0)
          array([0., 2., 0.], dtype=float32)
        """
        return _scatter("add", self.array, self.index, values, lax.scatter_add,
                        indices_are_sorted, unique_indices, mode)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """A copy of `x` with `x[idx] -= values`.

        Example:
          >>> IndexUpdateRef(np.ones(2, np.float32), 0).subtract(1.0)
          array([0., 1.], dtype=float32)
        """
        return self.add(_ufuncs.negative(as_array(values)), indices_are_sorted=indices_are_sorted,
                        unique_indices=unique_indices, mode=mode)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """A copy of `x` with `x[idx] *= values` (repeated indices multiply).

        Example:
          >>> IndexUpdateRef(np.ones(2, np.float32), 0).multiply(3.0)
          array([3., 1.], dtype=float32)
        """
        return _scatter("multiply", self.array, self.index, values, lax.scatter_mul,
                        indices_are_sorted, unique_indices, mode)

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`x` divided by divisors that are `values` at `idx` (multiplied where indices repeat)
        and 1 elsewhere: JAX's `x[idx] /= values`, a true division of the whole array, so an
        integer `x` gives floats.

        Example:
          >>> IndexUpdateRef(np.ones(2, np.float32), 0).divide(4.0)
          array([0.25, 1.  ], dtype=float32)
        """
        return _ufuncs.divide(self.array, self._factors(values, indices_are_sorted,
                                                        unique_indices, mode))

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`x` raised to exponents that are `values` at `idx` (multiplied where indices repeat)
        and 1 elsewhere: JAX's `x[idx] **= values`.

        Example:
          >>> IndexUpdateRef(np.full(2, 3.0, np.float32), 1).power(2)
          array([3., 9.], dtype=float32)
        """
        return _ufuncs.power(self.array, self._factors(values, indices_are_sorted,
                                                       unique_indices, mode))

    def _factors(self, values, indices_are_sorted, unique_indices, mode):
        x = as_array(self.array)
        dtype = get_aval(x).dtype
        # booleans multiply as a logical and: counted in int32 and compared back
        work = np.int32 if dtype == np.bool_ else dtype
        if dtype == np.bool_:
            values = convert_dtype(convert_dtype(as_array(values), np.bool_), np.int32)
        ones = lax.broadcast_in_dim(np.ones((), work), get_aval(x).shape, ())
        factors = _scatter("multiply", ones, self.index, values, lax.scatter_mul,
                           indices_are_sorted, unique_indices, mode)
        return convert_dtype(factors, dtype)

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """A copy of `x` with `x[idx] = minimum(x[idx], values)`.

        Example:
          >>> IndexUpdateRef(np.ones(2, np.float32), 0).min(-1.0)
          array([-1.,  1.], dtype=float32)
        """
        return _scatter("min", self.array, self.index, values, lax.scatter_min,
                        indices_are_sorted, unique_indices, mode)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """A copy of `x` with `x[idx] = maximum(x[idx], values)`.

        Example:
          >>> IndexUpdateRef(np.ones(2, np.float32), 0).max(5.0)
          array([5., 1.], dtype=float32)
        """
        return _scatter("max", self.array, self.index, values, lax.scatter_max,
                        indices_are_sorted, unique_indices, mode)

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """A copy of `x` with `x[idx] = func(x[idx])`, `func` an elementwise function of one
        scalar; a position indexed k times gets `func` applied k times, as in JAX.

        Example:
          >>> IndexUpdateRef(np.ones(2, np.float32), 1).apply(lambda v: v * 7)
          array([1., 7.], dtype=float32)
        """
        x = as_array(self.array)
        counts = _scatter("apply", np.zeros(get_aval(x).shape, np.int32), self.index,
                          np.int32(1), lax.scatter_add, indices_are_sorted, unique_indices, mode)
        return apply_counted(x, counts, func)


class IndexUpdateHelper:
    """`x.at`: index it (`x.at[idx]`) to get an `IndexUpdateRef`.

    Example:
      >>> IndexUpdateHelper(np.zeros(2, np.float32))[0].set(1.0)
      array([1., 0.], dtype=float32)
    """

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index) -> IndexUpdateRef:
        return IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


# ----- take, take_along_axis, nonzero -------------------------------------------------------


def take(a, indices, axis: int | None = None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    """Elements of `a` at `indices` along `axis` (of the flattened array if None).

    Args:
      a: the array.
      indices: an integer array.
      axis: the axis, or None.
      out: unsupported; must be None.
      mode: "fill" (the default, as in JAX: out-of-bounds give `fill_value`, by default NaN
        for inexact dtypes and the extreme value for integers), "clip" (clamp into bounds,
        negative indices to 0) or "wrap" (indices modulo the axis length). "raise" raises
        NotImplementedError, as in JAX.
      unique_indices, indices_are_sorted: hints, accepted for compatibility.
      fill_value: the out-of-bounds value for "fill".

    Returns:
      The selected elements.

    Example:
      >>> take(np.array([4.0, 5.0, 6.0]), np.array([2, 0]))
      array([6., 4.], dtype=float32)
    """
    if out is not None:
        raise NotImplementedError("jnp.take: the out argument is not supported.")
    check_arraylike("take", indices)
    a, axis = flatten_or_axis("take", a, axis)
    mode = "fill" if mode is None else mode
    if mode == "raise":
        # as in JAX: an index check that raises cannot run inside compiled code
        raise NotImplementedError("jnp.take: mode='raise' is not supported (bounds cannot be "
                                  "checked at run time); use 'fill', 'clip' or 'wrap'.")
    if mode not in ("fill", "clip", "wrap"):
        raise ValueError(f"jnp.take: invalid mode {mode!r}; use 'fill' (the default), 'clip' "
                         "or 'wrap'.")
    indices = as_array(indices)
    if not dtypes.issubdtype(get_aval(indices).dtype, np.integer):
        raise ValueError(f"jnp.take: indices must have an integer type, got "
                         f"{get_aval(indices).dtype.name}.")
    if mode == "wrap":
        # indices count modulo the axis length, so every one lands in bounds

        size = get_aval(a).shape[axis]
        indices = _ufuncs.remainder(indices, np.asarray(size, get_aval(indices).dtype))
        mode = "promise_in_bounds"
    index = (slice(None),) * axis + (indices,)
    # as in JAX, "clip" clamps negative indices to 0 instead of counting from the end
    return getitem(a, index, mode=mode, fill_value=fill_value,
                   normalize_indices=mode == "fill")


def along_axis_index(shape, axis: int, indices) -> tuple:
    """The advanced index that picks `indices` along `axis` and every position on the other
    axes (broadcasting iotas): what take_along_axis and put_along_axis index with."""
    index = []
    for d, n in enumerate(shape):
        if d == axis:
            index.append(indices)
        else:
            expanded = [1] * len(shape)
            expanded[d] = n
            index.append(np.arange(n, dtype=np.int32).reshape(expanded))
    return tuple(index)


def take_along_axis(arr, indices, axis: int | None = -1, mode=None, fill_value=None, *,
                    wrap_negative_indices: bool | None = None):
    """Elements of `arr` at `indices` along `axis`, pairing the other axes elementwise
    (`indices` broadcasts against `arr` except along `axis`).

    One gather, as JAX stages it: the paired axes are gather batching dimensions (no iota
    index is built), an index axis of size 1 takes the whole of `arr`'s axis, and an `arr`
    axis of size 1 is squeezed away and broadcast by the index.

    Args:
      arr: the array.
      indices: integer indices, of `arr`'s rank (1-d when `axis` is None).
      axis: the axis to take along; None flattens `arr` first.
      mode: out-of-bounds handling as for `x.at[...].get`: "fill" (the default, giving
        `fill_value`), "clip" or "promise_in_bounds".
      fill_value: the fill for "fill" mode (default NaN, or the dtype's extreme integer).
      wrap_negative_indices: whether negative indices count from the end (default: unless
        `mode` is "promise_in_bounds").

    Example:
      >>> take_along_axis(np.array([[10, 30, 20]]), np.array([[1, 2, 0]]), axis=1)
      array([[30, 20, 10]], dtype=int32)
    """
    check_arraylike("take_along_axis", arr, indices)
    arr, indices = as_array(arr), as_array(indices)
    index_dtype = get_aval(indices).dtype
    if not dtypes.issubdtype(index_dtype, np.integer):
        raise TypeError(f"take_along_axis indices must be of integer type, got {index_dtype}")
    if axis is None:
        if get_aval(indices).ndim != 1:
            raise ValueError(f"take_along_axis indices must be 1D if axis=None, got shape "
                             f"{get_aval(indices).shape}")
        arr = lax.reshape(arr, (get_aval(arr).size,))
        axis = 0
    shape, index_shape = get_aval(arr).shape, get_aval(indices).shape
    if len(index_shape) != len(shape):
        raise ValueError(f"jnp.take_along_axis: indices and arr must have the same number of "
                         f"dimensions, got {len(index_shape)} and {len(shape)}.")
    axis = canonicalize_axis(axis, len(shape), "jnp.take_along_axis")
    arr_shape = shape[:axis] + (1,) + shape[axis + 1:]
    out_shape = lax.broadcast_shapes(index_shape, arr_shape)
    if shape[axis] == 0:
        return lax.full(out_shape, 0, get_aval(arr).dtype)
    if wrap_negative_indices is None:
        wrap_negative_indices = mode != "promise_in_bounds"
    if wrap_negative_indices:  # the wrapped index must not overflow a narrow index dtype
        # a symbolic axis gets the default integer type, as in JAX
        wide = (dtypes.default_int_dtype() if _shape_poly.is_symbolic_dim(shape[axis])
                else np.int64 if shape[axis] > np.iinfo(np.int32).max else np.int32)
        indices = _normalize_index(convert_dtype(indices, wide), shape[axis])
    offset_dims, collapsed, operand_batching, index_batching, squeezed = [], [], [], [], []
    slice_sizes, gather_shape = [], []
    position, index_position = 0, 0  # in the squeezed `arr`, and in the gather's indices
    for d in range(len(shape)):
        if d == axis:
            collapsed.append(position)
            slice_sizes.append(1)
        elif index_shape[d] == 1:  # take the whole axis of `arr`
            offset_dims.append(d)
            slice_sizes.append(shape[d])
            position += 1
            continue
        elif shape[d] == 1:  # `arr` broadcasts along the index's axis
            squeezed.append(d)
            gather_shape.append(out_shape[d])
            index_position += 1
            continue
        else:  # paired elementwise
            operand_batching.append(position)
            index_batching.append(index_position)
            slice_sizes.append(1 if shape[d] else 0)
        gather_shape.append(out_shape[d])
        position += 1
        index_position += 1
    start = collapsed[0]
    dnums = lax.GatherDimensionNumbers(
        offset_dims=tuple(offset_dims), collapsed_slice_dims=(start,), start_index_map=(start,),
        operand_batching_dims=tuple(operand_batching),
        start_indices_batching_dims=tuple(index_batching))
    mode = "fill" if mode is None else mode
    if mode == "fill" and fill_value is None:
        fill_value = default_fill_value(get_aval(arr).dtype)
    elif mode != "fill":
        fill_value = None
    if squeezed:
        arr = lax.squeeze(arr, tuple(squeezed))
    return lax.gather(arr, lax.reshape(indices, (*gather_shape, 1)), dnums, tuple(slice_sizes),
                      mode=mode, fill_value=fill_value)


install_take_along_axis(take_along_axis)


def nonzero(a, *, size: int | None = None, fill_value=None):
    """The indices of the non-zero elements of `a`, one array per dimension.

    Args:
      a: the array.
      size: the static number of indices to return (needed under tracing); extra slots are
        filled with `fill_value` and extra non-zeros dropped.
      fill_value: the filler for `size` (default 0), a scalar or one per dimension.

    Returns:
      A tuple of 1-d integer arrays.

    Raises:
      ConcretizationTypeError: `a` is traced and `size` is None.

    Example:
      >>> nonzero(np.array([0, 3, 0, 4]))
      (array([1, 3], dtype=int32),)
    """
    check_arraylike("nonzero", a)
    a = as_array(a)
    shape = get_aval(a).shape
    if not shape:
        raise ValueError("jnp.nonzero: calling nonzero on 0-d arrays is not allowed; use "
                         "jnp.atleast_1d(a).nonzero().")
    if size is None:
        if not is_concrete(a):
            raise errors.ConcretizationTypeError(
                a, "The size argument of jnp.nonzero must be statically specified to use "
                "jnp.nonzero within JAX transformations")
        value = np.asarray(a.to_concrete_value() if isinstance(a, _trace.Tracer) else a)
        return tuple(i.astype(dtypes.default_int_dtype()) for i in np.nonzero(value))
    return _nonzero_static(a, operator.index(size), fill_value)


def _nonzero_static(a, size, fill_value):
    shape = get_aval(a).shape
    total = int(np.prod(shape, dtype=np.int64))
    int_dtype = dtypes.default_int_dtype()
    mask = lax.reshape(lax.ne(a, convert_dtype(np.asarray(0), get_aval(a).dtype)), (total,))
    # a stable sort of "is zero" puts the flat positions of the non-zeros first, in order
    is_zero = lax.convert_element_type(lax.eq(mask, False), np.int32)
    positions = lax.iota_p.bind(dtype=np.dtype(int_dtype), shape=(total,), dimension=0,
                                sharding=None)
    _, order = lax.sort((is_zero, positions), dimension=0, is_stable=True, num_keys=1)
    if size <= total:
        order = lax.slice(order, (0,), (size,))
    else:
        order = lax.concatenate([order, lax.broadcast_in_dim(np.asarray(0, get_aval(order).dtype),
                                                             (size - total,), ())], 0)
    count = cumsum(lax.convert_element_type(mask, int_dtype))[-1] if total else np.int32(0)
    valid = lax.lt(lax.iota(int_dtype, size), count)
    fills = np.broadcast_to(np.asarray(0 if fill_value is None else fill_value), (len(shape),))
    out, remaining = [], convert_dtype(order, int_dtype)
    strides = np.cumprod((1, *shape[::-1]))[::-1][1:]
    for d, stride in enumerate(strides):
        coordinate = lax.div(remaining, np.asarray(stride, int_dtype))
        remaining = lax.sub(remaining, lax.mul(coordinate, np.asarray(stride, int_dtype)))
        filler = lax.broadcast_in_dim(np.asarray(fills[d], int_dtype), (size,), ())
        out.append(lax.select_n(valid, filler, coordinate))
    return tuple(out)


def flatnonzero(a, *, size: int | None = None, fill_value=None):
    """The indices of the non-zero elements of the flattened `a`.

    Example:
      >>> flatnonzero(np.array([[0, 1], [1, 0]]))
      array([1, 2], dtype=int32)
    """
    check_arraylike("flatnonzero", a)
    a = as_array(a)
    return nonzero(lax.reshape(a, (get_aval(a).size,)), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size: int | None = None, fill_value=None):
    """The indices of the non-zero elements, as an `(N, a.ndim)` array.

    Example:
      >>> argwhere(np.array([[0, 1], [1, 0]]))
      array([[0, 1],
             [1, 0]], dtype=int32)
    """
    check_arraylike("argwhere", a)
    a = as_array(a)
    if get_aval(a).ndim == 0:
        (rows,) = nonzero(lax.reshape(a, (1,)), size=size, fill_value=fill_value)
        return lax.broadcast_in_dim(np.asarray(0, get_aval(rows).dtype),
                                    (get_aval(rows).shape[0], 0), ())
    columns = nonzero(a, size=size, fill_value=fill_value)
    columns = [lax.expand_dims(as_array(c), (1,)) for c in columns]
    return columns[0] if len(columns) == 1 else lax.concatenate(columns, 1)
