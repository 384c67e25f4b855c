"""Sharding rules: the typed sharding of a primitive's result from its operands' (JAX's
explicit-sharding mode).

Core never builds shardings itself: an aval's `sharding` is an opaque hashable object from an
upper layer (pjit's `NamedSharding` on an `AbstractMesh`). The rules read it through a small
protocol and ask it for the result's:

- `sharding.aval_partitions`: one entry per dimension (None, an axis name, or a tuple of names);
- `sharding.with_aval_partitions(entries)`: the same mesh with other entries;
- `sharding.aval_mesh`: the (abstract) mesh, compared between operands.

Operands without a sharding (None, the default everywhere outside Explicit meshes) count as
unsplit, so a rule over unsharded operands returns None and costs one test.
"""

from __future__ import annotations

from collections.abc import Sequence

from laminax_core._avals import ShapedArray, ShardingTypeError

__all__ = [
    "broadcasting_sharding",
    "dot_general_sharding",
    "reduce_sharding",
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
