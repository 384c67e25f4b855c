"""Index construction and selection: `indices`, `ix_`, `unravel_index`, `ravel_multi_index`,
the `tril/triu/diag/mask_indices` family, `mgrid`/`ogrid`, and selecting or placing values:
`select`, `choose`, `compress`, `extract`, `piecewise`, `delete`, `insert`, `put`,
`put_along_axis`, `fill_diagonal`."""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import dtypes, lax
from laminax_core._avals import get_aval
from laminax_core.numpy import _creation, _indexing, _selection, _ufuncs
from laminax_core.numpy._operands import (
    as_array,
    broadcast_to_shape,
    canonicalize_axis,
    check_arraylike,
    concrete_array,
    convert_dtype,
    flatten_or_axis,
    promote_dtypes,
)
from laminax_core.numpy._operands import (
    select as _select,
)
from laminax_core.numpy._shape import concatenate, moveaxis, resize, stack

__all__ = [
    "choose", "compress", "delete", "diag_indices", "diag_indices_from", "extract",
    "fill_diagonal", "indices", "insert", "ix_", "mask_indices", "mgrid", "ogrid", "piecewise",
    "place", "put", "put_along_axis", "ravel_multi_index", "select", "tril_indices",
    "tril_indices_from", "triu_indices", "triu_indices_from", "unravel_index",
]  # fmt: skip


def indices(dimensions, dtype=None, sparse: bool = False):
    """An array of grid indices: `out[k][i0, i1, ...] = ik`.

    Example:
      >>> indices((2, 3))[1]
      array([[0, 1, 2],
             [0, 1, 2]], dtype=int32)
    """
    dtype = dtypes.check_user_dtype_supported(dtype, "indices") or dtypes.default_int_dtype()
    dims = tuple(operator.index(d) for d in dimensions)
    out = []
    for k, n in enumerate(dims):
        shape = tuple(n if j == k else (1 if sparse else d) for j, d in enumerate(dims))
        out.append(_creation.iota(dtype, shape, k))
    if sparse:
        return tuple(out)
    if not out:
        return np.zeros((0,), dtype)
    return lax.concatenate([lax.expand_dims(o, (0,)) for o in out], 0)


def ix_(*args):
    """Open-mesh index arrays from 1-d sequences, for cross-product indexing.

    Example:
      >>> [a.shape for a in ix_(np.arange(2), np.arange(3))]
      [(2, 1), (1, 3)]
    """
    check_arraylike("ix_", *args)
    out = []
    for k, a in enumerate(args):
        a = as_array(a)
        if get_aval(a).ndim != 1:
            raise ValueError(f"jnp.ix_: arguments must be 1-d, argument {k} has shape "
                             f"{get_aval(a).shape}.")
        shape = [1] * len(args)
        shape[k] = get_aval(a).shape[0]
        out.append(lax.reshape(a, tuple(shape)))
    return tuple(out)


def unravel_index(indices_, shape):
    """The coordinates, in an array of `shape`, of flat indices (negative ones count from the
    end; out-of-range ones are clamped, as in JAX).

    Example:
      >>> unravel_index(np.array([5, 7]), (2, 4))
      (array([1, 1], dtype=int32), array([1, 3], dtype=int32))
    """
    check_arraylike("unravel_index", indices_)
    flat = as_array(indices_)
    shape = tuple(operator.index(d) for d in shape)
    size = int(np.prod(shape, dtype=np.int64))
    dtype = get_aval(flat).dtype
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"jnp.unravel_index: indices must be integers, got {dtype.name}.")
    zero = convert_dtype(np.asarray(0), dtype)
    flat = _select(lax.lt(flat, zero), flat, lax.add(flat, convert_dtype(np.asarray(size), dtype)))
    flat = lax.max(lax.min(flat, convert_dtype(np.asarray(max(size - 1, 0)), dtype)), zero)
    out = []
    for stride_dim in range(len(shape)):
        stride = int(np.prod(shape[stride_dim + 1:], dtype=np.int64))
        coordinate = lax.div(flat, convert_dtype(np.asarray(stride), dtype))
        out.append(lax.rem(coordinate, convert_dtype(np.asarray(shape[stride_dim]), dtype)))
    return tuple(out)


