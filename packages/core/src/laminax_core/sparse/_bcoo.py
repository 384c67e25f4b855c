"""`BCOO`: batched coordinate sparse arrays, and the `bcoo_*` operations on them.

A BCOO array of shape `batch + sparse + dense` holds `data` (`batch + (nse,) + dense`) and
`indices` (`batch + (nse, n_sparse)`): entry `k` of a batch puts the dense block `data[..., k, ...]`
at the sparse coordinates `indices[..., k, :]`. Padding entries carry out-of-bounds indices (the
sparse shape itself), which every operation drops, as JAX lays them out.

Each operation is written for one batch element (a plain COO array with dense trailing
dimensions) out of gathers and scatter-adds, then mapped over the batch dimensions with `vmap`,
so `jit`, `grad` and `vmap` apply to them as to any lax program.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Sequence

import numpy as np
from laminax_pytree import register_pytree_node

from laminax_core import dtypes, errors
from laminax_core.lax import Precision
from laminax_core.lax import dot_general as lax_dot_general
from laminax_core.lax import dynamic_slice as lax_dynamic_slice
from laminax_core import numpy as jnp
from laminax_core._api import vmap
from laminax_core._trace import Tracer
from laminax_core.numpy._operands import is_concrete

__all__ = [
    "BCOO", "JAXSparse", "SparseEfficiencyError", "SparseEfficiencyWarning",
    "CuSparseEfficiencyWarning", "bcoo_fromdense", "bcoo_todense", "bcoo_dot_general",
    "bcoo_extract", "bcoo_multiply_dense", "bcoo_multiply_sparse", "bcoo_reduce_sum",
    "bcoo_reshape", "bcoo_transpose", "bcoo_sort_indices", "bcoo_sum_duplicates",
    "bcoo_concatenate", "bcoo_squeeze", "bcoo_rev", "bcoo_broadcast_in_dim", "bcoo_slice",
    "bcoo_dynamic_slice", "bcoo_update_layout", "bcoo_dot_general_sampled", "empty", "eye",
]


class SparseEfficiencyError(ValueError):
    """An operation would make a sparse layout inefficient and was asked to refuse."""


class SparseEfficiencyWarning(UserWarning):
    """An operation makes a sparse layout inefficient."""


class CuSparseEfficiencyWarning(SparseEfficiencyWarning):
    """cuSPARSE cannot run an operation; a fallback runs instead."""


class JAXSparse:
    """Base class of the sparse array types: a shape, a dtype and a number of stored entries."""

    data: object
    shape: tuple[int, ...]

    @property
    def dtype(self):
        return np.dtype(self.data.dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __len__(self) -> int:
        return self.shape[0]

    def block_until_ready(self):
        """Waits for every buffer of the array; returns the array."""
        for leaf in self._leaves():
            if hasattr(leaf, "block_until_ready"):
                leaf.block_until_ready()
        return self

    def __repr__(self) -> str:
        name = type(self).__name__
        try:
            shape = ", ".join(str(d) for d in self.shape)
            extra = f", n_batch={self.n_batch}" if self.n_batch else ""
            extra += f", n_dense={self.n_dense}" if self.n_dense else ""
            return f"{name}({self.dtype}[{shape}], nse={self.nse}{extra})"
        except Exception:  # a tree of placeholders (tree_map over specs) has no dtype
            return f"{name}(<invalid>)"


def _shape_of(x):
    return tuple(np.shape(x)) if not hasattr(x, "shape") else tuple(x.shape)


def _asarray(x):
    return x if isinstance(x, Tracer) else jnp.asarray(x)


class BCOO(JAXSparse):
    """Batched COO sparse array: `BCOO((data, indices), shape=...)`.

    Args:
      args: `(data, indices)` with data `batch + (nse,) + dense` and indices
        `batch + (nse, n_sparse)`.
      shape: the dense shape `batch + sparse + dense`.
      indices_sorted: the indices of each batch are sorted lexicographically.
      unique_indices: no coordinate appears twice in a batch.
    """

    def __init__(self, args, *, shape, indices_sorted: bool = False, unique_indices: bool = False):
        data, indices = args
        self.data, self.indices = _asarray(data), _asarray(indices)
        self.shape = tuple(operator.index(d) for d in shape)
        self.indices_sorted = bool(indices_sorted)
        self.unique_indices = bool(unique_indices)
        # which arrays share one layout: sparsify adds their data instead of concatenating
        self._ref = object()
        _validate(self.data, self.indices, self.shape)

    def _leaves(self):
        return (self.data, self.indices)

    @property
    def n_batch(self) -> int:
        return self.indices.ndim - 2

    @property
    def n_sparse(self) -> int:
        return self.indices.shape[-1]

    @property
    def n_dense(self) -> int:
        return self.data.ndim - 1 - self.n_batch

    @property
    def nse(self) -> int:
        return self.indices.shape[-2]

    @property
    def T(self) -> BCOO:
        return self.transpose()

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32, n_dense: int = 0, n_batch: int = 0):
        """The BCOO array holding the non-zeros of `mat` (see `bcoo_fromdense`)."""
        return bcoo_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    @classmethod
    def from_scipy_sparse(cls, mat, *, index_dtype=None, n_dense: int = 0, n_batch: int = 0):
        """The BCOO array of a `scipy.sparse` matrix (its COO entries, in their order)."""
        if n_dense or n_batch:
            raise NotImplementedError("BCOO.fromscipy with nonzero n_dense/n_batch")
        coo = mat.tocoo()
        index_dtype = index_dtype or np.int32
        indices = np.stack([coo.row, coo.col], axis=1).astype(index_dtype)
        return cls((np.asarray(coo.data), indices), shape=coo.shape,
                   indices_sorted=bool(getattr(coo, "has_canonical_format", False)),
                   unique_indices=bool(getattr(coo, "has_canonical_format", False)))

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32", n_dense=0, n_batch=0, nse=0):
        shape = tuple(shape)
        n_sparse = len(shape) - n_batch - n_dense
        if n_sparse < 0 or n_batch < 0 or n_dense < 0 or nse < 0:
            raise ValueError(f"Invalid inputs: {shape=}, {n_dense=}, {n_batch=}, {nse=}")
        batch, sparse, dense = shape[:n_batch], shape[n_batch:n_batch + n_sparse], shape[
            n_batch + n_sparse:]
        data = jnp.zeros(batch + (nse,) + dense, dtype)
        indices = jnp.broadcast_to(jnp.array(sparse, index_dtype), batch + (nse, n_sparse))
        return cls((data, indices), shape=shape, indices_sorted=True, unique_indices=True)

    def todense(self):
        """The dense array."""
        return bcoo_todense(self)

    def transpose(self, axes=None) -> BCOO:
        """Permutes the dimensions (batch, sparse and dense ones each among themselves)."""
        axes = tuple(reversed(range(self.ndim))) if axes is None else tuple(axes)
        return bcoo_transpose(self, permutation=axes)

    def reshape(self, *args, **kwargs) -> BCOO:
        """Reshapes the batch and the sparse dimensions (each on their own)."""
        new_sizes = args[0] if len(args) == 1 and not isinstance(args[0], int) else args
        new_sizes = kwargs.pop("new_sizes", new_sizes)
        return bcoo_reshape(self, new_sizes=tuple(new_sizes), **kwargs)

    def sum(self, axis=None):
        """Sums over `axis` (all by default): a BCOO array, or a dense scalar."""
        axes = tuple(range(self.ndim)) if axis is None else (
            (axis,) if isinstance(axis, int) else tuple(axis))
        out = bcoo_reduce_sum(self, axes=axes)
        return out.data.sum() if out.shape == () else out

    def sum_duplicates(self, nse=None, remove_zeros: bool = True) -> BCOO:
        """Merges repeated coordinates (and drops zero entries): sorted, unique indices."""
        return bcoo_sum_duplicates(self, nse=nse, remove_zeros=remove_zeros)

    def sort_indices(self) -> BCOO:
        """Sorts each batch's entries by their coordinates."""
        return bcoo_sort_indices(self)

    def update_layout(self, *, n_batch=None, n_dense=None, on_inefficient="error") -> BCOO:
        """The same array with another number of batch and dense dimensions."""
        return bcoo_update_layout(self, n_batch=n_batch, n_dense=n_dense,
                                  on_inefficient=on_inefficient)

    def astype(self, dtype) -> BCOO:
        """The array with its data converted to `dtype`."""
        return BCOO((self.data.astype(dtype), self.indices), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    def tree_flatten(self):
        """`(data, indices)` and the static layout."""
        return (self.data, self.indices), self._aux()

    @classmethod
    def tree_unflatten(cls, aux, children):
        """The BCOO array of `children` and `aux` (see `tree_flatten`)."""
        return _unflatten(aux, children)

    def _aux(self):
        if not hasattr(self.indices, "ndim"):  # a tree of placeholders keeps its layout
            return self._placeholder_aux
        return (self.shape, self.n_batch, self.n_sparse, self.indices_sorted, self.unique_indices)

    # operators: what JAX's BCOO has, through the same functions as `sparsify`
    def __neg__(self):
        return self._with_data(-self.data)

    def __pos__(self):
        return self

    def __mul__(self, other):
        return _multiply(self, other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, JAXSparse):
            raise NotImplementedError(
                "Division by a sparse array is not implemented because it would result in "
                "dense output. If this is your intent, use sparse.todense() to convert your "
                "arguments to a dense array.")
        return _multiply(self, 1 / _asarray(other))

    def __add__(self, other):
        return _add(self, other)

    __radd__ = __add__

    def __sub__(self, other):
        return _add(self, -other)

    def __rsub__(self, other):
        return _add(-self, other)

    def __pow__(self, exponent):
        if not isinstance(exponent, int) or exponent <= 0:
            raise NotImplementedError(
                f"sparse rule for integer_pow with non-positive exponent {exponent} is not "
                "implemented because it would result in dense output.")
        unique = self._unique()
        return unique._with_data(unique.data ** exponent)

    def __matmul__(self, other):
        return _matmul(self, other)

    def __rmatmul__(self, other):
        return _matmul(other, self)

    def _with_data(self, data) -> BCOO:
        out = BCOO((data, self.indices), shape=self.shape, indices_sorted=self.indices_sorted,
                   unique_indices=self.unique_indices)
        out._ref = self._ref
        return out

    def _unique(self) -> BCOO:
        # a nonlinear elementwise function needs each coordinate once
        if self.unique_indices:
            return self
        return bcoo_sum_duplicates(self, nse=self.nse, remove_zeros=False)


def _validate(data, indices, shape):
    if not hasattr(data, "ndim") or not hasattr(indices, "ndim"):
        return
    if indices.ndim < 2:
        raise ValueError(f"BCOO: indices must have at least 2 dimensions; got {indices.shape=}")
    n_batch, n_sparse = indices.ndim - 2, indices.shape[-1]
    n_dense = len(shape) - n_batch - n_sparse
    if n_dense < 0 or data.ndim != n_batch + 1 + n_dense:
        raise ValueError(f"Invalid {data.shape=} for nse={indices.shape[-2]}, {n_batch=}, "
                         f"{n_dense=}")
    batch = shape[:n_batch]
    if any(d not in (1, s) for d, s in zip(data.shape[:n_batch], batch, strict=True)):
        raise ValueError(f"data batch dimensions not compatible for {data.shape=}, {shape=}")
    if any(d not in (1, s) for d, s in zip(indices.shape[:n_batch], batch, strict=True)):
        raise ValueError(f"indices batch dimensions not compatible for {indices.shape=}, {shape=}")
    if data.shape[n_batch] != indices.shape[-2] or tuple(data.shape[n_batch + 1:]) != tuple(
            shape[n_batch + n_sparse:]):
        raise ValueError(f"Invalid {data.shape=} for nse={indices.shape[-2]}, {n_batch=}, "
                         f"{n_dense=}")


def _unflatten(aux, children):
    shape, n_batch, n_sparse, indices_sorted, unique_indices = aux
    data, indices = children
    obj = object.__new__(BCOO)
    obj.data, obj.indices = data, indices
    obj.indices_sorted, obj.unique_indices = indices_sorted, unique_indices
    obj._ref = object()
    if hasattr(data, "ndim") and hasattr(indices, "ndim"):
        # vmap adds or removes leading batch dimensions of the leaves: the shape follows them
        if indices.ndim < 2:
            raise ValueError(f"Cannot map in_axis=0 for BCOO array with n_batch={n_batch}. "
                             "in_axes for batched BCOO operations must correspond to a batch "
                             "dimension.")
        nb = indices.ndim - 2
        batch = tuple(max(a, b) for a, b in zip(data.shape[:nb], indices.shape[:nb], strict=True))
        obj.shape = batch + tuple(shape[n_batch:n_batch + n_sparse]) + tuple(data.shape[nb + 1:])
    else:
        obj.shape, obj._placeholder_aux = shape, aux
    return obj


register_pytree_node(BCOO, lambda m: ((m.data, m.indices), m._aux()), _unflatten)


# ----- layout helpers ----------------------------------------------------------------------------


def _split(mat):
    nb, ns = mat.n_batch, mat.n_sparse
    return mat.shape[:nb], mat.shape[nb:nb + ns], mat.shape[nb + ns:]


def _broadcast_batch(mat):
    """(data, indices) with the indices' batch dimensions as large as the data's."""
    batch = mat.shape[:mat.n_batch]
    data = jnp.broadcast_to(mat.data, batch + mat.data.shape[mat.n_batch:])
    indices = jnp.broadcast_to(mat.indices, batch + mat.indices.shape[mat.n_batch:])
    return data, indices


def _per_batch(fn, n_batch: int, in_axes=0):
    for _ in range(n_batch):
        fn = vmap(fn, in_axes=in_axes)
    return fn


def _valid(indices, sparse_shape):
    # a padding entry has an out-of-bounds coordinate
    bound = (jnp.array(sparse_shape, indices.dtype) if sparse_shape
             else jnp.zeros((0,), indices.dtype))
    return jnp.all((indices >= 0) & (indices < bound), axis=-1)


def _linear(indices, sparse_shape):
    strides = np.cumprod((1,) + tuple(sparse_shape[::-1]))[:-1][::-1]
    return jnp.sum(indices * jnp.array(strides, indices.dtype), axis=-1) if sparse_shape else (
        jnp.zeros(indices.shape[:-1], indices.dtype))


def _unravel(flat, sparse_shape, dtype):
    cols = []
    for size in reversed(sparse_shape):
        cols.append(flat % size)
        flat = flat // size
    return jnp.stack(cols[::-1], axis=-1).astype(dtype) if sparse_shape else jnp.zeros(
        flat.shape + (0,), dtype)


# ----- conversion ----------------------------------------------------------------------------


def bcoo_fromdense(mat, *, nse=None, n_batch: int = 0, n_dense: int = 0, index_dtype=np.int32):
    """The BCOO array of the non-zeros of `mat` (a block over the dense dimensions counts when
    any of its elements is non-zero), sorted, padded to `nse` with out-of-bounds indices.

    Args:
      mat: the dense array.
      nse: the number of stored entries per batch; by default the largest count of non-zeros
        (which needs a concrete `mat`).
      n_batch, n_dense: the numbers of leading batch and trailing dense dimensions.
      index_dtype: the dtype of the indices.
    """
    mat = _asarray(mat)
    shape = tuple(mat.shape)
    n_sparse = len(shape) - n_batch - n_dense
    if n_batch < 0 or n_dense < 0 or n_sparse < 0:
        raise ValueError(f"Invalid {n_batch=}, {n_dense=} for shape={shape}")
    sparse_shape = shape[n_batch:n_batch + n_sparse]
    mask = mat != 0
    if n_dense:
        mask = jnp.any(mask, axis=tuple(range(mask.ndim - n_dense, mask.ndim)))
    if nse is None:
        if not is_concrete(mask):
            raise errors.ConcretizationTypeError(
                mat, "The error arose for the nse argument of bcoo_fromdense. In order for "
                "BCOO.fromdense() to be used in traced/compiled code, you must pass a concrete "
                "value to the nse (number of stored elements) argument.")
        counts = np.asarray(mask).reshape(shape[:n_batch] + (-1,)).sum(-1)
        nse = int(counts.max()) if counts.size else 0
    nse = operator.index(nse)

    def one(m, block):
        if not sparse_shape:
            return block[None][:nse] if nse <= 1 else jnp.concatenate(
                [block[None], jnp.zeros((nse - 1,) + block.shape, block.dtype)]), jnp.zeros(
                (nse, 0), index_dtype)
        where = jnp.nonzero(m, size=nse, fill_value=sparse_shape)
        indices = jnp.stack(where, axis=-1).astype(index_dtype)
        data = block.at[where].get(mode="fill", fill_value=0)
        return data, indices

    data, indices = _per_batch(one, n_batch)(mask, mat)
    return BCOO((data, indices), shape=shape, indices_sorted=True, unique_indices=True)


def bcoo_todense(mat):
    """The dense array of a BCOO array (repeated coordinates add up)."""
    if not isinstance(mat, BCOO):
        raise TypeError(f"bcoo_todense: expected a BCOO array; got {type(mat)}")
    _, sparse_shape, dense_shape = _split(mat)
    data, indices = _broadcast_batch(mat)

    def one(d, i):
        if not sparse_shape:  # every entry is the one dense block
            return d.sum(0)
        out = jnp.zeros(sparse_shape + dense_shape, d.dtype)
        return out.at[tuple(i[:, k] for k in range(len(sparse_shape)))].add(d, mode="drop")

    return _per_batch(one, mat.n_batch)(data, indices)


def bcoo_extract(sparr, arr, *, assume_unique=None):
    """The elements of dense `arr` at the coordinates of `sparr`, as a BCOO array of its layout."""
    if not isinstance(sparr, BCOO):
        raise TypeError("First argument to bcoo_extract should be a BCOO array. "
                        f"Got {type(sparr)=}")
    arr = _asarray(arr)
    if tuple(arr.shape) != sparr.shape:
        raise ValueError(f"shape mismatch: {sparr.shape=} {arr.shape=}")
    data = _gather(sparr, arr)
    return sparr._with_data(data)


def _gather(mat, dense):
    """`dense`'s blocks at `mat`'s coordinates: the shape of `mat.data` (0 at padding)."""
    data, indices = _broadcast_batch(mat)

    def one(i, v):
        if not i.shape[-1]:
            return jnp.broadcast_to(v, i.shape[:1] + v.shape)
        return v.at[tuple(i[:, k] for k in range(i.shape[-1]))].get(mode="fill", fill_value=0)

    return _per_batch(one, mat.n_batch)(indices, dense)


# ----- structure -------------------------------------------------------------------------------


def bcoo_sort_indices(mat):
    """The BCOO array with each batch's entries in lexicographic order of their coordinates."""
    if mat.n_sparse == 0 or mat.nse == 0:
        return BCOO((mat.data, mat.indices), shape=mat.shape, indices_sorted=True,
                    unique_indices=mat.unique_indices)
    data, indices = _broadcast_batch(mat)

    def one(d, i):
        order = jnp.lexsort(tuple(i[:, k] for k in reversed(range(i.shape[-1]))))
        return d[order], i[order]

    data, indices = _per_batch(one, mat.n_batch)(data, indices)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True,
                unique_indices=mat.unique_indices)


