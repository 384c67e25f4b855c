"""Collectives that move data between the positions of a named axis: ppermute, pbroadcast,
psum_scatter (`reduce_scatter`), all_to_all, and `axis_size`.

As for psum (`_collectives.py`), their batching rules are their meaning: under
`vmap(..., axis_name=name)` the positions of the named axis are the entries of the batch
dimension, so moving data between positions is indexing along it. Under `shard_map` the same
primitives lower to XLA's collective operations (laminax-pjit), and the vmap meaning is the
oracle the lowering is tested against.
"""

from __future__ import annotations

import numpy as np
from laminax_pytree import tree_map

from laminax_core import _manual_axes, _trace
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters import batching
from laminax_core._interpreters.batching import bdim_at_front
from laminax_core._interpreters.jvp import Zero, instantiate_zeros, zeros_like_aval
from laminax_core._interpreters.transpose import is_undefined_primal
from laminax_core._primitive import Primitive, define_primitive, linear
from laminax_core.lax._bitwise import bitwise_and
from laminax_core.lax._elementwise import add, convert_element_type, ge, lt
from laminax_core.lax import _collectives
from laminax_core.lax._collectives import _index_groups, all_gather_p, axis_index, psum_p
from laminax_core.lax._elementwise import eq, mul, select_n
from laminax_core.lax._joining import concatenate
from laminax_core.lax._reductions import reduce_or, reduce_sum
from laminax_core.lax._slicing import index_in_dim, slice_in_dim
from laminax_core.lax._structural import (
    broadcast_in_dim,
    expand_dims,
    full,
    iota,
    reshape,
    squeeze,
    transpose,
)

__all__ = [
    "all_to_all",
    "all_to_all_p",
    "ragged_all_to_all",
    "ragged_all_to_all_p",
    "axis_size",
    "pbroadcast",
    "pbroadcast_p",
    "ppermute",
    "ppermute_p",
    "pshuffle",
    "psum_scatter",
    "pswapaxes",
    "reduce_scatter_p",
]


def _names(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, tuple | list) else (axis_name,)


def axis_size(axis_name) -> int:
    """The size of the named axis `axis_name` (the product of the sizes for a tuple of names),
    as a Python int."""
    size = 1
    for name in _names(axis_name):
        size *= _trace.find_axis_data(name).size
    return size


def _group_size(axis_name, axis_index_groups):
    """The number of positions a collective combines (the group size with
    `axis_index_groups`), and the groups as tuples."""
    size = axis_size(axis_name)
    groups = _index_groups(axis_index_groups, size)
    return (size if groups is None else len(groups[0])), groups


def _no_groups_under_vmap(axis_index_groups) -> None:
    if axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups not supported in vmap")


def _check_bound(axis_name) -> None:
    for name in _names(axis_name):
        _trace.find_axis_data(name)  # NameError for an unbound name


def _unbound_reference(name):
    def rule(*args, axis_name, **params):
        raise NameError(
            f"Found an unbound axis name: {_names(axis_name)[0]}. {name} must run inside a "
            f"transformation that binds the axis (vmap(..., axis_name=...), shard_map, pmap)."
        )

    return rule


def _only_mine(primitive_name, axis_data, axis_name) -> bool:
    """Whether this vmap's axis is the collective's; several names at once are only supported
    where each is reduced separately (psum), not for data movement."""
    names = _names(axis_name)
    if axis_data.name not in names:
        return False
    if len(names) > 1:
        raise NotImplementedError(
            f"{primitive_name} over several named axes {names} under vmap: apply it over one "
            "axis at a time, or run it under shard_map, which lowers it to one XLA collective."
        )
    return True


# ----- ppermute ---------------------------------------------------------------------------


def ppermute(x, axis_name, perm):
    """Sends each position's value of `x` (a pytree) to another position of the named axis:
    `perm` lists `(source, destination)` pairs; destinations no pair names receive zeros."""
    perm = tuple((int(s), int(d)) for s, d in perm)
    size = axis_size(axis_name)
    sources = [s for s, _ in perm]
    destinations = [d for _, d in perm]
    if len(set(sources)) != len(sources) or len(set(destinations)) != len(destinations):
        raise ValueError(
            f"ppermute sources and destinations must be unique, got {perm}: each position sends "
            "to at most one position and receives from at most one."
        )
    if any(not 0 <= i < size for i in (*sources, *destinations)):
        raise ValueError(
            f"ppermute perm {perm} names positions outside the axis {axis_name!r} of size {size}."
        )
    return tree_map(lambda leaf: ppermute_p.bind(leaf, axis_name=_names(axis_name), perm=perm), x)


