"""Reductions over axes: reduce_sum, reduce_max, reduce_min, reduce_prod, the logical
reductions, argmax, argmin, and the generic `reduce` with a traced body."""

from __future__ import annotations

import operator
import re

import numpy as np
from laminax_pytree import tree_flatten, tree_unflatten

from laminax_core import config, dtypes
from laminax_core._api import vmap
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._sharding_rules import reduce_sharding
from laminax_core._interpreters.batching import bdim_at_front
from laminax_core._interpreters.eval import eval_jaxpr
from laminax_core._interpreters.jvp import Zero, instantiate_zeros, jvp_flat
from laminax_core._interpreters.partial_eval import trace_to_jaxpr
from laminax_core._primitive import (
    NOT_LINEAR,
    NUMERIC,
    ZERO_TANGENT,
    check_dtype,
    define_primitive,
    linear,
)
from laminax_core.lax import _bitwise, _elementwise, _hooks, _slicing
from laminax_core.lax._elementwise import add, convert_element_type, div, eq, mul
from laminax_core.lax._helpers import highest, lowest
from laminax_core.lax._joining import concatenate
from laminax_core.lax._structural import broadcast_in_dim, reshape, transpose

__all__ = [
    "argmax", "argmin", "reduce", "reduce_and", "reduce_max", "reduce_min", "reduce_or",
    "reduce_prod", "reduce_sum", "reduce_xor",
]  # fmt: skip
# the primitives, which lax exports beside their functions
__all__ += [
    "argmax_p", "argmin_p", "reduce_and_p", "reduce_max_p", "reduce_min_p", "reduce_or_p",
    "reduce_p", "reduce_prod_p", "reduce_sum_p", "reduce_xor_p",
]  # fmt: skip


def _normalize_axes(axes, ndim: int, name: str) -> tuple[int, ...]:
    # lax takes what XLA takes, as JAX's lax does: a sequence of non-negative axes (jnp's
    # reductions are the ones that read ints and negative axes)
    if isinstance(axes, int | np.integer):
        raise TypeError(f"{name}: axes must be a sequence of ints, got the int {axes!r}; write "
                        f"({axes!r},).")
    out = []
    for a in axes:
        a = operator.index(a)
        if not 0 <= a < ndim:
            raise ValueError(f"{name}: reduction axes {tuple(axes)} contain out-of-bounds "
                             f"indices for an array of rank {ndim} (lax takes no negative "
                             "axes).")
        out.append(a)
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: duplicate axes in {tuple(axes)}.")
    return tuple(sorted(out))


def _reduced_aval(x, axes, name, dtype=None):
    for a in axes:
        if not 0 <= a < x.ndim:
            raise TypeError(f"{name}: axis {a} is out of bounds for shape {x.shape}.")
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    weak = x.weak_type if dtype is None else False
    dtype = x.dtype if dtype is None else dtype
    return ShapedArray(shape, dtype, weak, reduce_sharding(x, axes, shape, dtype))


def _batch_reduction(bind):
    """Batching rule of a reduction over `axes`: keep the batch dim where it is."""

    def rule(axis_data, args, dims, axes, **params):
        (x,), (bdim,) = args, dims
        # reduced axes at or past the batch dim shift up by one; the batch dim moves down by
        # the number of reduced axes before it
        new_axes = tuple(_shift_past(a, bdim) for a in axes)
        out_bdim = bdim - sum(a < bdim for a in new_axes)
        return bind(x, axes=new_axes, **params), out_bdim

    return rule


def _shift_past(axis: int, bdim: int) -> int:
    return axis + 1 if axis >= bdim else axis


# ----- reduce_sum ---------------------------------------------------------------------------


def reduce_sum(operand, axes):
    """Sums `operand` over `axes`.

    Example:
      >>> reduce_sum(np.ones((2, 3), np.float32), (0,))
      array([2., 2., 2.], dtype=float32)
    """
    axes = _normalize_axes(axes, get_aval(operand).ndim, "reduce_sum")
    return reduce_sum_p.bind(operand, axes=axes, out_sharding=None)


def _reduce_sum_abstract_eval(x, axes, out_sharding):
    check_dtype("reduce_sum", x.dtype, NUMERIC)
    if (x.dtype in (np.float16, dtypes.bfloat16) and not config.allow_f16_reductions.value
            and any(not (isinstance(x.shape[d], int) and x.shape[d] == 1) for d in axes)):
        raise ValueError(f"reduce_sum on operand {x.str_short()} is not "
                         "allowed when jax_allow_f16_reductions=False.")
    return _reduced_aval(x, axes, "reduce_sum")


