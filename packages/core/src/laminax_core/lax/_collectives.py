"""Named-axis collectives (psum, pmax, pmin, pmean, all_gather, axis_index) for use inside
`vmap(..., axis_name=...)`. Their batching rules do the communication: over the vmap'd axis a
`psum` is a sum over the batch dimension."""

from __future__ import annotations

import numpy as np
from laminax_pytree import tree_flatten, tree_map, tree_unflatten

from laminax_core import _manual_axes, _trace, dtypes
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters import batching
from laminax_core._interpreters.batching import bdim_at_front, move_bdim
from laminax_core._interpreters.jvp import Zero
from laminax_core._primitive import NO_OPERANDS, NOT_LINEAR, ZERO_TANGENT, define_primitive, linear
from laminax_core.lax._elementwise import add, convert_element_type, div, eq, mul
from laminax_core.lax._slicing import dynamic_slice
from laminax_core.lax._structural import broadcast_in_dim, iota, reshape, squeeze

__all__ = ["all_gather", "axis_index", "pcast", "pmax", "pmean", "pmin", "psum"]
# the primitives, which lax exports beside their functions
__all__ += [
    "all_gather_p", "axis_index_p", "pmax_p", "pmin_p", "psum_p", "psum_invariant_p", "pvary_p",
]  # fmt: skip


def _axis_tuple(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, tuple | list) else (axis_name,)


def _axis_size(names) -> int:
    size = 1
    for name in names:
        size *= _trace.find_axis_data(name).size
    return size


def _unbound(name) -> NameError:
    return NameError(
        f"Found an unbound axis name: {name}. Collectives over a named axis must run inside a "
        f"transformation that binds it, for example vmap(f, axis_name={name!r})."
    )


def _reduce_abstract_eval(*avals, axes, axis_index_groups):
    for a in axes:
        if not isinstance(a, int):
            _trace.find_axis_data(a)  # raises NameError for an unbound name
    positional = {a for a in axes if isinstance(a, int)}
    return [
        ShapedArray(
            tuple(d for i, d in enumerate(x.shape) if i not in positional), x.dtype, x.weak_type
        )
        for x in avals
    ]


def _reduce_reference(np_reduce):
    def rule(*xs, axes, axis_index_groups):
        for a in axes:
            if not isinstance(a, int):
                raise _unbound(a)
        return [np_reduce(x, axis=tuple(axes)).astype(x.dtype) for x in xs]

    return rule


def _reduce_batch(primitive, unmapped):
    """Batching rule of psum/pmax/pmin: over this vmap's axis, reduce the batch dimension."""

    def rule(axis_data, args, dims, axes, axis_index_groups):
        names = [a for a in axes if not isinstance(a, int)]
        positional = [a for a in axes if isinstance(a, int)]
        mine = axis_data.name in names
        if mine and axis_index_groups is not None:
            raise NotImplementedError(
                "axis_index_groups not supported in vmap collectives; reduce over groups under "
                "shard_map or pmap, where they lower to XLA's replica groups."
            )
        others = tuple(n for n in names if n != axis_data.name)
        outs, out_dims = [], []
        for x, d in zip(args, dims, strict=True):
            shifted = tuple(a + 1 if d is not None and a >= d else a for a in positional)
            if mine and d is None:
                x = unmapped(x, axis_data.size)
                if shifted or others:
                    x = primitive.bind(
                        x, axes=(*others, *shifted), axis_index_groups=axis_index_groups
                    )[0]
                outs.append(x)
                out_dims.append(None)
                continue
            reduced = (d, *shifted) if mine else shifted
            out = primitive.bind(x, axes=(*reduced, *others), axis_index_groups=axis_index_groups)[
                0
            ]
            outs.append(out)
            out_dims.append(None if mine or d is None else d - sum(a < d for a in shifted))
        return outs, out_dims

    return rule