def pshuffle(x, axis_name, perm):
    """`ppermute` with the permutation given by sources: position `i` receives position
    `perm[i]`'s value; `perm` must be a permutation of range(axis size)."""
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)), strict=True)))


def _ppermute_abstract_eval(x, axis_name, perm):
    _check_bound(axis_name)
    return x


def _ppermute_batch(axis_data, args, dims, axis_name, perm):
    (x,), (d,) = args, dims
    if not _only_mine("ppermute", axis_data, axis_name):
        return ppermute_p.bind(x, axis_name=axis_name, perm=perm), d
    x = bdim_at_front(x, d, axis_data.size)
    aval = get_aval(x)
    source_of = {dst: src for src, dst in perm}
    pieces = [
        slice_in_dim(x, source_of[i], source_of[i] + 1)
        if i in source_of
        else full((1, *aval.shape[1:]), 0, aval.dtype)
        for i in range(axis_data.size)
    ]
    return concatenate(pieces, 0), 0


def _ppermute_transpose(ct, x, axis_name, perm):
    inverse = tuple((d, s) for s, d in perm)
    return [ppermute_p.bind(ct, axis_name=axis_name, perm=inverse)]


ppermute_p = define_primitive(
    "ppermute",
    abstract_eval=_ppermute_abstract_eval,
    reference=_unbound_reference("ppermute"),
    jvp=linear,
    transpose=_ppermute_transpose,
    batch=_ppermute_batch,
)
batching.collective_axis_names[ppermute_p] = lambda params: _names(params["axis_name"])


# ----- pbroadcast -------------------------------------------------------------------------


def pbroadcast(x, axis_name, source):
    """Every position of the named axis gets the value of `x` (a pytree) at position
    `source`."""
    size = axis_size(axis_name)
    if not 0 <= source < size:
        raise ValueError(f"pbroadcast source {source} is outside the axis of size {size}.")
    return tree_map(lambda leaf: pbroadcast_p.bind(leaf, axis_name=axis_name, source=source), x)


def _pbroadcast_abstract_eval(x, axis_name, source):
    _check_bound(axis_name)
    return x


def _pbroadcast_batch(axis_data, args, dims, axis_name, source):
    (x,), (d,) = args, dims
    if not _only_mine("pbroadcast", axis_data, axis_name):
        return pbroadcast_p.bind(x, axis_name=axis_name, source=source), d
    if d is None:
        return x, None
    return index_in_dim(x, source, d, keepdims=False), None


def _pbroadcast_transpose(ct, x, axis_name, source):
    # every position's output reads position `source`: the cotangents sum there

    aval = get_aval(ct)
    (total,) = psum_p.bind(ct, axes=_names(axis_name), axis_index_groups=None)
    here = eq(axis_index(axis_name), np.int32(source))
    return [select_n(here, full(aval.shape, 0, aval.dtype), total)]


pbroadcast_p = define_primitive(
    "pbroadcast",
    abstract_eval=_pbroadcast_abstract_eval,
    reference=_unbound_reference("pbroadcast"),
    jvp=linear,
    transpose=_pbroadcast_transpose,
    batch=_pbroadcast_batch,
)
batching.collective_axis_names[pbroadcast_p] = lambda params: _names(params["axis_name"])


# ----- psum_scatter -----------------------------------------------------------------------


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """The psum of `x` (a pytree) over the named axis, of which position `i` keeps only block
    `i` along `scatter_dimension` (that dimension removed when not `tiled`)."""
    size, groups = _group_size(axis_name, axis_index_groups)

    def bind(leaf):
        shape = get_aval(leaf).shape
        if not -len(shape) <= scatter_dimension < len(shape):
            raise ValueError(
                f"psum_scatter scatter_dimension={scatter_dimension} is out of range for an "
                f"operand of shape {shape}."
            )
        dim = scatter_dimension % len(shape)
        if tiled and shape[dim] % size:
            raise ValueError(
                f"psum_scatter: the scatter dimension of size {shape[dim]} must be divisible by "
                f"the size of the named axis {axis_name!r} ({size})."
            )
        if not tiled and shape[dim] != size:
            raise ValueError(
                f"psum_scatter requires the scatter dimension (of size {shape[dim]}) to equal the "
                f"size of the named axis {axis_name!r} ({size}) when tiled=False."
            )
        return reduce_scatter_p.bind(
            leaf, scatter_dimension=dim, axis_name=axis_name,
            axis_index_groups=groups, axis_size=size, tiled=tiled,
        )

    return tree_map(bind, x)


