"""Sharding rules: the typed sharding of a primitive's result from its operands' (JAX's
explicit-sharding mode).

Core never builds shardings itself: an aval's `sharding` is an opaque hashable object from an
upper layer (pjit's `NamedSharding` on an `AbstractMesh`). The rules read it through a small
protocol and ask it for the result's:

- `sharding.aval_partitions`: one entry per dimension (None, an axis name, or a tuple of names);
- `sharding.with_aval_partitions(entries)`: the same mesh with other entries;
- `sharding.aval_mesh`: the (abstract) mesh, compared between operands;
- `sharding.aval_axis_sizes`: mesh axis name -> size (reshape's rule splits axes);
- `sharding.as_aval_sharding(ndim)`: for an `out_sharding=` a user passes, the sharding the
  result's type gets (None when it splits no dimension along an Explicit axis).

Operands without a sharding (None, the default everywhere outside Explicit meshes) count as
unsplit, so a rule over unsharded operands returns None and costs one test.
"""

from __future__ import annotations

from collections.abc import Sequence

from laminax_core._avals import ShapedArray, ShardingTypeError

__all__ = [
    "axis_inserted",
    "axis_removed",
    "broadcast_in_dim_sharding",
    "conv_sharding",
    "dynamic_update_slice_sharding",
    "gather_sharding",
    "leading_added",
    "leading_removed",
    "same_sharding",
    "unsplit_axis_sharding",
    "with_entries",
    "broadcasting_sharding",
    "dot_general_sharding",
    "reduce_sharding",
    "requested_sharding",
    "sliced_sharding",
    "reshape_sharding",
    "transpose_sharding",
]


def _entries(aval: ShapedArray) -> tuple:
    s = aval.sharding
    return (None,) * len(aval.shape) if s is None else s.aval_partitions


def _axes_of(entry) -> tuple:
    if entry is None:
        return ()
    return entry if isinstance(entry, tuple) else (entry,)


def _check_one_mesh(name: str, avals) -> object | None:
    """The operands' common sharding template (any one of them), or None when none has one."""
    template = None
    for a in avals:
        s = a.sharding
        if s is None:
            continue
        if template is not None and template.aval_mesh != s.aval_mesh:
            raise ShardingTypeError(
                f"Mesh for all inputs should be equal. Got one mesh: {template.aval_mesh} and "
                f"another mesh: {s.aval_mesh}; reshard the operands onto one mesh."
            )
        template = template or s
    return template


def _build(name: str, template, entries: Sequence, out_shape, out_dtype, avals):
    """The result's sharding: None when unsplit; JAX's error when an axis is used twice."""
    entries = tuple(entries)
    if all(e is None for e in entries):
        return None
    used = [ax for e in entries for ax in _axes_of(e)]
    if len(used) != len(set(used)):
        operands = ", ".join(a.str_short() for a in avals)
        shown = ShapedArray(out_shape, out_dtype, sharding=_Shown(entries)).str_short()
        raise ShardingTypeError(
            f"{name} operation with inputs: {operands} produces an illegally sharded result: "
            f"{shown}; a mesh axis can split only one dimension, so reshard an operand."
        )
    return template.with_aval_partitions(entries)


class _Shown:
    """Entries to print in an error message (not a sharding any aval keeps)."""

    def __init__(self, entries):
        self.aval_partitions = entries


def broadcasting_sharding(name: str, avals, out_shape, out_dtype):
    """An elementwise result's sharding: per dimension, the operands' common entry (size-1
    unsplit dimensions broadcast).

    Raises:
      ShardingTypeError: two operands split one dimension differently, or on different meshes.
    """
    template = _check_one_mesh(name, avals)
    if template is None:
        return None
    ranked = [a for a in avals if a.shape]
    specs = [_entries(a) for a in ranked]
    result = []
    for i in range(len(out_shape)):
        column = [s[i] for s in specs]
        if all(c == column[0] for c in column):
            result.append(column[0])
            continue
        nontrivial = [c for c, a in zip(column, ranked, strict=True) if not (a.shape[i] == 1 and c is None)]
        if not nontrivial or all(c == nontrivial[0] for c in nontrivial):
            result.append(nontrivial[0] if nontrivial else None)
            continue
        chosen = None
        for c in column:
            if chosen is None and c is not None:
                chosen = c
            elif chosen is not None and c is not None and chosen != c:
                shown = ", ".join(str(tuple(s)) for s in specs)
                raise ShardingTypeError(
                    f"{name} got incompatible shardings for broadcasting: {shown}; reshard one "
                    "operand to the other's sharding first."
                )
        result.append(chosen)
    return _build(name, template, result, out_shape, out_dtype, avals)


