"""`BCSR`: batched compressed-row sparse arrays (two sparse dimensions), converted to and from
BCOO: the row of each entry is where it falls in `indptr`, so every operation goes through the
BCOO one."""

from __future__ import annotations

import operator

import numpy as np
from laminax_pytree import register_pytree_node

from laminax_core import numpy as jnp
from laminax_core.sparse._bcoo import (
    BCOO,
    JAXSparse,
    _asarray,
    _formats,
    _gather,
    _per_batch,
    bcoo_broadcast_in_dim,
    bcoo_concatenate,
    bcoo_dot_general,
    bcoo_fromdense,
    bcoo_sort_indices,
)

__all__ = ["BCSR", "bcsr_fromdense", "bcsr_todense", "bcsr_dot_general", "bcsr_extract",
           "bcsr_sum_duplicates", "bcsr_concatenate", "bcsr_broadcast_in_dim"]


class BCSR(JAXSparse):
    """Batched CSR sparse array: `BCSR((data, indices, indptr), shape=...)`.

    Args:
      args: `(data, indices, indptr)`: data `batch + (nse,) + dense`, column indices
        `batch + (nse,)`, row pointers `batch + (rows + 1,)`.
      shape: the dense shape `batch + (rows, columns) + dense`.
    """

    def __init__(self, args, *, shape, indices_sorted: bool = False, unique_indices: bool = False):
        data, indices, indptr = args
        self.data, self.indices, self.indptr = _asarray(data), _asarray(indices), _asarray(indptr)
        self.shape = tuple(operator.index(d) for d in shape)
        self.indices_sorted = bool(indices_sorted)
        self.unique_indices = bool(unique_indices)
        nb = self.indices.ndim - 1
        if len(self.shape) < nb + 2 or self.indptr.shape[-1] != self.shape[nb] + 1:
            raise ValueError(f"Invalid BCSR layout: {self.data.shape=}, {self.indices.shape=}, "
                             f"{self.indptr.shape=} for shape={self.shape}")

    def _leaves(self):
        return (self.data, self.indices, self.indptr)

    @property
    def n_batch(self) -> int:
        return self.indices.ndim - 1

    @property
    def n_sparse(self) -> int:
        return 2

    @property
    def n_dense(self) -> int:
        return self.data.ndim - 1 - self.n_batch

    @property
    def nse(self) -> int:
        return self.indices.shape[-1]

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32, n_dense: int = 0, n_batch: int = 0):
        """The BCSR array of the non-zeros of `mat` (see `bcsr_fromdense`)."""
        return bcsr_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    @classmethod
    def from_bcoo(cls, arr: BCOO) -> BCSR:
        """The BCSR array of a BCOO array with two sparse dimensions (entries sorted by row)."""
        if arr.n_sparse != 2:
            raise ValueError(f"BCSR.from_bcoo requires n_sparse=2; got {arr.n_sparse}")
        arr = arr if arr.indices_sorted else bcoo_sort_indices(arr)
        rows = arr.shape[arr.n_batch]
        data = jnp.broadcast_to(arr.data, arr.shape[:arr.n_batch] + arr.data.shape[arr.n_batch:])
        indices = jnp.broadcast_to(arr.indices, arr.shape[:arr.n_batch]
                                   + arr.indices.shape[arr.n_batch:])

        def one(i):
            ptr = jnp.searchsorted(i[:, 0], jnp.arange(rows + 1, dtype=i.dtype), side="left")
            return i[:, 1], ptr.astype(i.dtype)

        cols, indptr = _per_batch(one, arr.n_batch)(indices)
        # JAX records neither flag on a compressed layout
        return cls((data, cols, indptr), shape=arr.shape)

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32", n_dense=0, n_batch=0, nse=0):
        return cls.from_bcoo(BCOO._empty(shape, dtype=dtype, index_dtype=index_dtype,
                                         n_dense=n_dense, n_batch=n_batch, nse=nse))

    def to_bcoo(self) -> BCOO:
        """The BCOO array of the same entries (rows recovered from `indptr`)."""
        nse = self.nse

        def one(cols, ptr):
            rows = jnp.searchsorted(ptr, jnp.arange(nse, dtype=ptr.dtype), side="right") - 1
            return jnp.stack([rows.astype(cols.dtype), cols], axis=-1)

        indices = _per_batch(one, self.n_batch)(self.indices, self.indptr)
        return BCOO((self.data, indices), shape=self.shape, indices_sorted=self.indices_sorted,
                    unique_indices=self.unique_indices)

    def todense(self):
        """The dense array."""
        return self.to_bcoo().todense()

    def sum_duplicates(self, nse=None, remove_zeros: bool = True) -> BCSR:
        """Merges repeated coordinates (and drops zero entries)."""
        return bcsr_sum_duplicates(self, nse=nse, remove_zeros=remove_zeros)

    def tree_flatten(self):
        """`(data, indices, indptr)` and the static layout."""
        return (self.data, self.indices, self.indptr), self._aux()

    @classmethod
    def tree_unflatten(cls, aux, children):
        """The BCSR array of `children` and `aux` (see `tree_flatten`)."""
        return _unflatten(aux, children)

    def _aux(self):
        if not hasattr(self.indices, "ndim"):  # a tree of placeholders keeps its layout
            return self._placeholder_aux
        return (self.shape, self.n_batch, self.indices_sorted, self.unique_indices)

    def __neg__(self):
        return BCSR((-self.data, self.indices, self.indptr), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    def __mul__(self, other):
        return BCSR.from_bcoo(self.to_bcoo() * other)

    __rmul__ = __mul__

    def __matmul__(self, other):
        if isinstance(other, JAXSparse):
            raise NotImplementedError(
                "bcsr_dot_general currently implemented for BCSR lhs and ndarray rhs.")
        other = _asarray(other)
        rc = (0,) if other.ndim == 1 else (other.ndim - 2,)
        return bcsr_dot_general(self, other, dimension_numbers=(((self.ndim - 1,), rc), ((), ())))

    def __rmatmul__(self, other):
        return _asarray(other) @ self.to_bcoo()


def _unflatten(aux, children):
    shape, n_batch, indices_sorted, unique_indices = aux
    data, indices, indptr = children
    obj = object.__new__(BCSR)
    obj.data, obj.indices, obj.indptr = data, indices, indptr
    obj.indices_sorted, obj.unique_indices = indices_sorted, unique_indices
    if hasattr(data, "ndim") and hasattr(indices, "ndim"):
        # vmap adds or removes leading batch dimensions of the leaves: the shape follows them
        nb = indices.ndim - 1
        obj.shape = (tuple(data.shape[:nb]) + tuple(shape[n_batch:n_batch + 2])
                     + tuple(data.shape[nb + 1:]))
    else:
        obj.shape, obj._placeholder_aux = shape, aux
    return obj


register_pytree_node(BCSR, lambda m: ((m.data, m.indices, m.indptr), m._aux()), _unflatten)
_formats["bcsr"] = BCSR


def bcsr_fromdense(mat, *, nse=None, n_batch: int = 0, n_dense: int = 0, index_dtype=np.int32):
    """The BCSR array of the non-zeros of `mat`, padded to `nse` (see `bcoo_fromdense`)."""
    mat = _asarray(mat)
    if mat.ndim - n_batch - n_dense != 2:
        raise ValueError("BCSR arrays have two sparse dimensions: got "
                         f"shape={tuple(mat.shape)}, {n_batch=}, {n_dense=}")
    coo = bcoo_fromdense(mat, nse=nse, n_batch=n_batch, n_dense=n_dense, index_dtype=index_dtype)
    return BCSR.from_bcoo(coo)


def bcsr_todense(mat):
    """The dense array of a BCSR array."""
    return mat.todense()


def bcsr_extract(indices, indptr, mat):
    """The elements of dense `mat` at the coordinates a BCSR layout names."""
    mat = _asarray(mat)
    nb = indices.ndim - 1
    layout = BCSR((jnp.zeros(indices.shape + tuple(mat.shape[nb + 2:]), mat.dtype), indices,
                   indptr), shape=mat.shape)
    return _gather(layout.to_bcoo(), mat)


def bcsr_dot_general(lhs, rhs, *, dimension_numbers, precision=None,
                     preferred_element_type=None, out_sharding=None):
    """`dot_general` of a BCSR array and a dense array (through its BCOO form)."""
    if isinstance(lhs, BCSR):
        lhs = lhs.to_bcoo()
    if isinstance(rhs, BCSR):
        rhs = rhs.to_bcoo()
    return bcoo_dot_general(lhs, rhs, dimension_numbers=dimension_numbers, precision=precision,
                            preferred_element_type=preferred_element_type,
                            out_sharding=out_sharding)


def bcsr_sum_duplicates(mat, nse=None, remove_zeros: bool = True):
    """Merges repeated coordinates of a BCSR array (and drops zero entries)."""
    return BCSR.from_bcoo(mat.to_bcoo().sum_duplicates(nse=nse, remove_zeros=remove_zeros))


def bcsr_concatenate(operands, *, dimension: int):
    """Concatenates BCSR arrays along a batch or sparse dimension (through BCOO)."""
    return BCSR.from_bcoo(bcoo_concatenate([m.to_bcoo() for m in operands], dimension=dimension))


def bcsr_broadcast_in_dim(mat, *, shape, broadcast_dimensions, sharding=None):
    """Broadcasts a BCSR array: new leading dimensions become batch dimensions."""
    del sharding
    return BCSR.from_bcoo(bcoo_broadcast_in_dim(mat.to_bcoo(), shape=shape,
                                                broadcast_dimensions=broadcast_dimensions))