def _reduce_scatter_abstract_eval(x, scatter_dimension, axis_name, axis_index_groups, axis_size,
                                  tiled):
    _check_bound(axis_name)
    shape = list(x.shape)
    if tiled:
        shape[scatter_dimension] //= axis_size
    else:
        del shape[scatter_dimension]
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _reduce_scatter_batch(axis_data, args, dims, scatter_dimension, axis_name, axis_index_groups,
                          axis_size, tiled):
    (x,), (d,) = args, dims
    params = dict(scatter_dimension=scatter_dimension, axis_name=axis_name,
                  axis_index_groups=axis_index_groups, axis_size=axis_size, tiled=tiled)
    if axis_data.name in _names(axis_name):
        _no_groups_under_vmap(axis_index_groups)
    if not _only_mine("psum_scatter", axis_data, axis_name):
        if d is None:
            return reduce_scatter_p.bind(x, **params), None
        x = batching.move_bdim(x, d, 0)
        return reduce_scatter_p.bind(x, **{**params, "scatter_dimension": scatter_dimension + 1}), 0
    if d is None:
        total = mul(np.asarray(axis_data.size, get_aval(x).dtype), x)
    else:
        total = reduce_sum(x, (d,))
    shape = get_aval(total).shape
    if tiled:
        block = shape[scatter_dimension] // axis_data.size
        split = (*shape[:scatter_dimension], axis_data.size, block, *shape[scatter_dimension + 1:])
        total = reshape(total, split)
    return batching.move_bdim(total, scatter_dimension, 0), 0


def _reduce_scatter_transpose(ct, x, scatter_dimension, axis_name, axis_index_groups, axis_size,
                              tiled):
    return [all_gather_p.bind(ct, all_gather_dimension=scatter_dimension, axis_name=axis_name,
                              axis_index_groups=axis_index_groups, axis_size=axis_size,
                              tiled=tiled)]


reduce_scatter_p = define_primitive(
    "reduce_scatter",
    abstract_eval=_reduce_scatter_abstract_eval,
    reference=_unbound_reference("psum_scatter"),
    jvp=linear,
    transpose=_reduce_scatter_transpose,
    batch=_reduce_scatter_batch,
)
batching.collective_axis_names[reduce_scatter_p] = lambda params: _names(params["axis_name"])