def dot_general_sharding(lhs, rhs, dimension_numbers, out_shape, out_dtype):
    """dot_general's result sharding: batch dims, then lhs's free dims, then rhs's.

    Raises:
      ShardingTypeError: batch or contracting dims split differently, contracting dims split on
        both sides (ambiguous: pass `out_sharding=`), or different meshes.
    """
    template = _check_one_mesh("dot_general", (lhs, rhs))
    if template is None:
        return None
    (lc, rc), (lb, rb) = dimension_numbers
    ls, rs = _entries(lhs), _entries(rhs)
    lcs, rcs = tuple(ls[i] for i in lc), tuple(rs[i] for i in rc)
    lbs, rbs = tuple(ls[i] for i in lb), tuple(rs[i] for i in rb)
    for a, b, what in ((lbs, rbs, "batch"), (lcs, rcs, "contracting")):
        if any(x is not None and y is not None and x != y for x, y in zip(a, b, strict=True)):
            kind = "lhs batch dimensions and rhs batch dimensions to have the consistent" if what == "batch" else "contracting dimensions to have consistent"
            raise ShardingTypeError(
                f"dot_general requires {kind} sharding, got {a} and {b}; reshard one operand."
            )
    if any(x is not None and y is not None for x, y in zip(lcs, rcs, strict=True)):
        raise ShardingTypeError(
            "Contracting dimensions are sharded and it is ambiguous how the output should be "
            "sharded. Please specify the output sharding via the `out_sharding` parameter. Got "
            f"lhs_contracting_spec={lcs} and rhs_contracting_spec={rcs}"
        )
    l_free = [ls[i] for i in range(len(ls)) if i not in (*lc, *lb)]
    r_free = [rs[i] for i in range(len(rs)) if i not in (*rc, *rb)]
    entries = (*lbs, *l_free, *r_free)
    return _build("dot_general", template, entries, out_shape, out_dtype, (lhs, rhs))


def reduce_sharding(x, axes, out_shape, out_dtype):
    """A reduction's result sharding: the operand's without the reduced dimensions."""
    if x.sharding is None:
        return None
    gone = set(axes)
    entries = [e for i, e in enumerate(_entries(x)) if i not in gone]
    return _build("reduce", x.sharding, entries, out_shape, out_dtype, (x,))


def transpose_sharding(x, permutation, out_shape):
    """transpose's result sharding: the operand's entries permuted."""
    if x.sharding is None:
        return None
    ls = _entries(x)
    return _build("transpose", x.sharding, [ls[i] for i in permutation], out_shape, x.dtype, (x,))


def sliced_sharding(x, out_shape, name: str):
    """A slice's result sharding: the operand's, where each split dimension that changes size
    still divides over its mesh axes.

    Raises:
      ShardingTypeError: a split dimension's new size does not divide over its mesh axes.
    """
    if x.sharding is None:
        return None
    sizes = x.sharding.aval_axis_sizes
    for old, new, entry in zip(x.shape, out_shape, _entries(x), strict=True):
        parts = 1
        for ax in _axes_of(entry):
            parts *= sizes[ax]
        if old != new and entry is not None and new % parts:
            raise ShardingTypeError(
                f"{name} on sharded dims where out dim ({new}) is not divisible by mesh axes "
                f"({parts}) with spec ({entry}) is not implemented. Got input "
                f"type={x.str_short()} and output shape={tuple(out_shape)}; reshard first."
            )
    return x.sharding


def requested_sharding(sharding, ndim: int):
    """The typed sharding an `out_sharding=` parameter asks for, or None (none given, or one
    that does not describe a type)."""
    if sharding is None or not hasattr(sharding, "as_aval_sharding"):
        return None
    return sharding.as_aval_sharding(ndim)