def _reduce_sum_transpose(ct, x, axes, out_sharding):
    kept = tuple(i for i in range(x.aval.ndim) if i not in axes)
    # the cotangent has the operand's type (JAX reshards it so under explicit sharding)
    return [broadcast_in_dim(ct, x.aval.shape, kept, sharding=x.aval.sharding)]


reduce_sum_p = define_primitive(
    "reduce_sum",
    abstract_eval=_reduce_sum_abstract_eval,
    reference=lambda x, axes, out_sharding: np.sum(x, axis=axes, dtype=x.dtype),
    jvp=linear,
    transpose=_reduce_sum_transpose,
    batch=_batch_reduction(lambda x, **p: reduce_sum_p.bind(x, **p)),
)


# ----- reduce_max ---------------------------------------------------------------------------


def _extremum_jvp(reduce):
    """The jvp of reduce_max or reduce_min (`reduce`): the mean of the tangents at the places
    where the extremum is reached."""

    def rule(primals, tangents, axes):
        (x,), (t,) = primals, tangents
        ans = reduce(x, axes)
        if isinstance(t, Zero):
            return ans, Zero.from_primal_value(ans)
        aval = get_aval(x)
        kept_shape = tuple(1 if i in axes else d for i, d in enumerate(aval.shape))
        at_extremum = convert_element_type(eq(x, reshape(ans, kept_shape)), aval.dtype)
        counts = reduce_sum(at_extremum, axes)
        return ans, div(reduce_sum(mul(t, at_extremum), axes), counts)

    return rule


def _extremum_abstract_eval(name: str):
    def abstract_eval(x, axes):
        check_dtype(name, x.dtype, (np.number, np.bool_))
        return _reduced_aval(x, axes, name)

    return abstract_eval


def reduce_max(operand, axes):
    """The maximum of `operand` over `axes`."""
    axes = _normalize_axes(axes, get_aval(operand).ndim, "reduce_max")
    return reduce_max_p.bind(operand, axes=axes)


reduce_max_p = define_primitive(
    "reduce_max",
    abstract_eval=_extremum_abstract_eval("reduce_max"),
    reference=lambda x, axes: np.max(x, axis=axes, initial=np.asarray(lowest(x.dtype), x.dtype)),
    jvp=_extremum_jvp(reduce_max),
    transpose=NOT_LINEAR,
    batch=_batch_reduction(lambda x, **p: reduce_max_p.bind(x, **p)),
)


# ----- argmax -------------------------------------------------------------------------------


def argmax(operand, axis: int, index_dtype):
    """The index of the maximum of `operand` along `axis` (the first one on ties and NaNs)."""
    (axis,) = _normalize_axes((axis,), get_aval(operand).ndim, "argmax")
    index_dtype = dtypes.canonicalize_dtype(index_dtype)
    return argmax_p.bind(operand, axes=(axis,), index_dtype=index_dtype)


def _argmax_abstract_eval(x, axes, index_dtype):
    if not dtypes.issubdtype(index_dtype, np.integer):
        raise TypeError(f"argmax: index_dtype must be an integer dtype, got {index_dtype}.")
    if len(axes) != 1:
        raise TypeError(f"argmax reduces exactly one axis, got axes={axes}.")
    return _reduced_aval(x, axes, "argmax", dtype=index_dtype)


argmax_p = define_primitive(
    "argmax",
    abstract_eval=_argmax_abstract_eval,
    reference=lambda x, axes, index_dtype: np.argmax(x, axis=axes[0]).astype(index_dtype),
    jvp=ZERO_TANGENT,
    transpose=NOT_LINEAR,
    batch=_batch_reduction(lambda x, **p: argmax_p.bind(x, **p)),
)


# ----- reduce_min ---------------------------------------------------------------------------


def reduce_min(operand, axes):
    """The minimum of `operand` over `axes`.

    Example:
      >>> reduce_min(np.array([[3, 1], [2, 5]], np.int32), (1,))
      array([1, 2], dtype=int32)
    """
    axes = _normalize_axes(axes, get_aval(operand).ndim, "reduce_min")
    return reduce_min_p.bind(operand, axes=axes)


reduce_min_p = define_primitive(
    "reduce_min",
    abstract_eval=_extremum_abstract_eval("reduce_min"),
    reference=lambda x, axes: np.min(x, axis=axes, initial=np.asarray(highest(x.dtype), x.dtype)),
    jvp=_extremum_jvp(reduce_min),
    transpose=NOT_LINEAR,
    batch=_batch_reduction(lambda x, **p: reduce_min_p.bind(x, **p)),
)


# ----- reduce_prod --------------------------------------------------------------------------