def bcoo_sum_duplicates(mat, nse=None, remove_zeros: bool = True):
    """Adds up the entries sharing a coordinate: sorted, unique indices, padded to `nse`.

    Args:
      mat: the BCOO array.
      nse: the number of entries of the result; by default the largest number of distinct
        coordinates in a batch (which needs concrete indices).
      remove_zeros: whether entries whose data is zero are dropped as well.
    """
    _, sparse_shape, dense_shape = _split(mat)
    data, indices = _broadcast_batch(mat)
    sentinel = math.prod(sparse_shape)
    dense_axes = tuple(range(mat.n_batch + 1, data.ndim))

    def keys_of(d, i):
        keep = _valid(i, sparse_shape)
        if remove_zeros:
            keep = keep & jnp.any(d != 0, axis=tuple(range(1, d.ndim))) if d.ndim > 1 else (
                keep & (d != 0))
        return jnp.where(keep, _linear(i, sparse_shape), sentinel), keep

    if nse is None:
        if not (is_concrete(data) and is_concrete(indices)):
            raise ValueError(
                "bcoo_sum_duplicates: nse must be specified when using the function within "
                "jit, vmap, and other transformations requiring abstract evaluation.")
        keys, keep = _per_batch(keys_of, mat.n_batch)(data, indices)
        keys, keep = np.asarray(keys), np.asarray(keep)
        flat = keys.reshape((-1, keys.shape[-1]))
        kept = keep.reshape(flat.shape)
        nse = max([len(np.unique(k[m])) for k, m in zip(flat, kept, strict=True)] or [0])
    nse = operator.index(nse)
    del dense_axes

    def one(d, i):
        keys, keep = keys_of(d, i)
        order = jnp.argsort(keys, stable=True)
        keys, d = keys[order], d[order] * _expand(keep[order], d.ndim)
        first = jnp.concatenate([jnp.ones((1,), bool), keys[1:] != keys[:-1]]) if keys.shape[
            0] else jnp.zeros((0,), bool)
        segment = jnp.cumsum(first) - 1
        out_keys = jnp.full((nse,), sentinel, keys.dtype).at[segment].set(keys, mode="drop")
        out_data = jnp.zeros((nse,) + dense_shape, d.dtype).at[segment].add(d, mode="drop")
        out_idx = _unravel(out_keys, sparse_shape, i.dtype)
        pad = jnp.array(sparse_shape, i.dtype) if sparse_shape else jnp.zeros((0,), i.dtype)
        out_idx = jnp.where((out_keys == sentinel)[:, None], pad, out_idx)
        return out_data, out_idx

    data, indices = _per_batch(one, mat.n_batch)(data, indices)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