def broadcast_in_dim_sharding(x, shape, broadcast_dimensions):
    """broadcast_in_dim's result sharding: the operand's entries at their new positions, the
    added dimensions unsplit."""
    if x.sharding is None:
        return None
    entries = [None] * len(shape)
    for e, d in zip(_entries(x), broadcast_dimensions, strict=True):
        entries[d] = e
    return _build("broadcast_in_dim", x.sharding, entries, shape, x.dtype, (x,))


def _reshape_error(x, new_sizes):
    raise ShardingTypeError(
        "This reshape is not supported. Please specify the sharding of the output via the "
        f"`out_sharding` argument of jax.lax.reshape. Got operand type: {x.str_short()}, new "
        f"sizes: {tuple(new_sizes)}"
    )


def _split_groups(short: tuple, long: tuple) -> list[tuple[int, list[int]]] | None:
    """Each dimension of `short` with the dimensions of `long` it becomes: equal sizes pair up,
    and exactly one dimension splits into a run (with the size-1 dimensions right after it).
    None when the shapes are not related that way."""
    common = 0  # trailing size-1 dimensions of both pair up last
    while common < min(len(short), len(long)) and short[-1 - common] == long[-1 - common] == 1:
        common += 1
    head_s, head_l = short[: len(short) - common], long[: len(long) - common]
    groups, j, splits = [], 0, 0
    for i, size in enumerate(head_s):
        if j >= len(head_l):
            return None
        if size == head_l[j]:
            groups.append((i, [j]))
            j += 1
            continue
        splits += 1
        run, product = [j], head_l[j]
        j += 1
        while product != size or (j < len(head_l) and head_l[j] == 1):
            if product > size or j >= len(head_l):
                return None
            run.append(j)
            product *= head_l[j]
            j += 1
        groups.append((i, run))
    if j != len(head_l) or splits != 1:
        return None
    tail = range(common)
    return groups + [(len(head_s) + k, [len(head_l) + k]) for k in tail]


def _assign_axes(x, axes: tuple, sizes: list, new_sizes, axis_size) -> list:
    """Mesh `axes` (major first) handed out to consecutive output dims of `sizes`: each takes
    axes while it has parts left to split."""
    queue, out = list(axes), []
    for size in sizes:
        taken = []
        while size > 1 and queue:
            n = axis_size(queue[0])
            if size % n:
                _reshape_error(x, new_sizes)
            size //= n
            taken.append(queue.pop(0))
        out.append(None if not taken else taken[0] if len(taken) == 1 else tuple(taken))
    if queue:
        _reshape_error(x, new_sizes)
    return out


def reshape_sharding(x, new_sizes, dimensions):
    """reshape's result sharding, where JAX has a rule: size-1 dimensions added or removed, or
    one dimension split into several or several merged into one (the split dimension's mesh
    axes go to the new dimensions, major first).

    Raises:
      ShardingTypeError: any other reshape of a split array (give its `out_sharding`).
    """
    if x.sharding is None:
        return None
    entries = _entries(x)
    new_sizes = tuple(new_sizes)
    if [d for d in x.shape if d != 1] == [d for d in new_sizes if d != 1]:
        kept = iter(e for d, e in zip(x.shape, entries, strict=True) if d != 1)
        result = [None if d == 1 else next(kept) for d in new_sizes]
        return _build("reshape", x.sharding, result, new_sizes, x.dtype, (x,))
    axis_size = x.sharding.aval_axis_sizes.__getitem__
    result = []
    if len(new_sizes) > len(x.shape):  # one dimension split into several
        groups = _split_groups(x.shape, new_sizes)
        if groups is None:
            _reshape_error(x, new_sizes)
        for i, run in groups:
            if len(run) == 1:
                result.append(entries[i])
            elif entries[i] is None:
                result.extend([None] * len(run))
            elif dimensions is not None:
                _reshape_error(x, new_sizes)
            else:
                sizes = [new_sizes[d] for d in run]
                result.extend(_assign_axes(x, _axes_of(entries[i]), sizes, new_sizes, axis_size))
    elif len(new_sizes) < len(x.shape):  # several dimensions merged into one
        groups = _split_groups(new_sizes, x.shape)
        if groups is None:
            _reshape_error(x, new_sizes)
        for j, run in groups:
            merged = [entries[d] for d in run]
            if len(run) == 1 or all(e is None for e in merged):
                result.append(merged[0] if len(run) == 1 else None)
                continue
            if dimensions is not None:
                _reshape_error(x, new_sizes)
            while merged[-1] is None:  # only the major dimensions may be split
                merged.pop()
            if any(e is None for e in merged):
                _reshape_error(x, new_sizes)
            axes = tuple(ax for e in merged for ax in _axes_of(e))
            result.extend(_assign_axes(x, axes, [new_sizes[j]], new_sizes, axis_size))
    else:
        _reshape_error(x, new_sizes)
    return _build("reshape", x.sharding, result, new_sizes, x.dtype, (x,))