def ravel_multi_index(multi_index, dims, mode: str = "raise", order: str = "C"):
    """Flat indices from coordinate arrays (`mode` "clip" or "wrap"; "raise" checks concrete
    coordinates).

    Example:
      >>> ravel_multi_index((np.array([1, 0]), np.array([2, 3])), (2, 4))
      array([6, 3], dtype=int32)
    """
    check_arraylike("ravel_multi_index", *multi_index)
    dims = tuple(operator.index(d) for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"jnp.ravel_multi_index: {len(multi_index)} index arrays for "
                         f"{len(dims)} dimensions.")
    coords = promote_dtypes(*[as_array(m) for m in multi_index])
    coords = [convert_dtype(c, dtypes.default_int_dtype()) for c in coords]
    dtype = get_aval(coords[0]).dtype
    if mode == "raise":
        for c, n in zip(coords, dims, strict=True):
            value = concrete_array("ravel_multi_index", c)
            if np.any((value < 0) | (value >= n)):
                raise ValueError("jnp.ravel_multi_index: invalid entry in coordinates array.")
    elif mode == "clip":
        coords = [lax.max(lax.min(c, np.asarray(n - 1, dtype)), np.asarray(0, dtype))
                  for c, n in zip(coords, dims, strict=True)]
    elif mode == "wrap":
        coords = [_ufuncs.remainder(c, np.asarray(n, dtype))
                  for c, n in zip(coords, dims, strict=True)]
    else:
        raise ValueError(f"jnp.ravel_multi_index: mode must be 'raise', 'clip' or 'wrap', got "
                         f"{mode!r}.")
    order_dims = range(len(dims)) if order == "C" else reversed(range(len(dims)))
    out = None
    for k in order_dims:
        out = coords[k] if out is None else lax.add(lax.mul(out, np.asarray(dims[k], dtype)),
                                                    coords[k])
    return out


def _triangle_indices(name, n, k, m, lower):
    # the sizes are static, so the indices are constants (computed with NumPy)
    n, k = operator.index(n), operator.index(k)
    m = n if m is None else operator.index(m)
    mask = np.tri(n, m, k, dtype=bool) if lower else ~np.tri(n, m, k - 1, dtype=bool)
    return tuple(np.asarray(i, dtypes.default_int_dtype()) for i in np.nonzero(mask))


def tril_indices(n: int, k: int = 0, m: int | None = None):
    """The indices of the lower triangle of an `n x m` matrix (at and below diagonal `k`).

    Example:
      >>> tril_indices(2)
      (array([0, 1, 1], dtype=int32), array([0, 0, 1], dtype=int32))
    """
    return _triangle_indices("tril_indices", n, k, m, lower=True)


def triu_indices(n: int, k: int = 0, m: int | None = None):
    """The indices of the upper triangle of an `n x m` matrix (at and above diagonal `k`).

    Example:
      >>> triu_indices(2)
      (array([0, 0, 1], dtype=int32), array([0, 1, 1], dtype=int32))
    """
    return _triangle_indices("triu_indices", n, k, m, lower=False)


def tril_indices_from(arr, k: int = 0):
    """`tril_indices` for the shape of the 2-d `arr`.

    Example:
      >>> tril_indices_from(np.zeros((2, 3)))[1]
      array([0, 0, 1], dtype=int32)
    """
    shape = get_aval(as_array(arr)).shape
    if len(shape) != 2:
        raise ValueError(f"jnp.tril_indices_from: arr must be 2-d, got shape {shape}.")
    return tril_indices(shape[0], k, shape[1])


def triu_indices_from(arr, k: int = 0):
    """`triu_indices` for the shape of the 2-d `arr`.

    Example:
      >>> triu_indices_from(np.zeros((2, 3)))[1]
      array([0, 1, 2, 1, 2], dtype=int32)
    """
    shape = get_aval(as_array(arr)).shape
    if len(shape) != 2:
        raise ValueError(f"jnp.triu_indices_from: arr must be 2-d, got shape {shape}.")
    return triu_indices(shape[0], k, shape[1])