def _expand(mask, ndim):
    return mask.reshape(mask.shape + (1,) * (ndim - 1))


def bcoo_transpose(mat, *, permutation: Sequence[int]):
    """Permutes the dimensions; batch, sparse and dense dimensions each stay in their group."""
    if not isinstance(permutation, (tuple, list, np.ndarray)):
        raise TypeError(
            f"transpose permutation must be a tuple/list/ndarray, got {type(permutation)}.")
    permutation = tuple(operator.index(p) for p in permutation)
    if sorted(permutation) != list(range(mat.ndim)):
        raise TypeError("transpose permutation isn't a permutation of operand dimensions, got "
                        f"permutation {permutation} for shape {mat.shape}.")
    nb, ns = mat.n_batch, mat.n_sparse
    batch_perm, sparse_perm, dense_perm = (permutation[:nb], permutation[nb:nb + ns],
                                           permutation[nb + ns:])
    if tuple(sorted(batch_perm)) != tuple(range(nb)):
        raise NotImplementedError("transpose permutation cannot permute batch axes with "
                                  f"non-batch axes; got {permutation=}")
    if tuple(sorted(dense_perm)) != tuple(range(nb + ns, mat.ndim)):
        raise NotImplementedError("transpose permutation cannot permute dense axes with "
                                  f"non-dense axes; got {permutation=}")
    indices = jnp.transpose(mat.indices, batch_perm + (nb, nb + 1))
    indices = indices[..., [p - nb for p in sparse_perm]] if ns else indices
    data = jnp.transpose(mat.data, batch_perm + (nb,) + tuple(p - ns + 1 for p in dense_perm))
    unchanged = sparse_perm == tuple(range(nb, nb + ns))
    return BCOO((data, indices), shape=tuple(mat.shape[p] for p in permutation),
                indices_sorted=mat.indices_sorted and unchanged, unique_indices=mat.unique_indices)