def _reduce_primitive(name, np_reduce, unmapped, jvp):
    primitive = define_primitive(
        name,
        abstract_eval=_reduce_abstract_eval,
        reference=_reduce_reference(np_reduce),
        jvp=jvp,
        transpose=NOT_LINEAR,
        batch=lambda *a, **p: rule(*a, **p),
        multiple_results=True,
    )
    rule = _reduce_batch(primitive, unmapped)
    batching.collective_axis_names[primitive] = lambda params: params["axes"]
    return primitive


def _scale(x, size):
    return mul(np.asarray(size, get_aval(x).dtype), x)


def _extremum_jvp(primitive_name):
    # tangent: the mean of the tangents at the positions that attain the extremum
    def rule(primals, tangents, axes, axis_index_groups):
        prim = _PRIMITIVES[primitive_name]
        ans = prim.bind(*primals, axes=axes, axis_index_groups=axis_index_groups)
        out_tangents = []
        for x, t, y in zip(primals, tangents, ans, strict=True):
            if isinstance(t, Zero):
                out_tangents.append(Zero.from_primal_value(y))
                continue
            hit = convert_element_type(eq(x, y), get_aval(x).dtype)
            # two binds, so the count (known) stays out of the linear part
            (num,) = psum_p.bind(mul(t, hit), axes=axes, axis_index_groups=axis_index_groups)
            (count,) = psum_p.bind(hit, axes=axes, axis_index_groups=axis_index_groups)
            out_tangents.append(div(num, count))
        return ans, out_tangents

    return rule


psum_p = _reduce_primitive("psum", np.sum, _scale, linear)


@psum_p.def_transpose
def _psum_transpose(cts, *xs, axes, axis_index_groups):
    # over positional axes (what vmap turns a named psum into) psum is a reduce_sum, whose
    # transpose broadcasts back; over named axes it is its own transpose. As JAX does, the
    # named psum is bound even over no names (an identity equation that jaxprs show).

    if all(isinstance(ct, Zero) for ct in cts):
        return [None] * len(xs)
    named = tuple(a for a in axes if not isinstance(a, int))
    positional = {a for a in axes if isinstance(a, int)}
    cts = [np.zeros(ct.aval.shape, ct.aval.dtype) if isinstance(ct, Zero) else ct for ct in cts]
    if positional:
        cts = [broadcast_in_dim(ct, x.aval.shape,
                                tuple(i for i in range(x.aval.ndim) if i not in positional))
               for ct, x in zip(cts, xs, strict=True)]
    return psum_p.bind(*cts, axes=named, axis_index_groups=axis_index_groups)


pmax_p = _reduce_primitive("pmax", np.max, lambda x, size: x, _extremum_jvp("pmax"))
pmin_p = _reduce_primitive("pmin", np.min, lambda x, size: x, _extremum_jvp("pmin"))
_PRIMITIVES = {"pmax": pmax_p, "pmin": pmin_p}


def _index_groups(axis_index_groups, size: int):
    """`axis_index_groups` as a tuple of tuples, checked to split range(size) into groups of
    one size."""
    if axis_index_groups is None:
        return None
    groups = tuple(tuple(int(i) for i in g) for g in axis_index_groups)
    flat = sorted(i for g in groups for i in g)
    if flat != list(range(size)) or len({len(g) for g in groups}) != 1:
        raise ValueError(
            f"axis_index_groups must split the {size} positions of the axis into groups of one "
            f"size, each position in exactly one group; got {axis_index_groups}."
        )
    return groups


def _tree_collective(primitive, x, axis_name, axis_index_groups=None):
    leaves, tree = tree_flatten(x)
    names = _axis_tuple(axis_name)
    groups = None
    if axis_index_groups is not None:
        if any(isinstance(a, int) for a in names):
            raise ValueError("axis_index_groups can only be used with reductions over named "
                             f"axes, but got: {names}")
        groups = _index_groups(axis_index_groups, _axis_size(names))
    outs = primitive.bind(*leaves, axes=names, axis_index_groups=groups)
    return tree_unflatten(tree, outs)