def reduce_prod(operand, axes):
    """The product of `operand` over `axes`.

    Example:
      >>> reduce_prod(np.array([[1, 2], [3, 4]], np.float32), (0,))
      array([3., 8.], dtype=float32)
    """
    axes = _normalize_axes(axes, get_aval(operand).ndim, "reduce_prod")
    return reduce_prod_p.bind(operand, axes=axes)


def _reduced_axes_first(x, axes):
    """`x` with the reduced `axes` flattened into one leading axis."""
    aval = get_aval(x)
    kept = tuple(i for i in range(aval.ndim) if i not in axes)
    n = int(np.prod([aval.shape[a] for a in axes], dtype=np.int64))
    moved = transpose(x, (*axes, *kept)) if (*axes, *kept) != tuple(range(aval.ndim)) else x
    return reshape(moved, (n, *(aval.shape[k] for k in kept)))


def _reduce_prod_jvp(primals, tangents, axes):
    # a pairwise product tree, differentiated by the product rule at each level (exact with
    # zeros in the operand, unlike prod / x)
    (x,), (t,) = primals, tangents
    ans = reduce_prod(x, axes)
    xs, ts = _reduced_axes_first(x, axes), _reduced_axes_first(t, axes)
    shape = get_aval(xs).shape
    if shape[0] == 0:
        return ans, Zero.from_primal_value(ans)
    while shape[0] > 1:
        if shape[0] % 2:
            pad_shape = (1, *shape[1:])
            xs = concatenate([xs, np.ones(pad_shape, get_aval(xs).dtype)], 0)
            ts = concatenate([ts, np.zeros(pad_shape, get_aval(ts).dtype)], 0)
        half = (shape[0] + 1) // 2
        lo, mid, hi = (0,) * len(shape), (half, *shape[1:]), (2 * half, *shape[1:])
        a, b = _slicing.slice(xs, lo, mid), _slicing.slice(xs, (half, *lo[1:]), hi)
        ta, tb = _slicing.slice(ts, lo, mid), _slicing.slice(ts, (half, *lo[1:]), hi)
        xs, ts = mul(a, b), add(mul(ta, b), mul(a, tb))
        shape = get_aval(xs).shape
    return ans, reshape(ts, shape[1:])


def _reduce_prod_abstract_eval(x, axes):
    check_dtype("reduce_prod", x.dtype, NUMERIC)
    return _reduced_aval(x, axes, "reduce_prod")


reduce_prod_p = define_primitive(
    "reduce_prod",
    abstract_eval=_reduce_prod_abstract_eval,
    reference=lambda x, axes: np.prod(x, axis=axes, dtype=x.dtype),
    jvp=_reduce_prod_jvp,
    transpose=NOT_LINEAR,
    batch=_batch_reduction(lambda x, **p: reduce_prod_p.bind(x, **p)),
)


# ----- reduce_and, reduce_or, reduce_xor ----------------------------------------------------


def _logical_reduction(name, ufunc):
    def abstract_eval(x, axes):
        check_dtype(name, x.dtype, (np.integer, np.bool_))
        return _reduced_aval(x, axes, name)

    primitive = define_primitive(
        name,
        abstract_eval=abstract_eval,
        reference=lambda x, axes: ufunc.reduce(x, axis=axes, dtype=x.dtype) if axes else x,
        jvp=ZERO_TANGENT,
        transpose=NOT_LINEAR,
        batch=_batch_reduction(lambda x, **p: primitive.bind(x, **p)),
    )
    return primitive


def reduce_and(operand, axes):
    """Bitwise AND of `operand` over `axes` (logical AND for booleans).

    Example:
      >>> reduce_and(np.array([True, False]), (0,))
      array(False)
    """
    return reduce_and_p.bind(operand, axes=_normalize_axes(axes, get_aval(operand).ndim,
                                                           "reduce_and"))


reduce_and_p = _logical_reduction("reduce_and", np.bitwise_and)


def reduce_or(operand, axes):
    """Bitwise OR of `operand` over `axes` (logical OR for booleans)."""
    return reduce_or_p.bind(operand, axes=_normalize_axes(axes, get_aval(operand).ndim,
                                                          "reduce_or"))


reduce_or_p = _logical_reduction("reduce_or", np.bitwise_or)


def reduce_xor(operand, axes):
    """Bitwise XOR of `operand` over `axes` (parity for booleans)."""
    return reduce_xor_p.bind(operand, axes=_normalize_axes(axes, get_aval(operand).ndim,
                                                           "reduce_xor"))


reduce_xor_p = _logical_reduction("reduce_xor", np.bitwise_xor)


# ----- argmin -------------------------------------------------------------------------------