def _spec_text(entries) -> str:
    return "P(" + ", ".join(repr(e) for e in entries) + ")"


def _typed(template, entries):
    """`entries` on `template`'s mesh, or None when they split nothing (or no template)."""
    if template is None or all(e is None for e in entries):
        return None
    return template.with_aval_partitions(tuple(entries))


def same_sharding(name: str, avals):
    """The common sharding of operands that must all be laid out alike (concatenate).

    Raises:
      ShardingTypeError: two operands split differently.
    """
    template = _check_one_mesh(name, avals)
    if template is None:
        return None
    first = _entries(avals[0])
    for a in avals[1:]:
        if _entries(a) != first:
            shown = ", ".join(a.str_short() for a in avals)
            raise ShardingTypeError(
                f"All operands should have the same sharding. Got shardings {shown} in {name}; "
                "reshard the operands to one sharding first."
            )
    return _typed(template, first)


def unsplit_axis_sharding(x, axis: int, name: str, message: str | None = None):
    """The operand's sharding, for ops that run along `axis` (sort, cumulative ops), which must
    not be split.

    Raises:
      ShardingTypeError: `axis` is split.
    """
    if x.sharding is None:
        return None
    if _entries(x)[axis] is not None:
        raise ShardingTypeError(
            message or f"{name}: the input should be unsharded over the axis being reduced. Got "
            f"input type={x.str_short()} and axis={axis}; reshard it first."
        )
    return x.sharding


def dynamic_update_slice_sharding(x, update):
    """dynamic_update_slice's result: the operand's sharding, which the update must share.

    Raises:
      ShardingTypeError: the update is laid out differently from the operand.
    """
    if x.sharding is None and update.sharding is None:
        return None
    _check_one_mesh("dynamic_update_slice", (x, update))
    if _entries(x) != _entries(update):
        raise ShardingTypeError(
            "dynamic_update_slice operand sharding must be equal to update sharding, got "
            f"operand sharding {x.str_short()} and update sharding {update.str_short()}; "
            "reshard the update to the operand's sharding."
        )
    return x.sharding


def leading_removed(aval):
    """The type of one slice of `aval` along its leading axis (scan's `xs`).

    Raises:
      ValueError: the leading axis is split (JAX's message).
    """
    if aval.sharding is None:
        return aval.update(shape=aval.shape[1:])
    entries = _entries(aval)
    if entries[0] is not None:
        raise ValueError(
            f"0th dimension of all xs should be replicated. Got {_spec_text(entries)}; reshard "
            "xs so that the scanned axis is not split."
        )
    return aval.update(shape=aval.shape[1:], sharding=_typed(aval.sharding, entries[1:]))


def leading_added(aval, length: int):
    """The type of `length` values of type `aval` stacked along a new leading axis (scan's ys)."""
    if aval.sharding is None:
        return aval.update(shape=(length, *aval.shape))
    return aval.update(shape=(length, *aval.shape),
                       sharding=_typed(aval.sharding, (None, *_entries(aval))))