def psum(x, axis_name, *, axis_index_groups=None):
    """Sums `x` (a pytree of arrays) over the named axis (or tuple of axes) `axis_name`.

    Inside a `shard_map` with `check_vma=True` a psum over its manual axes is recorded as
    JAX's `psum_invariant` (the result no longer varies over them).

    Example:
      >>> vmap(lambda v: psum(v, "i"), axis_name="i")(np.arange(3.0, dtype=np.float32))
      array([3., 3., 3.], dtype=float32)
    """
    if axis_index_groups is None and _manual_axes.state.axes is not None:
        names = _axis_tuple(axis_name)
        if _typed_psum(names):
            return tree_map(lambda leaf: psum_invariant_p.bind(leaf, axes=names), x)
    return _tree_collective(psum_p, x, axis_name, axis_index_groups)


def pmax(x, axis_name, *, axis_index_groups=None):
    """The maximum of `x` over the named axis `axis_name`."""
    return _tree_collective(pmax_p, x, axis_name, axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
    """The minimum of `x` over the named axis `axis_name`."""
    return _tree_collective(pmin_p, x, axis_name, axis_index_groups)


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of `x` over the named axis `axis_name` (psum divided by the axis size; a true
    division, so integer inputs give the default float dtype, as in JAX)."""
    size = _axis_size(_axis_tuple(axis_name))
    if axis_index_groups is not None:
        size = len(next(iter(axis_index_groups)))
    summed = psum(x, axis_name, axis_index_groups=axis_index_groups)
    leaves, tree = tree_flatten(summed)

    def mean(s):
        if not dtypes.issubdtype(get_aval(s).dtype, np.inexact):
            s = convert_element_type(s, dtypes.canonicalize_dtype(np.float64))
        return div(s, np.asarray(size, get_aval(s).dtype))

    return tree_unflatten(tree, [mean(s) for s in leaves])


# ----- all_gather -------------------------------------------------------------------------


def all_gather(x, axis_name, *, axis_index_groups=None, axis: int = 0, tiled: bool = False):
    """Stacks the values of `x` across the named axis at position `axis` (concatenates them
    along `axis` if `tiled`); with `axis_index_groups`, across each position's group only."""
    size = _axis_size(_axis_tuple(axis_name))
    groups = _index_groups(axis_index_groups, size)
    if groups is not None:
        size = len(groups[0])
    leaves, tree = tree_flatten(x)
    outs = []
    for leaf in leaves:
        ndim = get_aval(leaf).ndim
        dim = axis % (ndim + (not tiled)) if ndim or not tiled else 0
        outs.append(
            all_gather_p.bind(
                leaf,
                all_gather_dimension=dim,
                axis_name=_axis_tuple(axis_name),
                axis_index_groups=groups,
                axis_size=size,
                tiled=tiled,
            )
        )
    return tree_unflatten(tree, outs)


def _all_gather_abstract_eval(
    x, all_gather_dimension, axis_name, axis_index_groups, axis_size, tiled
):
    for name in _axis_tuple(axis_name):
        _trace.find_axis_data(name)
    shape = list(x.shape)
    if tiled:
        shape[all_gather_dimension] *= axis_size
    else:
        shape.insert(all_gather_dimension, axis_size)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _all_gather_reference(x, axis_name, **params):
    raise _unbound(axis_name)


def _all_gather_batch(
    axis_data, args, dims, all_gather_dimension, axis_name, axis_index_groups, axis_size, tiled
):
    (x,), (d,) = args, dims
    names = _axis_tuple(axis_name)
    if axis_data.name in names and axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups not supported in vmap")
    if axis_data.name not in names:  # another axis's gather: this one's dim rides along
        params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups,
                      axis_size=axis_size, tiled=tiled)
        if d is None:
            return all_gather_p.bind(x, all_gather_dimension=all_gather_dimension, **params), None
        x = move_bdim(x, d, 0)
        return all_gather_p.bind(x, all_gather_dimension=all_gather_dimension + 1, **params), 0
    if names != (axis_data.name,):
        raise NotImplementedError(
            "all_gather over several named axes at once is not supported under vmap; "
            "gather over one axis at a time (shard_map lowers it to one XLA all-gather)."
        )
    x = bdim_at_front(x, d, axis_data.size)
    out = move_bdim(x, 0, all_gather_dimension)
    if tiled:
        shape = list(get_aval(x).shape[1:])
        shape[all_gather_dimension] *= axis_data.size
        out = reshape(move_bdim(x, 0, all_gather_dimension), tuple(shape))
    return out, None