def diag_indices(n: int, ndim: int = 2):
    """The indices of the main diagonal of an `n x ... x n` array.

    Example:
      >>> diag_indices(2)
      (array([0, 1], dtype=int32), array([0, 1], dtype=int32))
    """
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"jnp.diag_indices: n must be non-negative, got {n}.")
    index = np.arange(n, dtype=dtypes.default_int_dtype())
    return (index,) * operator.index(ndim)


def diag_indices_from(arr):
    """`diag_indices` for an array whose dimensions all have the same size.

    Example:
      >>> len(diag_indices_from(np.zeros((2, 2, 2))))
      3
    """
    shape = get_aval(as_array(arr)).shape
    if len(shape) < 2 or len(set(shape)) != 1:
        raise ValueError(f"jnp.diag_indices_from: arr must be at least 2-d with equal "
                         f"dimensions, got shape {shape}.")
    return diag_indices(shape[0], len(shape))


def mask_indices(n: int, mask_func, k: int = 0, *, size=None):
    """The indices where `mask_func(ones((n, n)), k)` is non-zero.

    Example:
      >>> from laminax_core.numpy._creation import triu
      >>> mask_indices(2, triu)[1]
      array([0, 1, 1], dtype=int32)
    """
    return _indexing.nonzero(mask_func(_creation.ones((n, n), np.int32), k), size=size)


class _Grid:
    """`mgrid[...]` / `ogrid[...]`: dense or open grids from slices (a complex step means a
    number of points, endpoint included)."""

    def __init__(self, sparse: bool, name: str):
        self.sparse = sparse
        self.name = name

    def __getitem__(self, key):
        single = isinstance(key, slice)
        axes = []
        for s in (key,) if single else key:
            if not isinstance(s, slice):
                raise TypeError(f"jnp.{self.name} takes slices, got {s!r}.")
            start = 0 if s.start is None else s.start
            step = 1 if s.step is None else s.step
            if isinstance(step, complex):
                axes.append(_creation.linspace(start, s.stop, int(abs(step))))
            else:
                axes.append(_creation.arange(start, s.stop, step))
        if single:
            return axes[0]

        grids = _creation.meshgrid(*axes, indexing="ij", sparse=self.sparse)
        if self.sparse:
            return grids

        return stack(promote_dtypes(*grids))

    def __repr__(self) -> str:
        return f"jnp.{self.name}"


mgrid = _Grid(False, "mgrid")
mgrid.__doc__ = ("Dense grids from slices: `mgrid[0:2, 0:3]` has shape (2, 2, 3).\n\n"
                 "Example:\n  >>> mgrid[0:2, 0:3].shape\n  (2, 2, 3)\n")
ogrid = _Grid(True, "ogrid")
ogrid.__doc__ = ("Open grids from slices: `ogrid[0:2, 0:3]` gives shapes (2, 1), (1, 3).\n\n"
                 "Example:\n  >>> [g.shape for g in ogrid[0:2, 0:3]]\n  [(2, 1), (1, 3)]\n")


def select(condlist, choicelist, default=0):
    """The element of the first choice whose condition holds, else `default`.

    Example:
      >>> x = np.arange(4)
      >>> select([x < 1, x > 2], [x, x * 10], default=-1)
      array([ 0, -1, -1, 30], dtype=int32)
    """
    if len(condlist) != len(choicelist):
        raise ValueError(f"jnp.select: condlist and choicelist must have the same length, got "
                         f"{len(condlist)} and {len(choicelist)}.")
    if not condlist:
        raise ValueError("jnp.select: condlist must not be empty.")
    check_arraylike("select", *condlist, *choicelist, default)
    *choices, default = promote_dtypes(*choicelist, default)
    conds = [as_array(c) for c in condlist]
    for c in conds:
        if get_aval(c).dtype != np.bool_:
            raise TypeError(f"jnp.select: conditions must be boolean, got "
                            f"{get_aval(c).dtype.name}.")
    out = default
    for cond, choice in reversed(list(zip(conds, choices, strict=True))):
        out = _select(cond, out, choice)
    return out