def bcoo_reshape(mat, *, new_sizes: Sequence[int], dimensions=None):
    """Reshapes a BCOO array: its batch dimensions among themselves, its sparse ones among
    themselves (coordinates re-linearized), its dense ones unchanged."""
    if dimensions is not None:
        mat = bcoo_transpose(mat, permutation=dimensions)
    new_sizes = tuple(operator.index(d) for d in new_sizes)
    if math.prod(new_sizes) != mat.size:
        raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} for "
                        f"shape {mat.shape}.")
    batch, sparse, dense = _split(mat)
    cumulative = np.cumprod((1,) + new_sizes)
    # the leading new dimensions that hold exactly the batch elements, the trailing ones the
    # dense blocks: the rest must hold the sparse part
    nb_new = int(np.searchsorted(cumulative[1:], math.prod(batch), side="right")) if batch else 0
    if math.prod(new_sizes[:nb_new]) != math.prod(batch):
        raise ValueError("bcoo_reshape: new shape cannot mix batch and sparse dimensions; got "
                         f"shape={mat.shape} new_shape={new_sizes} with n_batch={mat.n_batch}")
    nd_new = 0
    while nd_new < len(new_sizes) - nb_new and math.prod(new_sizes[len(new_sizes) - nd_new - 1:]) \
            <= math.prod(dense) and dense:
        nd_new += 1
    if math.prod(new_sizes[len(new_sizes) - nd_new:]) != math.prod(dense) or (
            dense and new_sizes[len(new_sizes) - nd_new:] != dense):
        raise ValueError("bcoo_reshape: new shape cannot mix sparse and dense dimensions; got "
                         f"shape={mat.shape} new_shape={new_sizes} with n_dense={mat.n_dense}")
    new_batch = new_sizes[:nb_new]
    new_sparse = new_sizes[nb_new:len(new_sizes) - nd_new]
    data, indices = _broadcast_batch(mat)
    valid = _valid(indices, sparse)
    flat = _linear(indices, sparse)
    new_indices = _unravel(flat, new_sparse, indices.dtype)
    pad = jnp.array(new_sparse, indices.dtype) if new_sparse else jnp.zeros((0,), indices.dtype)
    new_indices = jnp.where(valid[..., None], new_indices, pad)
    data = data.reshape(new_batch + data.shape[mat.n_batch:])
    new_indices = new_indices.reshape(new_batch + new_indices.shape[mat.n_batch:])
    return BCOO((data, new_indices), shape=new_sizes, indices_sorted=mat.indices_sorted,
                unique_indices=mat.unique_indices)


def bcoo_squeeze(arr, *, dimensions: Sequence[int]):
    """Removes size-1 dimensions."""
    dimensions = tuple(d % arr.ndim for d in dimensions)
    if any(arr.shape[d] != 1 for d in dimensions):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to one, "
                         f"got shape={arr.shape} and {dimensions=}")
    nb, ns = arr.n_batch, arr.n_sparse
    batch_axes = tuple(d for d in dimensions if d < nb)
    sparse_keep = [k for k in range(ns) if nb + k not in dimensions]
    dense_axes = tuple(d - ns + 1 for d in dimensions if d >= nb + ns)
    data, indices = _broadcast_batch(arr)
    data = jnp.squeeze(data, batch_axes + dense_axes)
    indices = jnp.squeeze(indices, batch_axes)[..., sparse_keep]
    shape = tuple(s for d, s in enumerate(arr.shape) if d not in dimensions)
    return BCOO((data, indices), shape=shape, indices_sorted=arr.indices_sorted,
                unique_indices=arr.unique_indices)


def bcoo_rev(operand, dimensions: Sequence[int]):
    """Reverses the order of elements along `dimensions`."""
    nb, ns = operand.n_batch, operand.n_sparse
    data, indices = _broadcast_batch(operand)
    batch_axes = tuple(d for d in dimensions if d < nb)
    data = jnp.flip(data, batch_axes + tuple(d - ns + 1 for d in dimensions if d >= nb + ns))
    indices = jnp.flip(indices, batch_axes) if batch_axes else indices
    sparse_shape = operand.shape[nb:nb + ns]
    flip = np.array([nb + k in dimensions for k in range(ns)])
    if flip.any():
        valid = _valid(indices, sparse_shape)
        flipped = jnp.array(sparse_shape, indices.dtype) - 1 - indices
        indices = jnp.where(valid[..., None] & flip, flipped, indices)
    return BCOO((data, indices), shape=operand.shape, unique_indices=operand.unique_indices)


def bcoo_broadcast_in_dim(mat, *, shape, broadcast_dimensions, sharding=None):
    """Broadcasts a BCOO array: new leading dimensions become batch dimensions."""
    del sharding
    shape, broadcast_dimensions = tuple(shape), tuple(broadcast_dimensions)
    if len(broadcast_dimensions) != mat.ndim:
        raise ValueError(f"{mat.shape=} and {broadcast_dimensions=} must have the same length")
    n_new = len(shape) - mat.ndim
    if broadcast_dimensions != tuple(range(n_new, len(shape))):
        raise NotImplementedError("bcoo_broadcast_in_dim: only new leading dimensions")
    nb = mat.n_batch
    if any(shape[n_new + d] != mat.shape[d] for d in range(nb, mat.ndim)):
        raise NotImplementedError("Adding sparse dimensions with lengths != 1")
    batch = shape[:n_new + nb]
    data = jnp.broadcast_to(mat.data, batch + mat.data.shape[nb:])
    indices = jnp.broadcast_to(mat.indices, batch + mat.indices.shape[nb:])
    return BCOO((data, indices), shape=shape)  # JAX keeps neither flag


def bcoo_concatenate(operands, *, dimension: int):
    """Concatenates BCOO arrays along a batch or a sparse dimension."""
    operands = list(operands)
    if not all(isinstance(op, BCOO) for op in operands):
        raise ValueError("bcoo_concatenate: expected operands to be a sequence of BCOO arrays. "
                         f"Got {operands}")
    first = operands[0]
    nb, ns = first.n_batch, first.n_sparse
    if any(op.n_batch != nb or op.n_sparse != ns for op in operands):
        raise ValueError("bcoo_concatenate requires inputs to have matching batch and sparse "
                         "dimensions.")
    dimension = operator.index(dimension) % first.ndim
    shape = list(first.shape)
    shape[dimension] = sum(op.shape[dimension] for op in operands)
    if dimension < nb:
        if len({op.nse for op in operands}) != 1:
            raise ValueError("bcoo_concatenate requires inputs to have matching nse dimensions.")
        pairs = [_broadcast_batch(op) for op in operands]
        data = jnp.concatenate([d for d, _ in pairs], axis=dimension)
        indices = jnp.concatenate([i for _, i in pairs], axis=dimension)
    elif dimension < nb + ns:
        k, offset, parts = dimension - nb, 0, []
        for op in operands:
            # every entry shifts, padding too (it keeps zero data wherever it lands, as JAX's)
            d, i = _broadcast_batch(op)
            parts.append((d, i.at[..., k].add(offset)))
            offset += op.shape[dimension]
        data = jnp.concatenate([d for d, _ in parts], axis=nb)
        indices = jnp.concatenate([i for _, i in parts], axis=nb)
    else:
        raise NotImplementedError("Concatenation along dense dimensions.")
    return BCOO((data, indices), shape=tuple(shape))