def _all_gather_transpose(
    ct, x, all_gather_dimension, axis_name, axis_index_groups, axis_size, tiled
):
    # every position's output holds every input: sum the cotangents, keep this position's slice

    (total,) = psum_p.bind(ct, axes=_axis_tuple(axis_name), axis_index_groups=axis_index_groups)
    aval = x.aval
    index = axis_index(axis_name)
    if axis_index_groups is not None:  # the position within its group
        within = np.zeros(sum(len(g) for g in axis_index_groups), np.int32)
        for group in axis_index_groups:
            within[list(group)] = np.arange(len(group), dtype=np.int32)
        index = squeeze(dynamic_slice(within, [index], [1]), (0,))
    starts = [np.int32(0)] * get_aval(total).ndim
    sizes = list(get_aval(total).shape)
    if tiled:
        starts[all_gather_dimension] = mul(index, np.int32(aval.shape[all_gather_dimension]))
        sizes[all_gather_dimension] = aval.shape[all_gather_dimension]
        return [dynamic_slice(total, starts, sizes)]
    starts[all_gather_dimension] = index
    sizes[all_gather_dimension] = 1
    return [squeeze(dynamic_slice(total, starts, sizes), (all_gather_dimension,))]


all_gather_p = define_primitive(
    "all_gather",
    abstract_eval=_all_gather_abstract_eval,
    reference=_all_gather_reference,
    jvp=linear,
    transpose=_all_gather_transpose,
    batch=_all_gather_batch,
)
batching.collective_axis_names[all_gather_p] = lambda params: _axis_tuple(params["axis_name"])


# ----- axis_index -------------------------------------------------------------------------


def axis_index(axis_name):
    """The position (int32) along the named axis `axis_name` of the current value; for a
    tuple of names, the position along their flattened product (the first name major)."""
    if not isinstance(axis_name, tuple | list):
        return axis_index_p.bind(axis_name=axis_name)

    index, stride = np.int32(0), 1
    for name in reversed(axis_name):
        index = add(index, mul(axis_index_p.bind(axis_name=name), np.int32(stride)))
        stride *= _trace.find_axis_data(name).size
    return index


def _axis_index_abstract_eval(axis_name):
    _trace.find_axis_data(axis_name)
    return ShapedArray((), np.int32)


def _axis_index_reference(axis_name):
    raise _unbound(axis_name)


axis_index_p = define_primitive(
    "axis_index",
    abstract_eval=_axis_index_abstract_eval,
    reference=_axis_index_reference,
    jvp=ZERO_TANGENT,
    transpose=NOT_LINEAR,
    batch=NO_OPERANDS,
)


@axis_index_p.def_batch
def _axis_index_batch(axis_data, args, dims, axis_name):
    return iota(np.int32, axis_data.size), 0


batching.collective_axis_names[axis_index_p] = lambda params: (params["axis_name"],)


# ----- varying manual axes (shard_map with check_vma=True) ---------------------------------


def _same_aval(x, axes):
    return x


def _pvary_transpose(ct, x, *, axes):
    if isinstance(ct, Zero):
        return [None]
    return [psum_invariant_p.bind(ct, axes=axes)]


def _identity_batch(axis_data, args, dims, axes):
    return args[0], dims[0]


# the no-op cast making an invariant value vary over manual mesh axes (JAX's pvary)
pvary_p = define_primitive(
    "pvary", abstract_eval=_same_aval, reference=lambda x, axes: x, jvp=linear,
    transpose=_pvary_transpose, batch=lambda *a, **p: _identity_batch(*a, **p),
)


def _psum_invariant_abstract_eval(x, axes):
    return _reduce_abstract_eval(x, axes=axes, axis_index_groups=None)[0]