def conv_sharding(lhs, rhs, dimension_numbers, feature_group_count, batch_group_count,
                  out_shape, out_dtype):
    """conv_general_dilated's result sharding: the lhs's batch and spatial entries; the kernel
    and the input features unsplit (otherwise the result's layout is ambiguous).

    Raises:
      ShardingTypeError: a split kernel or input-feature dimension, or grouped convolutions of
        split operands (pass `out_sharding=`).
    """
    template = _check_one_mesh("conv_general_dilated", (lhs, rhs))
    if template is None:
        return None
    lhs_spec, _, out_spec = dimension_numbers
    ls = _entries(lhs)
    if (any(e is not None for e in _entries(rhs)) or ls[lhs_spec[1]] is not None
            or feature_group_count != 1 or batch_group_count != 1):
        raise ShardingTypeError(
            "Please specify the output sharding via `out_sharding` parameter of "
            f"`conv_general_dilated` (got lhs={lhs.str_short()}, rhs={rhs.str_short()})."
        )
    entries = [None] * len(out_shape)
    entries[out_spec[0]] = ls[lhs_spec[0]]
    for i, o in zip(lhs_spec[2:], out_spec[2:], strict=True):
        entries[o] = ls[i]
    result = _build("conv_general_dilated", template, entries, out_shape, out_dtype, (lhs, rhs))
    sizes = template.aval_axis_sizes
    for size, e in zip(out_shape, entries, strict=True):
        parts = 1
        for ax in _axes_of(e):
            parts *= sizes[ax]
        if size % parts:
            raise ShardingTypeError(
                f"conv_general_dilated: output dimension of size {size} does not divide over "
                f"mesh axes {e}; pass `out_sharding=` or reshard the lhs."
            )
    return result


def _gather_error(x, idx):
    raise ShardingTypeError(
        "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather "
        "indexing as out sharding could not be resolved unambiguously (or would require "
        f"collectives on inputs). Got operand={x.str_short()}, indices={idx.str_short()}"
    )


def gather_sharding(x, idx, dimension_numbers, slice_sizes, out_shape, out_dtype):
    """gather's result sharding: dimensions of the operand that are not indexed (or are taken
    whole) keep their split at their offset positions; the batch dimensions take the indices'
    split (or the operand's, for batching dimensions).

    Raises:
      ShardingTypeError: a split operand dimension is indexed into, the indices' batching
        dimensions disagree with the operand's, or the index vectors are split.
    """
    template = _check_one_mesh("gather", (x, idx))
    if template is None:
        return None
    dn = dimension_numbers
    xs, ids = _entries(x), list(_entries(idx))
    if any(slice_sizes[d] != x.shape[d] and xs[d] is not None for d in dn.start_index_map):
        _gather_error(x, idx)
    for od, i in zip(dn.operand_batching_dims, dn.start_indices_batching_dims, strict=True):
        if xs[od] is not None and ids[i] is not None and xs[od] != ids[i]:
            _gather_error(x, idx)
        ids[i] = ids[i] or xs[od]
    if any(e is not None for i, e in enumerate(_entries(idx))
           if i not in dn.start_indices_batching_dims):
        _gather_error(x, idx)
    offsets = iter(xs[d] for d in range(x.ndim)
                   if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims)
    batch = iter(ids[:-1])
    entries = [next(offsets) if d in dn.offset_dims else next(batch)
               for d in range(len(out_shape))]
    return _build("gather", template, entries, out_shape, out_dtype, (x, idx))


def axis_removed(x, axis: int, name: str):
    """The sharding of a piece of `x` without dimension `axis` (unstack), which must be unsplit.

    Raises:
      ShardingTypeError: `axis` is split.
    """
    if x.sharding is None:
        return None
    entries = list(_entries(x))
    if entries.pop(axis) is not None:
        raise ShardingTypeError(
            f"{name}: dimension {axis} of {x.str_short()} is split over the mesh; reshard it "
            "first."
        )
    return _typed(x.sharding, entries)


def axis_inserted(name: str, avals, axis: int):
    """The sharding of operands laid out alike stacked along a new unsplit dimension `axis`."""
    common = same_sharding(name, avals)
    if common is None:
        return None
    entries = list(common.aval_partitions)
    entries.insert(axis, None)
    return _typed(common, entries)


def with_entries(x, entries):
    """`x`'s sharding with other entries (None when `x` is untyped or they split nothing)."""
    return _typed(x.sharding, entries)