def _restrict(mat, data, indices, starts, strides, shape):
    """Keeps the entries whose sparse coordinates fall in the window `starts + strides * k`
    (k < the new sizes), renumbered from 0; the others become padding (zero data, out-of-bounds)."""
    nb, ns = mat.n_batch, mat.n_sparse
    new_sparse = tuple(shape[nb:nb + ns])
    if not ns:
        return data, indices
    start = jnp.stack([jnp.asarray(s, indices.dtype) for s in starts[nb:nb + ns]])
    step = jnp.array(strides[nb:nb + ns], indices.dtype)
    offset = indices - start
    inside = (offset >= 0) & (offset % step == 0) & (offset // step < jnp.array(
        new_sparse, indices.dtype)) & _valid(indices, mat.shape[nb:nb + ns])[..., None]
    keep = jnp.all(inside, axis=-1)
    indices = jnp.where(keep[..., None], offset // step, jnp.array(new_sparse, indices.dtype))
    data = data * _expand(keep, data.ndim - nb).astype(data.dtype)
    return data, indices


def bcoo_slice(mat, *, start_indices: Sequence[int], limit_indices: Sequence[int],
               strides: Sequence[int] | None = None):
    """`lax.slice` of a BCOO array: batch and dense dimensions are sliced, entries outside
    the sparse window become padding."""
    if not isinstance(mat, BCOO):
        raise TypeError(f"bcoo_slice: input should be BCOO array, got type(mat)={type(mat)}")
    start_indices = tuple(operator.index(i) for i in start_indices)
    limit_indices = tuple(operator.index(i) for i in limit_indices)
    strides = (1,) * mat.ndim if strides is None else tuple(operator.index(i) for i in strides)
    if len(start_indices) != mat.ndim or len(limit_indices) != mat.ndim:
        raise ValueError(f"bcoo_slice: indices must have size mat.ndim={mat.ndim}")
    if len(strides) != mat.ndim:
        raise ValueError(f"len(strides) = {len(strides)}; expected {mat.ndim}")
    if any(s <= 0 for s in strides):
        raise ValueError(f"strides must be a sequence of positive integers; got {strides}")
    if not all(0 <= a <= b <= d for a, b, d in zip(start_indices, limit_indices, mat.shape,
                                                   strict=True)):
        raise ValueError(f"bcoo_slice: invalid indices. Got {start_indices=}, "
                         f"{limit_indices=} and shape={mat.shape}")
    nb, ns = mat.n_batch, mat.n_sparse
    shape = tuple(-(-(b - a) // s) for a, b, s in zip(start_indices, limit_indices, strides,
                                                       strict=True))
    data, indices = _broadcast_batch(mat)
    b_start, b_limit, b_step = start_indices[:nb], limit_indices[:nb], strides[:nb]
    d_start, d_limit, d_step = (start_indices[nb + ns:], limit_indices[nb + ns:],
                                strides[nb + ns:])
    data = data[tuple(slice(a, b, c) for a, b, c in zip(b_start, b_limit, b_step, strict=True))
                + (slice(None),) + tuple(slice(a, b, c) for a, b, c in zip(
                    d_start, d_limit, d_step, strict=True))]
    indices = indices[tuple(slice(a, b, c) for a, b, c in zip(b_start, b_limit, b_step,
                                                              strict=True))]
    data, indices = _restrict(mat, data, indices, start_indices, strides, shape)
    return _compact(BCOO((data, indices), shape=shape))


def _compact(mat):
    # a window holding fewer coordinates than entries keeps one entry per coordinate (JAX's)
    size = math.prod(mat.shape[mat.n_batch:mat.n_batch + mat.n_sparse])
    if mat.n_sparse and mat.nse > size:
        merged = bcoo_sum_duplicates(mat, nse=size, remove_zeros=False)
        return BCOO((merged.data, merged.indices), shape=mat.shape)
    return mat


def bcoo_dynamic_slice(mat, start_indices, slice_sizes: Sequence[int]):
    """`lax.dynamic_slice` of a BCOO array (starts clamped into range, as lax clamps them)."""
    if not isinstance(mat, BCOO):
        raise TypeError(f"bcoo_slice: input should be BCOO array, got type(mat)={type(mat)}")
    start_indices = list(start_indices)
    slice_sizes = tuple(operator.index(s) for s in slice_sizes)
    if len(start_indices) != mat.ndim or len(slice_sizes) != mat.ndim:
        raise ValueError(f"bcoo_dynamic_slice: indices must have size mat.ndim={mat.ndim}")
    if any(s < 0 or s > d for s, d in zip(slice_sizes, mat.shape, strict=True)):
        raise TypeError("slice_sizes must be less than or equal to operand shape, got "
                        f"slice_sizes {slice_sizes} for operand shape {mat.shape}")
    nb, ns = mat.n_batch, mat.n_sparse
    starts = [jnp.clip(jnp.asarray(s), 0, d - z).astype(mat.indices.dtype)
              for s, d, z in zip(start_indices, mat.shape, slice_sizes, strict=True)]
    data, indices = _broadcast_batch(mat)
    zero = jnp.zeros((), mat.indices.dtype)
    data = jnp.asarray(data)
    from_data = starts[:nb] + [zero] + starts[nb + ns:]
    data = lax_dynamic_slice(data, from_data, slice_sizes[:nb] + (data.shape[nb],)
                             + slice_sizes[nb + ns:])
    indices = lax_dynamic_slice(indices, starts[:nb] + [zero, zero],
                                slice_sizes[:nb] + indices.shape[nb:])
    data, indices = _restrict(mat, data, indices, starts, (1,) * mat.ndim, slice_sizes)
    return _compact(BCOO((data, indices), shape=slice_sizes))


def bcoo_update_layout(mat, *, n_batch: int | None = None, n_dense: int | None = None,
                       on_inefficient: str | None = "error"):
    """The same array with `n_batch` batch and `n_dense` dense dimensions.

    Moving dimensions into the sparse part is cheap; moving sparse dimensions of size > 1 into
    the batch or dense part stores explicit zeros, which `on_inefficient` ('error', 'warn' or
    None) refuses (`SparseEfficiencyError`), warns about, or allows.
    """
    n_batch = mat.n_batch if n_batch is None else operator.index(n_batch)
    n_dense = mat.n_dense if n_dense is None else operator.index(n_dense)
    if (n_batch, n_dense) == (mat.n_batch, mat.n_dense):
        return mat
    if on_inefficient not in ("error", "warn", None):
        raise ValueError(f"on_inefficent={on_inefficient!r}; expected one of ['error', 'warn', "
                         "None].")
    if n_batch < 0:
        raise ValueError(f"n_batch must be non-negative; got {n_batch}")
    if n_dense < 0:
        raise ValueError(f"n_dense must be non-negative; got {n_dense}")
    if mat.ndim - n_batch - n_dense < 0:
        raise ValueError(f"sum of {n_batch=} and {n_dense=} cannot be larger than "
                         f"mat.ndim={mat.ndim}.")
    shape = mat.shape

    def inefficient(what, old, new):
        msg = (f"For matrix of shape {shape}, increasing {what} from {old} to {new} results in "
               "inefficient storage.")
        if on_inefficient == "error":
            raise SparseEfficiencyError(msg + " To disable this error, set the on_inefficient "
                                        "argument of bcoo_update_layout to 'warn' or None.")
        if on_inefficient == "warn":
            warnings.warn(msg + " To disable this warning, set the on_inefficient argument of "
                          "bcoo_update_layout to None.", SparseEfficiencyWarning, stacklevel=3)

    if n_dense > mat.n_dense and any(d > 1 for d in shape[mat.ndim - n_dense:
                                                          mat.ndim - mat.n_dense]):
        inefficient("n_dense", mat.n_dense, n_dense)
    if n_batch > mat.n_batch and any(d > 1 for d in shape[mat.n_batch:n_batch]):
        inefficient("n_batch", mat.n_batch, n_batch)
    data, indices = _broadcast_batch(mat)
    nb, nd = mat.n_batch, mat.n_dense
    if n_dense < nd:  # leading dense dimensions become sparse: one entry per block element
        moved = shape[mat.ndim - nd:mat.ndim - n_dense]

        def spread(d, i):
            count = math.prod(moved)
            grid = np.indices(moved).reshape(len(moved), -1).T.astype(i.dtype)
            nse = i.shape[0]
            new_i = jnp.concatenate([jnp.broadcast_to(i[:, None], (nse, count, i.shape[1])),
                                     jnp.broadcast_to(jnp.asarray(grid), (nse,) + grid.shape)],
                                    axis=-1)
            return (d.reshape((d.shape[0] * count,) + d.shape[1 + len(moved):]),
                    new_i.reshape(-1, new_i.shape[-1]))

        data, indices = _per_batch(spread, nb)(data, indices)
        nd = n_dense
    if n_batch < nb:  # trailing batch dimensions become sparse: their entries are joined
        moved = shape[n_batch:nb]

        def join(d, i):
            grid = np.indices(moved + (i.shape[-2],)).reshape(len(moved) + 1, -1).T[:, :-1]
            new_i = jnp.concatenate([jnp.asarray(grid.astype(np.dtype(i.dtype))),
                                     i.reshape(-1, i.shape[-1])], axis=-1)
            return d.reshape((-1,) + d.shape[len(moved) + 1:]), new_i

        data, indices = _per_batch(join, n_batch)(data, indices)
        nb = n_batch
    if n_dense > nd:  # trailing sparse dimensions become dense: each block holds one slice
        k = n_dense - nd
        block = shape[mat.ndim - n_dense:]

        def gather_in(d, i):
            rows = jnp.arange(i.shape[0])
            out = jnp.zeros((i.shape[0],) + block, d.dtype)
            where = (rows,) + tuple(i[:, i.shape[1] - k + j] for j in range(k))
            return out.at[where].set(d, mode="drop"), i[:, :i.shape[1] - k]

        data, indices = _per_batch(gather_in, nb)(data, indices)
        nd = n_dense
    if n_batch > nb:  # leading sparse dimensions become batch dimensions
        k = n_batch - nb
        new_batch = shape[nb:n_batch]

        def split(d, i):
            nse = i.shape[0]
            where = tuple(i[:, j] for j in range(k)) + (jnp.arange(nse),)
            out = jnp.zeros(new_batch + d.shape, d.dtype).at[where].set(d, mode="drop")
            return out, jnp.broadcast_to(i[:, k:], new_batch + (nse, i.shape[1] - k))

        data, indices = _per_batch(split, nb)(data, indices)
    return BCOO((data, indices), shape=shape)


# ----- arithmetic ------------------------------------------------------------------------------


def bcoo_reduce_sum(mat, *, axes: Sequence[int]):
    """Sums over `axes`: batch axes fold into the entries, sparse axes drop their coordinate
    (coordinates may repeat afterwards), dense axes sum the blocks."""
    axes = tuple(sorted({operator.index(a) % mat.ndim for a in axes}))
    nb, ns = mat.n_batch, mat.n_sparse
    data, indices = _broadcast_batch(mat)
    sparse_shape = mat.shape[nb:nb + ns]
    dense_axes = tuple(a - ns + 1 for a in axes if a >= nb + ns)
    if dense_axes:
        data = data.sum(dense_axes)
    sparse_drop = [a - nb for a in axes if nb <= a < nb + ns]
    keep = [k for k in range(ns) if k not in sparse_drop]
    unique = mat.unique_indices and not sparse_drop
    if sparse_drop:
        valid = _valid(indices, sparse_shape)
        kept_shape = tuple(sparse_shape[k] for k in keep)
        pad = jnp.array(kept_shape, indices.dtype) if keep else jnp.zeros((0,), indices.dtype)
        indices = jnp.where(valid[..., None], indices[..., keep], pad)
    batch_axes = [a for a in axes if a < nb]
    if batch_axes:
        # each reduced batch axis moves next to the entries and joins them
        rest = [a for a in range(nb) if a not in batch_axes]
        order = rest + batch_axes
        data = jnp.transpose(data, order + list(range(nb, data.ndim)))
        indices = jnp.transpose(indices, order + [nb, nb + 1])
        new_batch = tuple(mat.shape[a] for a in rest)
        data = data.reshape(new_batch + (-1,) + data.shape[nb + 1:])
        indices = indices.reshape(new_batch + (-1, indices.shape[-1]))
        unique = False
    shape = tuple(s for d, s in enumerate(mat.shape) if d not in axes)
    return BCOO((data, indices), shape=shape, unique_indices=unique,
                indices_sorted=mat.indices_sorted and not sparse_drop and not batch_axes)


def bcoo_multiply_dense(sp_mat, v):
    """Elementwise product of a BCOO array and a dense array broadcasting to its shape: the
    data of the result (the layout stays that of `sp_mat`)."""
    v = _asarray(v)
    v = jnp.broadcast_to(v, sp_mat.shape)
    dtype = jnp.result_type(sp_mat.data, v)
    return sp_mat.data.astype(dtype) * _gather(sp_mat, v.astype(dtype))


def bcoo_multiply_sparse(lhs, rhs):
    """Elementwise product of two BCOO arrays of one shape (the layout of `lhs`)."""
    if lhs.ndim != rhs.ndim:
        raise TypeError("bcoo_multiply_sparse: arrays must have same number of dimensions, got "
                        f"{lhs.shape}, {rhs.shape}")
    if lhs.shape != rhs.shape:
        raise NotImplementedError("bcoo_multiply_sparse: arrays of different shapes")
    rhs = rhs.sum_duplicates(nse=rhs.nse, remove_zeros=False) if not rhs.unique_indices else rhs
    lhs = lhs._unique()
    values = _lookup(lhs, rhs)
    dtype = jnp.result_type(lhs.data, rhs.data)
    return lhs._with_data(lhs.data.astype(dtype) * values.astype(dtype))


def _lookup(mat, other):
    """`other`'s data at `mat`'s coordinates (0 where `other` stores none): a sparse gather
    through coordinate matching, which never densifies."""
    data_m, idx_m = _broadcast_batch(mat)
    data_o, idx_o = _broadcast_batch(other)
    sparse_shape = mat.shape[mat.n_batch:mat.n_batch + mat.n_sparse]

    def one(i, d, j):
        match = jnp.all(i[:, None, :] == j[None, :, :], axis=-1) & _valid(j, sparse_shape)[None]
        return jnp.tensordot(match.astype(d.dtype), d, axes=1)

    return _per_batch(one, mat.n_batch)(idx_m, data_o, idx_o)


def _multiply(mat, other):
    if isinstance(other, BCOO):
        return bcoo_multiply_sparse(mat, other)
    other = _asarray(other)
    if other.ndim == 0:
        return mat._with_data(mat.data * other)
    if jnp.broadcast_shapes(mat.shape, other.shape) != mat.shape:
        raise NotImplementedError("multiplication of a sparse array by a dense array of a larger "
                                  "shape would densify it")
    return mat._with_data(bcoo_multiply_dense(mat, other))


def _add(mat, other, shared_layouts: bool = False):
    if isinstance(mat, BCOO) and isinstance(other, BCOO):
        if mat.shape != other.shape:
            raise NotImplementedError("Addition between sparse matrices of different shapes.")
        if shared_layouts and mat._ref is other._ref:
            return BCOO((mat.data + other.data, mat.indices), shape=mat.shape,
                        indices_sorted=mat.indices_sorted, unique_indices=mat.unique_indices)
        if mat.n_batch != other.n_batch or mat.n_dense != other.n_dense:
            raise NotImplementedError(
                "Addition between sparse matrices with different batch/dense dimensions.")
        (d1, i1), (d2, i2) = _broadcast_batch(mat), _broadcast_batch(other)
        dtype = jnp.result_type(d1, d2)
        nb = mat.n_batch
        data = jnp.concatenate([d1.astype(dtype), d2.astype(dtype)], axis=nb)
        indices = jnp.concatenate([i1, i2.astype(i1.dtype)], axis=nb)
        return BCOO((data, indices), shape=mat.shape)
    sparse, dense = (mat, other) if isinstance(mat, BCOO) else (other, mat)
    dense = _asarray(dense)
    if jnp.broadcast_shapes(sparse.shape, dense.shape) != tuple(dense.shape):
        raise NotImplementedError(
            "Addition between a sparse array X and a dense array Y is not implemented when the "
            "output shape is larger than Y.shape. This is to prevent silent densification of a "
            "large sparse array. If this is your intent, you can explicitly cast the sparse "
            "array to a dense matrix.")
    return sparse.todense() + dense


# ----- contraction -----------------------------------------------------------------------------


def bcoo_dot_general(lhs, rhs, *, dimension_numbers, precision=None,
                     preferred_element_type=None, out_sharding=None):
    """`lax.dot_general` with a BCOO operand on either side (or both: a BCOO result).

    The sparse side contracts over its sparse dimensions (and its batch dimensions); its
    batch dimensions may be the contraction's batch dimensions.
    """
    del precision, out_sharding
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = (tuple(operator.index(d) for d in x) for x in (lc, rc, lb, rb))
    if isinstance(lhs, BCOO) and isinstance(rhs, BCOO):
        return _spdot(lhs, rhs, lc, rc, lb, rb, preferred_element_type)
    if isinstance(lhs, BCOO):
        return _sparse_dense(lhs, _asarray(rhs), lc, rc, lb, rb, preferred_element_type)
    if isinstance(rhs, BCOO):
        lhs = _asarray(lhs)
        out = _sparse_dense(rhs, lhs, rc, lc, rb, lb, preferred_element_type)
        # the swapped contraction lists rhs's free dimensions first: put lhs's back in front
        n_b = len(lb)
        n_rhs_free = rhs.ndim - len(rc) - len(rb)
        n_lhs_free = lhs.ndim - len(lc) - len(lb)
        perm = (tuple(range(n_b)) + tuple(range(n_b + n_rhs_free, n_b + n_rhs_free + n_lhs_free))
                + tuple(range(n_b, n_b + n_rhs_free)))
        return jnp.transpose(out, perm)
    raise TypeError("bcoo_dot_general: expected a BCOO operand")


def bcoo_dot_general_sampled(A, B, indices, *, dimension_numbers):
    """`lax.dot_general(A, B)` evaluated at the coordinates `indices` only: the data of a BCOO
    array with that layout (the product's gradient flows only through those entries)."""
    A, B, indices = _asarray(A), _asarray(B), _asarray(indices)
    (lc, rc), (lb, rb) = dimension_numbers
    dims = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    dense = jnp.asarray(lax_dot_general(A, B, dims, precision=Precision.HIGHEST))
    n_batch, n_sparse = indices.ndim - 2, indices.shape[-1]
    data_shape = (tuple(dense.shape[:n_batch]) + indices.shape[n_batch:n_batch + 1]
                  + tuple(dense.shape[n_batch + n_sparse:]))
    layout = BCOO((jnp.zeros(data_shape, dense.dtype), indices), shape=dense.shape)
    return _gather(layout, dense)


def _check_dims(mat, lc, lb, name):
    if lb and max(lb) >= mat.n_batch:
        raise NotImplementedError(
            f"{name} batch dimensions must be among the batch dimensions in the sparse "
            f"representation.\ngot lhs_batch={lb}, n_batch={mat.n_batch}")
    if any(d >= mat.n_batch + mat.n_sparse for d in lc):
        raise NotImplementedError(f"{name}: contracting over dense dimensions.")


def _result_dtype(a, b, preferred):
    return np.dtype(preferred) if preferred is not None else jnp.result_type(a, b)


def _sparse_dense(mat, dense, lc, rc, lb, rb, preferred):
    _check_dims(mat, lc, lb, "bcoo_dot_general")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError("dot_general requires equal numbers of lhs and rhs contracting and batch "
                        f"dimensions, got {(lc, rc)} and {(lb, rb)}.")
    for a, b in zip(lc + lb, rc + rb, strict=True):
        if mat.shape[a] != dense.shape[b]:
            raise TypeError("dot_general requires contracting and batch dimensions to have the "
                            f"same shape, got {mat.shape} and {dense.shape}.")
    dtype = _result_dtype(mat.data, dense, preferred)
    data, indices = _broadcast_batch(mat)
    return _peel_sparse_dense(data.astype(dtype), indices, mat.shape, mat.n_batch,
                              dense.astype(dtype), lc, rc, lb, rb)


def _peel_sparse_dense(data, indices, shape, nb, dense, lc, rc, lb, rb):
    """Maps the contraction over the sparse operand's batch dimensions one at a time."""
    if nb == 0:
        return _dot_kernel(data, indices, shape, dense, lc, rc)
    sub_shape = shape[1:]

    def shift(dims):
        return tuple(d - 1 for d in dims if d != 0)

    def shift_rhs(dims, r):
        return tuple(d - (d > r) for d in dims if d != r)

    if 0 in lb or 0 in lc:
        j = (lb + lc).index(0)
        r = (rb + rc)[j]
        fn = vmap(lambda d, i, v: _peel_sparse_dense(d, i, sub_shape, nb - 1, v, shift(lc),
                                                     shift_rhs(rc, r), shift(lb),
                                                     shift_rhs(rb, r)),
                  in_axes=(0, 0, r), out_axes=lb.index(0) if 0 in lb else 0)
        out = fn(data, indices, dense)
        return out if 0 in lb else out.sum(0)
    fn = vmap(lambda d, i: _peel_sparse_dense(d, i, sub_shape, nb - 1, dense, shift(lc), rc,
                                              shift(lb), rb),
              in_axes=(0, 0), out_axes=len(lb))
    return fn(data, indices)


def _dot_kernel(data, indices, shape, dense, lc, rc):
    """One batch element: gather `dense` at the contracted coordinates of each entry, form the
    outer product with the entry's block, scatter-add it at the free coordinates."""
    ns = indices.shape[-1]
    free_sparse = [k for k in range(ns) if k not in lc]
    rest = [d for d in range(dense.ndim) if d not in rc]
    moved = jnp.transpose(dense, tuple(rc) + tuple(rest))
    if lc:
        picked = moved.at[tuple(indices[:, k] for k in lc)].get(mode="fill", fill_value=0)
    else:
        picked = jnp.broadcast_to(moved, (indices.shape[0],) + moved.shape)
    n_dense = data.ndim - 1
    n_rest = len(rest)
    product = (data.reshape(data.shape + (1,) * n_rest)
               * picked.reshape(picked.shape[:1] + (1,) * n_dense + picked.shape[1:]))
    if not free_sparse:
        return product.sum(0)
    out_shape = tuple(shape[k] for k in free_sparse) + product.shape[1:]
    out = jnp.zeros(out_shape, product.dtype)
    return out.at[tuple(indices[:, k] for k in free_sparse)].add(product, mode="drop")


def _spdot(lhs, rhs, lc, rc, lb, rb, preferred):
    if lhs.n_dense or rhs.n_dense:
        raise NotImplementedError("bcoo_spdot_general with dense dimensions.")
    if (lb and max(lb) >= lhs.n_batch) or (rb and max(rb) >= rhs.n_batch):
        raise NotImplementedError("bcoo_spdot_general: batch_dims must correspond to batch "
                                  "dimensions of the sparse representation.")
    if any(d < lhs.n_batch for d in lc) or any(d < rhs.n_batch for d in rc):
        raise NotImplementedError("bcoo_spdot_general only supports contraction of sparse "
                                  "indices.")
    for a, b in zip(lc + lb, rc + rb, strict=True):
        if lhs.shape[a] != rhs.shape[b]:
            raise TypeError("dot_general requires contracting and batch dimensions to have the "
                            f"same shape, got {lhs.shape} and {rhs.shape}.")
    dtype = _result_dtype(lhs.data, rhs.data, preferred)
    d1, i1 = _broadcast_batch(lhs)
    d2, i2 = _broadcast_batch(rhs)
    lhs_sparse = lhs.shape[lhs.n_batch:]
    rhs_sparse = rhs.shape[rhs.n_batch:]
    lc_s = tuple(d - lhs.n_batch for d in lc)
    rc_s = tuple(d - rhs.n_batch for d in rc)

    def kernel(a, ia, b, ib):
        match = jnp.ones((ia.shape[0], ib.shape[0]), bool)
        for p, q in zip(lc_s, rc_s, strict=True):
            match = match & (ia[:, None, p] == ib[None, :, q])
        match = match & _valid(ia, lhs_sparse)[:, None] & _valid(ib, rhs_sparse)[None, :]
        data = jnp.where(match, a[:, None] * b[None, :], 0).reshape(-1)
        lf = [k for k in range(len(lhs_sparse)) if k not in lc_s]
        rf = [k for k in range(len(rhs_sparse)) if k not in rc_s]
        n1, n2 = ia.shape[0], ib.shape[0]
        cols = ([jnp.broadcast_to(ia[:, None, k], (n1, n2)) for k in lf]
                + [jnp.broadcast_to(ib[None, :, k], (n1, n2)) for k in rf])
        out_sparse = tuple(lhs_sparse[k] for k in lf) + tuple(rhs_sparse[k] for k in rf)
        idx = (jnp.stack(cols, -1) if cols else jnp.zeros((n1, n2, 0), ia.dtype)).astype(ia.dtype)
        pad = jnp.array(out_sparse, ia.dtype) if out_sparse else jnp.zeros((0,), ia.dtype)
        idx = jnp.where(match[..., None], idx, pad).reshape(n1 * n2, len(out_sparse))
        return data, idx

    # map over the batch dimensions: shared ones first, then lhs's free ones, then rhs's
    fn = kernel
    lhs_free_batch = [d for d in range(lhs.n_batch) if d not in lb]
    rhs_free_batch = [d for d in range(rhs.n_batch) if d not in rb]
    for _ in rhs_free_batch:
        fn = vmap(fn, in_axes=(None, None, 0, 0))
    for _ in lhs_free_batch:
        fn = vmap(fn, in_axes=(0, 0, None, None))
    for _ in lb:
        fn = vmap(fn, in_axes=(0, 0, 0, 0))
    l_order = list(lb) + lhs_free_batch
    r_order = list(rb) + rhs_free_batch
    a = jnp.transpose(d1, l_order + [lhs.n_batch]).astype(dtype)
    ia = jnp.transpose(i1, l_order + [lhs.n_batch, lhs.n_batch + 1])
    b = jnp.transpose(d2, r_order + [rhs.n_batch]).astype(dtype)
    ib = jnp.transpose(i2, r_order + [rhs.n_batch, rhs.n_batch + 1])
    # vmap over rhs-only dims sits innermost: its axes come after lhs's free batch axes
    data, indices = fn(a, ia, b, ib)
    batch = (tuple(lhs.shape[d] for d in lb) + tuple(lhs.shape[d] for d in lhs_free_batch)
             + tuple(rhs.shape[d] for d in rhs_free_batch))
    lf = [lhs.n_batch + k for k in range(len(lhs_sparse)) if k not in lc_s]
    rf = [rhs.n_batch + k for k in range(len(rhs_sparse)) if k not in rc_s]
    shape = batch + tuple(lhs.shape[d] for d in lf) + tuple(rhs.shape[d] for d in rf)
    if rhs_free_batch and lf:
        raise ValueError("bcoo_spdot_general: cannot have unused batch dims on rhs with unused "
                         "sparse dims on lhs.")
    return BCOO((data, indices), shape=shape)


def _matmul(a, b):
    a_sp, b_sp = isinstance(a, BCOO), isinstance(b, BCOO)
    a = a if a_sp else _asarray(a)
    b = b if b_sp else _asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: operands must have at least one dimension")
    if a.ndim > 2 and b.ndim > 2:
        # batched matmul: the leading dimensions are batch dimensions of the contraction
        if a.ndim != b.ndim:
            raise NotImplementedError("sparse matmul of operands with different ranks > 2")
        nb = a.ndim - 2
        dims = ((a.ndim - 1,), (b.ndim - 2,)), (tuple(range(nb)), tuple(range(nb)))
        return bcoo_dot_general(a, b, dimension_numbers=dims)
    if b.ndim > 2:
        # a matrix (or vector) times a stack: the stack's leading dimensions lead the result
        out = bcoo_dot_general(a, b, dimension_numbers=(((a.ndim - 1,), (b.ndim - 2,)), ((), ())))
        n_a = a.ndim - 1
        perm = tuple(range(n_a, n_a + b.ndim - 2)) + tuple(range(n_a)) + (out.ndim - 1,)
        return bcoo_transpose(out, permutation=perm) if isinstance(out, BCOO) else jnp.transpose(
            out, perm)
    lc = (a.ndim - 1,)
    rc = (0,) if b.ndim == 1 else (b.ndim - 2,)
    return bcoo_dot_general(a, b, dimension_numbers=((lc, rc), ((), ())))


# ----- constructors ----------------------------------------------------------------------------


def empty(shape, dtype=None, index_dtype="int32", sparse_format: str = "bcoo", **kwds):
    """An all-zero sparse array storing no entries (`sparse_format` 'bcoo', 'bcsr', 'coo',
    'csr' or 'csc')."""
    dtype = dtype or dtypes.canonicalize_dtype(np.float64)
    if sparse_format == "bcoo":
        return BCOO._empty(shape, dtype=dtype, index_dtype=index_dtype, **kwds)
    if sparse_format == "bcsr":
        return _formats["bcsr"]._empty(shape, dtype=dtype, index_dtype=index_dtype, **kwds)
    if sparse_format in ("coo", "csr", "csc"):
        return _formats[sparse_format].fromdense(np.zeros(shape, np.dtype(dtype)), nse=0,
                                                 index_dtype=index_dtype)
    raise ValueError(f"sparse_format={sparse_format!r} not recognized")


def eye(N: int, M: int | None = None, k: int = 0, dtype=None, index_dtype="int32",
        sparse_format: str = "bcoo", **kwds):
    """The sparse identity (ones on diagonal `k`) of shape `(N, M)`."""
    M = N if M is None else M
    dtype = dtype or dtypes.canonicalize_dtype(np.float64)
    if sparse_format in ("coo", "csr", "csc"):
        return _formats[sparse_format].fromdense(np.eye(N, M, k, dtype=np.dtype(dtype)),
                                                 index_dtype=index_dtype)
    if sparse_format not in ("bcoo", "bcsr"):
        raise ValueError(f"sparse_format={sparse_format!r} not recognized")
    n_batch, n_dense = kwds.get("n_batch", 0), kwds.get("n_dense", 0)
    if n_batch or n_dense:
        mat = bcoo_fromdense(np.eye(N, M, k, dtype=np.dtype(dtype)), n_batch=n_batch,
                             n_dense=n_dense, index_dtype=index_dtype)
    else:
        length = max(0, min(N + min(k, 0), M - max(k, 0)))
        rows = np.arange(length) + max(0, -k)
        indices = np.stack([rows, rows + k], axis=1).astype(index_dtype)
        mat = BCOO((jnp.ones(length, dtype), indices), shape=(N, M), indices_sorted=True,
                   unique_indices=True)
    return mat if sparse_format == "bcoo" else _formats["bcsr"].from_bcoo(mat)


# the other formats register themselves here (they are built on this module's functions)
_formats: dict[str, type] = {}