def _psum_invariant_batch(axis_data, args, dims, axes):
    (x,), (d,) = args, dims
    if axis_data.name not in axes:  # a vmap inside the body: the same sum per example
        return psum_invariant_p.bind(x, axes=axes), d
    outs, out_dims = _psum_batch(axis_data, args, dims, axes=axes, axis_index_groups=None)
    return outs[0], out_dims[0]


def _psum_invariant_transpose(ct, x, *, axes):
    if isinstance(ct, Zero):
        return [None]
    return [pvary_p.bind(ct, axes=axes)]


# psum inside a check_vma body: a value varying over `axes` summed to one invariant over them
psum_invariant_p = define_primitive(
    "psum_invariant", abstract_eval=_psum_invariant_abstract_eval,
    reference=lambda x, axes: _reduce_reference(np.sum)(x, axes=axes, axis_index_groups=None)[0],
    jvp=linear, transpose=_psum_invariant_transpose,
    batch=lambda *a, **p: _psum_invariant_batch(*a, **p),
)
batching.collective_axis_names[psum_invariant_p] = lambda params: params["axes"]
batching.collective_axis_names[pvary_p] = lambda params: params["axes"]
_psum_batch = _reduce_batch(psum_p, _scale)


def _typed_psum(names) -> bool:
    axes = _manual_axes.state.axes
    return axes is not None and bool(names) and all(n in axes for n in names)


def pcast(x, axis_name, *, to: str):
    """Changes how `x` (a pytree) is typed over the manual mesh axes `axis_name` inside a
    `shard_map`: `to='varying'` makes an invariant value vary over them (a no-op on devices,
    recorded as `pvary`), which loop carries and `cond` branches need to keep one type.

    Example:
      >>> # inside shard_map(..., in_specs=P(), ...): c = lax.pcast(c, 'x', to='varying')
    """
    if isinstance(axis_name, set | frozenset):
        raise TypeError(f"axis_name={axis_name!r} must be a tuple or a str. Got {axis_name}")
    names = _axis_tuple(axis_name)
    if not axis_name:
        return x
    allowed = {"unreduced", "reduced", "varying"}
    if to not in allowed:
        raise ValueError(f"Got unexpected `to` value. Allowed `to` values are: {allowed}")
    for name in names:
        _trace.find_axis_data(name)  # NameError for an unbound name
    if _manual_axes.state.axes is None:  # check_vma=False: values carry no such types
        return x

    def cast(leaf):
        vma = _manual_axes.varying(leaf)
        states = {"varying" if n in vma else "invarying" for n in names}
        if len(states) > 1:
            raise ValueError(
                f"jax.lax.pcast's axis_name {names} must all be varying or all invarying for "
                f"the input; got input varying over {set(vma)}.")
        start = states.pop()
        if (start, to) != ("invarying", "varying"):
            raise ValueError(f"Unsupported pcast from={start}, to={to!r}")
        order = _manual_axes.state.axes
        return pvary_p.bind(leaf, axes=tuple(n for n in order if n in names))

    return tree_map(cast, x)


def _pbroadcast_rule(ins, params):
    axes = frozenset(_axis_tuple(params["axis_name"]))
    if not axes <= ins[0]:
        raise ValueError(
            f"Collective pbroadcast must be applied to a device-varying type, but got "
            f"{set(ins[0])} for collective acting over axis name {tuple(sorted(axes))}; give it "
            "a value that varies over the axis (lax.pcast(x, axis_name, to='varying')), or "
            "pass check_vma=False to shard_map.")
    return ins


_manual_axes.pvary_primitive.append(pvary_p)
_manual_axes.typing_rules[pvary_p] = lambda ins, p: [ins[0] | frozenset(p["axes"])]
_manual_axes.typing_rules[axis_index_p] = lambda ins, p: [frozenset({p["axis_name"]})]
for _prim in (psum_invariant_p, psum_p, pmax_p, pmin_p):
    _manual_axes.collectives[_prim] = ("axes", True)
_manual_axes.collectives[all_gather_p] = ("axis_name", False)