def choose(a, choices, out=None, mode: str = "raise"):
    """`choices[a[i]][i]` elementwise (`mode` "clip" or "wrap" for out-of-range `a`).

    Example:
      >>> choose(np.array([0, 1, 0]), [np.array([1, 2, 3]), np.array([10, 20, 30])])
      array([ 1, 20,  3], dtype=int32)
    """
    if out is not None:
        raise NotImplementedError("jnp.choose: the out argument is not supported.")
    check_arraylike("choose", a, *choices)
    a = convert_dtype(as_array(a), np.int32)
    n = len(choices)
    if mode == "raise":
        value = concrete_array("choose", a)
        if np.any((value < 0) | (value >= n)):
            raise ValueError("jnp.choose: invalid entry in choice array.")
    elif mode == "wrap":
        a = _ufuncs.remainder(a, np.int32(n))
    elif mode == "clip":
        a = lax.max(lax.min(a, np.int32(n - 1)), np.int32(0))
    else:
        raise ValueError(f"jnp.choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}.")
    choices = promote_dtypes(*choices)
    shape = np.broadcast_shapes(get_aval(a).shape, *(get_aval(c).shape for c in choices))
    return lax.select_n(broadcast_to_shape(a, shape),
                        *(broadcast_to_shape(c, shape) for c in choices))