# ----- all_to_all -------------------------------------------------------------------------


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Position `i` of the named axis receives block `i` (along `split_axis`) of every
    position's `x`, stacked (concatenated when `tiled`) along `concat_axis` in position order.

    Untiled, `x.shape[split_axis]` must equal the axis size; the split axis is removed and the
    stacked axis inserted at `concat_axis`. Tiled, `split_axis` shrinks and `concat_axis` grows
    by the axis size.
    """
    size, groups = _group_size(axis_name, axis_index_groups)

    def bind(leaf, split_axis=split_axis, concat_axis=concat_axis):
        shape = get_aval(leaf).shape
        if tiled:
            if shape[split_axis] % size:
                raise ValueError(
                    f"The size of all_to_all split_axis ({shape[split_axis]}) has to be "
                    f"divisible by the size of the named axis {axis_name} ({size})"
                )
        else:
            if shape[split_axis] != size:
                raise ValueError(
                    "all_to_all requires the size of the mapped axis axis_name to equal "
                    f"x.shape[split_axis], but they are {size} and {shape[split_axis]} "
                    "respectively."
                )
            # untiled is tiled over a new size-1 axis at concat_axis, squeezed afterwards
            if split_axis < concat_axis:
                concat_axis += 1
                leaf = expand_dims(leaf, (concat_axis,))
            elif concat_axis < split_axis:
                leaf = expand_dims(leaf, (concat_axis,))
                split_axis += 1
        out = all_to_all_p.bind(leaf, split_axis=split_axis, concat_axis=concat_axis,
                                axis_name=axis_name, axis_index_groups=groups, tiled=tiled)
        if not tiled and split_axis != concat_axis:
            out = squeeze(out, (split_axis,))
        return out

    return tree_map(bind, x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swaps the named axis with positional axis `axis` (whose size must be the named
    axis's): `all_to_all(x, axis_name, axis, axis)`."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def _all_to_all_abstract_eval(x, split_axis, concat_axis, axis_name, axis_index_groups, tiled):
    _check_bound(axis_name)
    size = axis_size(axis_name) if axis_index_groups is None else len(axis_index_groups[0])
    shape = list(x.shape)
    shape[split_axis] //= size
    shape[concat_axis] *= size
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _all_to_all_batch(axis_data, args, dims, split_axis, concat_axis, axis_name,
                      axis_index_groups, tiled):
    (x,), (d,) = args, dims
    params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups, tiled=tiled)
    if axis_data.name in _names(axis_name):
        _no_groups_under_vmap(axis_index_groups)
    if not _only_mine("all_to_all", axis_data, axis_name):
        if d is None:
            return all_to_all_p.bind(x, split_axis=split_axis, concat_axis=concat_axis,
                                     **params), None
        x = batching.move_bdim(x, d, 0)
        return all_to_all_p.bind(x, split_axis=split_axis + 1, concat_axis=concat_axis + 1,
                                 **params), 0
    n = axis_data.size
    x = bdim_at_front(x, d, n)  # (sender j, *shape)
    shape = get_aval(x).shape[1:]
    block = shape[split_axis] // n
    # split the split axis into (receiver i, block): (j, ..., i, block, ...)
    x = reshape(x, (n, *shape[:split_axis], n, block, *shape[split_axis + 1:]))
    rank = len(shape) + 2
    i_pos = 1 + split_axis
    # receiver first, then the per-receiver value with the senders j just before concat_axis
    value_dims = [p for p in range(1, rank) if p != i_pos]  # the receiver's value, block-sized
    order = [i_pos, *value_dims[:concat_axis], 0, *value_dims[concat_axis:]]
    x = transpose(x, tuple(order))
    out_shape = list(shape)
    out_shape[split_axis] = block
    out_shape[concat_axis] *= n
    return reshape(x, (n, *out_shape)), 0


def _all_to_all_transpose(ct, x, split_axis, concat_axis, axis_name, axis_index_groups, tiled):
    return [all_to_all_p.bind(ct, split_axis=concat_axis, concat_axis=split_axis,
                              axis_name=axis_name, axis_index_groups=axis_index_groups,
                              tiled=tiled)]


all_to_all_p = define_primitive(
    "all_to_all",
    abstract_eval=_all_to_all_abstract_eval,
    reference=_unbound_reference("all_to_all"),
    jvp=linear,
    transpose=_all_to_all_transpose,
    batch=_all_to_all_batch,
)
batching.collective_axis_names[all_to_all_p] = lambda params: _names(params["axis_name"])


# ----- ragged_all_to_all --------------------------------------------------------------------


def ragged_all_to_all(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
                      *, axis_name, axis_index_groups=None):
    """Sends ragged slices of `operand`'s leading dimension to every position of the named
    axis: slice `j` (`send_sizes[j]` rows from `input_offsets[j]`) goes to position `j`, which
    writes it into its `output` at `output_offsets[j]`; `recv_sizes[j]` rows come from position
    `j`. Rows of `output` nothing is written to keep their values.

    XLA implements it on GPU and TPU; XLA's CPU runtime refuses the program (as with JAX).
    """
    names = _names(axis_name)
    return ragged_all_to_all_p.bind(
        operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
        axis_name=names,
        axis_index_groups=None if axis_index_groups is None else
        tuple(tuple(g) for g in axis_index_groups))


def _ragged_all_to_all_abstract_eval(operand, output, input_offsets, send_sizes,
                                     output_offsets, recv_sizes, *, axis_name,
                                     axis_index_groups):
    for name, aval in (("input_offsets", input_offsets), ("send_sizes", send_sizes),
                       ("output_offsets", output_offsets), ("recv_sizes", recv_sizes)):
        if not np.issubdtype(aval.dtype, np.integer):
            raise ValueError(f"ragged_all_to_all {name} must be integer type.")
    for name, aval in (("input_offsets", input_offsets), ("send_sizes", send_sizes),
                       ("output_offsets", output_offsets), ("recv_sizes", recv_sizes)):
        if len(aval.shape) != 1 or aval.shape[0] < 1:
            raise ValueError(f"ragged_all_to_all {name} must be rank 1 with positive dimension "
                             f"size, but got shape {aval.shape}")
    _check_bound(axis_name)
    return output.update(weak_type=False)


def _ragged_all_to_all_jvp(primals, tangents, **params):
    result = ragged_all_to_all_p.bind(*primals, **params)
    operand_dot, output_dot = tangents[:2]
    if isinstance(operand_dot, Zero) and isinstance(output_dot, Zero):
        return result, Zero.from_primal_value(result)
    dots = [instantiate_zeros(operand_dot), instantiate_zeros(output_dot)]
    return result, ragged_all_to_all_p.bind(*dots, *primals[2:], **params)


def _ragged_all_to_all_transpose(ct, operand, output, input_offsets, send_sizes,
                                 output_offsets, recv_sizes, *, axis_name, axis_index_groups):
    if isinstance(ct, Zero):
        return [Zero(operand.aval) if is_undefined_primal(operand) else None,
                Zero(output.aval) if is_undefined_primal(output) else None] + [None] * 4
    # the rows each position received go back where they came from; the rest of the
    # cotangent belongs to `output`'s kept rows
    sent_to = all_to_all(output_offsets, axis_name, 0, 0, tiled=True)
    taken_from = all_to_all(input_offsets, axis_name, 0, 0, tiled=True)
    operand_ct = ragged_all_to_all_p.bind(
        ct, zeros_like_aval(operand.aval), sent_to, recv_sizes, taken_from, send_sizes,
        axis_name=axis_name, axis_index_groups=axis_index_groups)
    ct_aval = get_aval(ct)
    index_dtype = get_aval(sent_to).dtype
    rows = expand_dims(iota(index_dtype, ct_aval.shape[0]), (1,))
    starts = expand_dims(sent_to, (0,))
    ends = expand_dims(add(sent_to, convert_element_type(recv_sizes, index_dtype)), (0,))
    written = reduce_or(bitwise_and(ge(rows, starts), lt(rows, ends)), (1,))
    written = broadcast_in_dim(written, ct_aval.shape, (0,))
    output_ct = select_n(written, ct, zeros_like_aval(ct_aval))
    return [operand_ct, output_ct] + [None] * 4


ragged_all_to_all_p = Primitive("ragged_all_to_all")
ragged_all_to_all_p.def_abstract_eval(_ragged_all_to_all_abstract_eval)
ragged_all_to_all_p.def_reference(_unbound_reference("ragged_all_to_all"))


@ragged_all_to_all_p.def_impl
def _ragged_all_to_all_impl(*args, **params):
    raise RuntimeError("ragged_all_to_all must be used within a mapped context like vmap or "
                       "shard_map.")
ragged_all_to_all_p.def_jvp(_ragged_all_to_all_jvp)
ragged_all_to_all_p.def_transpose(_ragged_all_to_all_transpose)
batching.collective_axis_names[ragged_all_to_all_p] = lambda params: _names(params["axis_name"])


@ragged_all_to_all_p.def_batch
def _ragged_all_to_all_batch(axis_data, args, dims, *, axis_name, axis_index_groups):
    if axis_data.name in axis_name:
        raise NotImplementedError("ragged_all_to_all over a vmapped axis is not supported "
                                  "(as in JAX): run it under shard_map.")
    if all(d is None for d in dims):
        return ragged_all_to_all_p.bind(*args, axis_name=axis_name,
                                        axis_index_groups=axis_index_groups), None
    if axis_index_groups:
        raise NotImplementedError("ragged_all_to_all: axis_index_groups under vmap are not "
                                  "supported (as in JAX).")
    # the examples side by side along the leading dimension, their offsets shifted to match
    size = axis_data.size
    operand, output = (bdim_at_front(x, d, size) for x, d in zip(args[:2], dims[:2]))
    n, m = get_aval(operand).shape[1], get_aval(output).shape[1]
    vectors = [transpose(bdim_at_front(x, d, size), (1, 0)) for x, d in zip(args[2:], dims[2:])]
    def shifted(v, rows):  # example b's offsets count from its block of the merged arrays
        dtype = get_aval(v).dtype
        steps = mul(expand_dims(iota(dtype, size), (0,)), np.asarray(rows, dtype))
        return add(v, broadcast_in_dim(steps, get_aval(v).shape, (0, 1)))

    vectors[0], vectors[2] = shifted(vectors[0], n), shifted(vectors[2], m)
    merge = lambda x: reshape(x, (-1, *get_aval(x).shape[2:]))  # noqa: E731
    out = ragged_all_to_all_p.bind(merge(operand), merge(output), *map(merge, vectors),
                                   axis_name=axis_name, axis_index_groups=axis_index_groups)
    return reshape(out, (size, m, *get_aval(out).shape[1:])), 0


# inside a check_vma shard_map body: the operand first varies over the axes (JAX's pvary)
for _prim in (ppermute_p, reduce_scatter_p, all_to_all_p, ragged_all_to_all_p):
    _manual_axes.collectives[_prim] = ("axis_name", False)
_manual_axes.typing_rules[pbroadcast_p] = _collectives._pbroadcast_rule