def argmin(operand, axis: int, index_dtype):
    """The index of the minimum of `operand` along `axis` (the first one on ties and NaNs).

    Example:
      >>> argmin(np.array([3, 1, 1], np.int32), 0, np.int32)
      array(1, dtype=int32)
    """
    (axis,) = _normalize_axes((axis,), get_aval(operand).ndim, "argmin")
    index_dtype = dtypes.canonicalize_dtype(index_dtype)
    return argmin_p.bind(operand, axes=(axis,), index_dtype=index_dtype)


def _argmin_abstract_eval(x, axes, index_dtype):
    if not dtypes.issubdtype(index_dtype, np.integer):
        raise TypeError(f"argmin: index_dtype must be an integer dtype, got {index_dtype}.")
    if len(axes) != 1:
        raise TypeError(f"argmin reduces exactly one axis, got axes={axes}.")
    return _reduced_aval(x, axes, "argmin", dtype=index_dtype)


argmin_p = define_primitive(
    "argmin",
    abstract_eval=_argmin_abstract_eval,
    reference=lambda x, axes, index_dtype: np.argmin(x, axis=axes[0]).astype(index_dtype),
    jvp=ZERO_TANGENT,
    transpose=NOT_LINEAR,
    batch=_batch_reduction(lambda x, **p: argmin_p.bind(x, **p)),
)


# ----- reduce: a reduction with a traced body (reduce_p holds its jaxpr) --------------------


def _monoid_reduction(computation, init, dtype):
    """The specialized reduction for `computation` if `init` is its identity, else None."""
    try:
        value = np.asarray(init)
    except Exception:  # a tracer: only a concrete identity selects a monoid
        return None
    if value.ndim != 0:
        return None
    is_bool = dtype == np.bool_
    identities = {
        _elementwise.add: (0, reduce_sum), _elementwise.mul: (1, reduce_prod),
        _elementwise.max: (lowest(dtype), reduce_max),
        _elementwise.min: (highest(dtype), reduce_min),
        _bitwise.bitwise_or: (0, reduce_or), _bitwise.bitwise_xor: (0, reduce_xor),
        _bitwise.bitwise_and: (True if is_bool else -1, reduce_and),
    }
    found = identities.get(computation)
    if found is None or (is_bool and computation in (_elementwise.add, _elementwise.mul)):
        return None
    identity, reducer = found
    return reducer if np.asarray(identity).astype(dtype) == value.astype(dtype) else None


def reduce(operands, init_values, computation, dimensions):
    """Reduces `operands` over `dimensions` with `computation(accumulated, element)`, starting
    from `init_values` (matching pytrees of arrays and scalars). Known monoids with their
    identity (`lax.add` with 0, `lax.max` with -inf, ...) become reduce_sum, reduce_max, ...

    Example:
      >>> reduce(np.arange(4, dtype=np.float32), np.float32(0), lambda a, b: a + b, (0,))
      array(6., dtype=float32)
    """
    flat_ops, tree = tree_flatten(operands)
    flat_inits, init_tree = tree_flatten(init_values)
    if tree != init_tree:
        raise TypeError(f"reduce: operands ({tree}) and init_values ({init_tree}) must have "
                        "the same tree structure.")
    ndim = get_aval(flat_ops[0]).ndim
    dims = _normalize_axes(dimensions, ndim, "reduce")
    if len(flat_ops) == 1:
        reducer = _monoid_reduction(computation, flat_inits[0], get_aval(flat_ops[0]).dtype)
        if reducer is not None:
            return tree_unflatten(tree, [reducer(flat_ops[0], dims)])
    scalars = [ShapedArray((), get_aval(x).dtype) for x in flat_inits]

    def body(*args):
        acc = tree_unflatten(tree, args[:len(flat_inits)])
        x = tree_unflatten(tree, args[len(flat_inits):])
        out, out_tree = tree_flatten(computation(acc, x))
        if out_tree != tree:
            raise TypeError(f"reduce: computation returned {out_tree}, expected {tree}.")
        return out

    closed, _ = trace_to_jaxpr(body, scalars + scalars, transformation="reduce")
    outs = reduce_p.bind(*flat_ops, *flat_inits, computation=computation, jaxpr=closed,
                         dimensions=dims)
    return tree_unflatten(tree, outs)