def compress(condition, a, axis: int | None = None, *, size=None, fill_value=0, out=None):
    """The slices of `a` along `axis` where the 1-d `condition` is true.

    Example:
      >>> compress(np.array([True, False, True]), np.arange(3))
      array([0, 2], dtype=int32)
    """
    if out is not None:
        raise NotImplementedError("jnp.compress: the out argument is not supported.")
    check_arraylike("compress", condition)
    a, axis = flatten_or_axis("compress", a, axis)
    condition = as_array(condition)
    n = get_aval(a).shape[axis]
    cond_n = get_aval(condition).shape[0] if get_aval(condition).ndim else 1
    if cond_n > n:
        condition = lax.slice(lax.reshape(condition, (cond_n,)), (0,), (n,))
    (where_true,) = _indexing.nonzero(condition, size=size,
                                      fill_value=-1 if size is not None else None)
    picked = _indexing.take(a, where_true, axis=axis, mode="fill", fill_value=fill_value)
    return picked


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of the flattened `arr` where the flattened `condition` is non-zero.

    Example:
      >>> extract(np.array([1, 0, 1]), np.array([4, 5, 6]))
      array([4, 6], dtype=int32)
    """
    check_arraylike("extract", condition, arr)
    condition = as_array(condition)
    flat = lax.reshape(lax.ne(condition, convert_dtype(np.asarray(0), get_aval(condition).dtype)),
                       (get_aval(condition).size,))
    return compress(flat, lax.reshape(as_array(arr), (get_aval(as_array(arr)).size,)),
                    size=size, fill_value=fill_value)


def piecewise(x, condlist, funclist, *args, **kw):
    """Applies `funclist[i]` where `condlist[i]` holds (a trailing extra function or value is
    the default, used where no condition holds).

    Example:
      >>> x = np.array([-2.0, 3.0], np.float32)
      >>> piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v * 2])
      array([2., 6.], dtype=float32)
    """
    check_arraylike("piecewise", x)
    x = as_array(x)
    conds = [as_array(c) for c in (condlist if isinstance(condlist, (list, tuple))
                                   else [condlist])]
    funcs = list(funclist)
    if len(funcs) == len(conds) + 1:
        default = funcs.pop()
    elif len(funcs) == len(conds):
        default = 0
    else:
        raise ValueError(f"jnp.piecewise: with {len(conds)} conditions, funclist must have "
                         f"{len(conds)} or {len(conds) + 1} entries, got {len(funcs)}.")

    def value_of(f):
        v = f(x, *args, **kw) if callable(f) else f
        return broadcast_to_shape(convert_dtype(as_array(v), get_aval(x).dtype),
                                  get_aval(x).shape)

    out = value_of(default)
    for cond, f in zip(conds, funcs, strict=True):
        out = _select(broadcast_to_shape(cond, get_aval(x).shape), out, value_of(f))
    return out


def delete(arr, obj, axis: int | None = None, *, assume_unique_indices: bool = False):
    """`arr` without the entries `obj` (an int, slice or concrete index array) along `axis`.

    Example:
      >>> delete(np.arange(5), np.array([0, 3]))
      array([1, 2, 4], dtype=int32)
    """
    check_arraylike("delete", arr)
    arr = as_array(arr)
    if axis is None:
        arr = lax.reshape(arr, (get_aval(arr).size,))
        axis = 0
    axis = canonicalize_axis(axis, get_aval(arr).ndim, "jnp.delete")
    n = get_aval(arr).shape[axis]
    if isinstance(obj, slice):
        removed = np.arange(n)[obj]
    else:
        removed = concrete_array("delete", obj).astype(np.int64).ravel()
        if np.any((removed < -n) | (removed >= n)):
            raise IndexError(f"jnp.delete: index out of bounds for axis {axis} with size {n}.")
        removed = removed % n if n else removed
    kept = np.setdiff1d(np.arange(n), removed).astype(np.int32)
    return _indexing.take(arr, kept, axis=axis, mode="clip")


def insert(arr, obj, values, axis: int | None = None):
    """`values` inserted into `arr` before the (concrete) indices `obj` along `axis`.

    Example:
      >>> insert(np.arange(3), 1, 9)
      array([0, 9, 1, 2], dtype=int32)
    """
    check_arraylike("insert", arr, values)
    arr = as_array(arr)
    if axis is None:
        arr = lax.reshape(arr, (get_aval(arr).size,))
        axis = 0
    axis = canonicalize_axis(axis, get_aval(arr).ndim, "jnp.insert")
    n = get_aval(arr).shape[axis]
    positions = np.arange(n + 1)[obj] if isinstance(obj, slice) else concrete_array("insert", obj)
    scalar_obj = positions.ndim == 0
    positions = np.atleast_1d(positions).astype(np.int64)
    positions = np.where(positions < 0, positions + n, positions)
    values = convert_dtype(as_array(values), get_aval(arr).dtype)
    moved = moveaxis(arr, axis, 0)
    v_shape = (len(positions), *get_aval(moved).shape[1:])
    if scalar_obj and get_aval(values).ndim == get_aval(arr).ndim:
        values = moveaxis(values, axis, 0)
        v_shape = (get_aval(values).shape[0], *get_aval(moved).shape[1:])
        positions = np.full(v_shape[0], positions[0])
    elif get_aval(values).ndim == get_aval(arr).ndim:
        values = moveaxis(values, axis, 0)
    values = broadcast_to_shape(values, v_shape)
    # stable order: the new rows go before the old row at the same position
    order = np.argsort(np.concatenate([np.arange(n), positions]) * 2 +
                       np.concatenate([np.ones(n), np.zeros(len(positions))]), kind="stable")
    joined = concatenate([moved, values], 0)
    return moveaxis(_indexing.take(joined, order.astype(np.int32), axis=0, mode="clip"), 0, axis)


def put(a, ind, v, mode=None, *, inplace: bool = True):
    """A copy of `a` with the flat positions `ind` set to `v` (arrays are immutable, so
    `inplace=False` is required, as in JAX).

    Example:
      >>> put(np.zeros(4, np.int32), np.array([1, 3]), 7, inplace=False)
      array([0, 7, 0, 7], dtype=int32)
    """
    if inplace:
        raise ValueError("jnp.put cannot modify arrays in place (they are immutable); pass "
                         "inplace=False and use the returned array.")
    check_arraylike("put", a, ind, v)
    a = as_array(a)
    flat = lax.reshape(a, (get_aval(a).size,))
    ind = lax.reshape(as_array(ind), (get_aval(as_array(ind)).size,))
    v = as_array(v)
    count = get_aval(ind).shape[0]
    v = lax.reshape(v, (get_aval(v).size,))
    if get_aval(v).shape[0] not in (count, 1) and count:
        v = resize(v, (count,))
    if mode == "wrap":
        ind = _ufuncs.remainder(ind, get_aval(flat).shape[0])
    out = _indexing.IndexUpdateHelper(flat)[ind].set(v, mode="clip" if mode == "clip" else None)
    return lax.reshape(out, get_aval(a).shape)


def place(arr, mask, vals, *, inplace: bool = True):
    """A copy of `arr` whose elements where `mask` is true are `vals`, in order (repeated
    cyclically if short, as NumPy's `place` does); `inplace=False` is required.

    Example:
      >>> place(np.zeros(4, np.int32), np.array([1, 0, 1, 1], bool), np.array([7, 8]),
      ...       inplace=False)
      array([7, 0, 8, 7], dtype=int32)
    """
    check_arraylike("place", arr, mask, vals)
    if inplace:
        raise ValueError("jnp.place cannot modify arrays in place (they are immutable); pass "
                         "inplace=False and use the returned array.")
    data, mask, vals = as_array(arr), as_array(mask), as_array(vals)
    size = get_aval(data).size
    if size != get_aval(mask).size:
        raise ValueError(f"jnp.place: arr and mask must have the same size, got {size} and "
                         f"{get_aval(mask).size}.")
    if not get_aval(vals).size:
        raise ValueError("jnp.place: cannot place values from an empty array.")
    if not size:
        return data
    flat_mask = lax.reshape(mask, (size,))
    # positions of the true entries, padded with an out-of-bounds index that "drop" skips
    (positions,) = _selection.where(flat_mask, size=size, fill_value=size)
    values = resize(lax.reshape(vals, (get_aval(vals).size,)), (size,))
    flat = _indexing.IndexUpdateHelper(lax.reshape(data, (size,)))[positions]
    flat = flat.set(values, mode="drop")
    return lax.reshape(flat, get_aval(data).shape)


def put_along_axis(arr, indices_, values, axis: int | None, inplace: bool = True, *,
                   mode=None):
    """A copy of `arr` with `values` put at `indices` along `axis` (pairing the other axes,
    as `take_along_axis` reads them); `inplace=False` is required.

    Example:
      >>> put_along_axis(np.zeros((1, 3)), np.array([[2]]), 5.0, 1, inplace=False)
      array([[0., 0., 5.]], dtype=float32)
    """
    if inplace:
        raise ValueError("jnp.put_along_axis cannot modify arrays in place; pass "
                         "inplace=False and use the returned array.")
    check_arraylike("put_along_axis", arr, indices_, values)
    arr, indices_ = as_array(arr), as_array(indices_)
    if axis is None:
        arr = lax.reshape(arr, (get_aval(arr).size,))
        indices_ = lax.reshape(indices_, (get_aval(indices_).size,))
        axis = 0
    shape = get_aval(arr).shape
    axis = canonicalize_axis(axis, len(shape), "jnp.put_along_axis")
    index = _indexing.along_axis_index(shape, axis, indices_)
    return _indexing.IndexUpdateHelper(arr)[index].set(values, mode=mode)


def fill_diagonal(a, val, wrap: bool = False, *, inplace: bool = True):
    """A copy of `a` with its main diagonal set to `val` (`inplace=False` is required).

    Example:
      >>> fill_diagonal(np.zeros((2, 2), np.int32), 3, inplace=False)
      array([[3, 0],
             [0, 3]], dtype=int32)
    """
    if inplace:
        raise ValueError("jnp.fill_diagonal cannot modify arrays in place; pass inplace=False "
                         "and use the returned array.")
    check_arraylike("fill_diagonal", a, val)
    a = as_array(a)
    shape = get_aval(a).shape
    if len(shape) < 2 or (len(shape) > 2 and len(set(shape)) != 1):
        raise ValueError(f"jnp.fill_diagonal: a must be 2-d, or have equal dimensions, got "
                         f"shape {shape}.")
    n = min(shape) if len(shape) == 2 else shape[0]
    flat_positions = np.arange(n) * int(np.sum(np.cumprod((1, *shape[::-1][:-1]))))
    if wrap and len(shape) == 2 and shape[0] > shape[1]:
        step = shape[1] + 1
        flat_positions = np.arange(0, int(np.prod(shape)), step)
    flat = lax.reshape(a, (get_aval(a).size,))
    values = lax.reshape(as_array(val), (get_aval(as_array(val)).size,))
    count = len(flat_positions)
    if get_aval(values).shape[0] not in (1, count):
        values = resize(values, (count,))
    out = _indexing.IndexUpdateHelper(flat)[flat_positions.astype(np.int32)].set(values)
    return lax.reshape(out, shape)