def _reduce_abstract_eval(*args, computation, jaxpr, dimensions):
    n = len(args) // 2
    ops, inits = args[:n], args[n:]
    for x in ops:
        if x.shape != ops[0].shape:
            raise TypeError(f"reduce: operands must have the same shape, got "
                            f"{[o.shape for o in ops]}.")
    for x, init in zip(ops, inits, strict=True):
        if init.ndim != 0 or init.dtype != x.dtype:
            raise TypeError(f"reduce: each init value must be a scalar of its operand's dtype; "
                            f"got {init.str_short()} for an operand of {x.str_short()}.")
    return [_reduced_aval(x, dimensions, "reduce").strip_weak_type() for x in ops]


def _fold_body(jaxpr):
    """`(acc, xs) -> acc'`: the body applied elementwise over a leading batch of values."""
    return vmap(lambda *a: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *a))


def _reduce_reference(*args, computation, jaxpr, dimensions):
    n = len(args) // 2
    ops, inits = args[:n], args[n:]
    kept = [d for i, d in enumerate(ops[0].shape) if i not in dimensions]
    flat = [np.moveaxis(x, dimensions, tuple(range(len(dimensions)))) for x in ops]
    flat = [x.reshape(-1, int(np.prod(kept, dtype=np.int64))) for x in flat]
    size = flat[0].shape[1]
    acc = [np.full((size,), v, v.dtype) for v in inits]
    if size:
        step = _fold_body(jaxpr)
        for row in range(flat[0].shape[0]):
            acc = [np.asarray(a) for a in step(*acc, *[x[row] for x in flat])]
    return [a.reshape(kept).astype(x.dtype) for a, x in zip(acc, ops, strict=True)]


def _reduce_jvp(primals, tangents, computation, jaxpr, dimensions):
    # the tangent of a pairwise tree of body applications (the body must be associative)

    n = len(primals) // 2
    params = dict(computation=computation, jaxpr=jaxpr, dimensions=dimensions)
    ans = reduce_p.bind(*primals, **params)

    def tree(*args):
        return _tree_reduce(args[:n], args[n:], jaxpr, dimensions)

    _, out_tangents = jvp_flat(tree, list(primals), [instantiate_zeros(t) for t in tangents])
    return ans, out_tangents


def _tree_reduce(ops, inits, jaxpr, dimensions):
    step = _fold_body(jaxpr)
    xs = [_reduced_axes_first(x, dimensions) for x in ops]
    shape = get_aval(xs[0]).shape
    xs = [reshape(x, (shape[0], int(np.prod(shape[1:], dtype=np.int64)))) for x in xs]
    width = get_aval(xs[0]).shape[1]
    fill = [broadcast_in_dim(v, (1, width), ()) for v in inits]
    while get_aval(xs[0]).shape[0] > 1:
        count = get_aval(xs[0]).shape[0]
        if count % 2:
            xs = [concatenate([x, f], 0) for x, f in zip(xs, fill, strict=True)]
        half = (count + 1) // 2
        lower = [_slicing.slice(x, (0, 0), (half, width)) for x in xs]
        upper = [_slicing.slice(x, (half, 0), (2 * half, width)) for x in xs]
        xs = [reshape(o, (half, width)) for o in _pairwise(step, lower, upper, half, width)]
    accs = [broadcast_in_dim(v, (width,), ()) for v in inits]
    if shape[0]:
        accs = list(step(*accs, *[reshape(x, (width,)) for x in xs]))
    return [reshape(a, shape[1:]) for a in accs]


def _pairwise(step, lower, upper, half, width):
    flat = lambda x: reshape(x, (half * width,))  # noqa: E731
    return step(*map(flat, lower), *map(flat, upper))


def _reduce_batch(axis_data, args, dims, computation, jaxpr, dimensions):
    n = len(args) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("reduce: batching over the init values is not supported "
                                  "(JAX does not support it either); pass unbatched inits.")
    ops = [bdim_at_front(x, d, axis_data.size) for x, d in zip(args[:n], dims[:n], strict=True)]
    outs = reduce_p.bind(*ops, *args[n:], computation=computation, jaxpr=jaxpr,
                         dimensions=tuple(d + 1 for d in dimensions))
    return outs, [0] * n


class _MaskedAddress:
    """Prints a function as JAX's jaxprs do, with its memory address masked."""

    def __init__(self, fn):
        self.fn = fn

    def __str__(self) -> str:
        return re.sub(r"0x[0-9a-fA-F]+", "0xXXXXXXXXXXXX", str(self.fn))


reduce_p = define_primitive(
    "reduce",
    abstract_eval=_reduce_abstract_eval,
    reference=_reduce_reference,
    jvp=_reduce_jvp,
    transpose=NOT_LINEAR,
    batch=_reduce_batch,
    multiple_results=True,
    print_params=lambda params: {**params, "computation": _MaskedAddress(params["computation"])},
)


_hooks.install(reduce_sum=reduce_sum)
