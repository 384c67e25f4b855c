"""The unbatched 2-d formats `COO`, `CSR` and `CSC` with their `coo_*` / `csr_*` functions:
products by a gather of the dense operand and a scatter-add over the rows. Padding entries
point at (0, 0) with zero data, as JAX pads them."""

from __future__ import annotations

import operator

import numpy as np
from laminax_pytree import register_pytree_node

from laminax_core import numpy as jnp
from laminax_core.sparse._bcoo import JAXSparse, _asarray, _formats

__all__ = ["COO", "CSR", "CSC", "coo_fromdense", "coo_todense", "coo_matvec", "coo_matmat",
           "csr_fromdense", "csr_todense", "csr_matvec", "csr_matmat"]


class _Matrix2D(JAXSparse):
    n_batch = 0
    n_dense = 0

    @property
    def nse(self) -> int:
        return self.data.shape[0]

    def __matmul__(self, other):
        if isinstance(other, JAXSparse):
            raise NotImplementedError("matmul between two sparse objects.")
        other = _asarray(other)
        if other.ndim > 2:
            raise NotImplementedError(f"matmul with object of shape {other.shape}")
        return self._product(other, transpose=False)


def _nonzero_entries(mat, nse, index_dtype):
    mat = _asarray(mat)
    if nse is None:
        nse = int(np.count_nonzero(np.asarray(mat)))
    row, col = jnp.nonzero(mat, size=nse, fill_value=0)
    count = jnp.sum(mat != 0)
    real = jnp.arange(nse) < count
    data = jnp.where(real, mat[row, col], 0)
    return data, row.astype(index_dtype), col.astype(index_dtype), real


class COO(_Matrix2D):
    """Unbatched coordinate sparse matrix: `COO((data, row, col), shape=...)`."""

    def __init__(self, args, *, shape, rows_sorted: bool = False, cols_sorted: bool = False):
        data, row, col = args
        self.data, self.row, self.col = _asarray(data), _asarray(row), _asarray(col)
        self.shape = tuple(operator.index(d) for d in shape)
        self._rows_sorted, self._cols_sorted = bool(rows_sorted), bool(cols_sorted)

    def _leaves(self):
        return (self.data, self.row, self.col)

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32) -> COO:
        """The COO matrix of the non-zeros of `mat`, in row-major order."""
        return coo_fromdense(mat, nse=nse, index_dtype=index_dtype)

    def todense(self):
        """The dense matrix."""
        return coo_todense(self)

    @property
    def T(self) -> COO:
        return self.transpose()

    def transpose(self, axes=None) -> COO:
        """The transposed matrix (rows and columns swapped)."""
        if axes is not None and tuple(axes) != (1, 0):
            raise NotImplementedError("axes argument to transpose()")
        return COO((self.data, self.col, self.row), shape=self.shape[::-1],
                   rows_sorted=self._cols_sorted, cols_sorted=self._rows_sorted)

    def _product(self, other, transpose):
        return (coo_matvec if other.ndim == 1 else coo_matmat)(self, other, transpose=transpose)


def coo_fromdense(mat, *, nse=None, index_dtype=np.int32) -> COO:
    """The COO matrix of the non-zeros of `mat` (padded to `nse` entries)."""
    data, row, col, _ = _nonzero_entries(mat, nse, index_dtype)
    return COO((data, row, col), shape=tuple(_asarray(mat).shape), rows_sorted=True)


def coo_todense(mat: COO):
    """The dense matrix of a COO matrix (repeated coordinates add up)."""
    return jnp.zeros(mat.shape, mat.data.dtype).at[mat.row, mat.col].add(mat.data)


def coo_matvec(mat: COO, v, transpose: bool = False):
    """`mat @ v` (or `mat.T @ v`) for a COO matrix and a dense vector."""
    v = _asarray(v)
    rows, cols = (mat.col, mat.row) if transpose else (mat.row, mat.col)
    size = mat.shape[1] if transpose else mat.shape[0]
    dtype = jnp.result_type(mat.data, v)
    products = mat.data.astype(dtype) * v.astype(dtype)[cols]
    return jnp.zeros((size,), dtype).at[rows].add(products)


def coo_matmat(mat: COO, B, transpose: bool = False):
    """`mat @ B` (or `mat.T @ B`) for a COO matrix and a dense matrix."""
    B = _asarray(B)
    rows, cols = (mat.col, mat.row) if transpose else (mat.row, mat.col)
    size = mat.shape[1] if transpose else mat.shape[0]
    dtype = jnp.result_type(mat.data, B)
    products = mat.data.astype(dtype)[:, None] * B.astype(dtype)[cols]
    return jnp.zeros((size, B.shape[1]), dtype).at[rows].add(products)


def _rows_of(indptr, nse):
    # entry k lies in the row whose pointer range holds k; padding lies past the last row
    return jnp.searchsorted(indptr, jnp.arange(nse, dtype=indptr.dtype), side="right") - 1


class CSR(_Matrix2D):
    """Compressed-row sparse matrix: `CSR((data, indices, indptr), shape=...)`."""

    def __init__(self, args, *, shape):
        data, indices, indptr = args
        self.data, self.indices, self.indptr = (_asarray(data), _asarray(indices),
                                                _asarray(indptr))
        self.shape = tuple(operator.index(d) for d in shape)

    def _leaves(self):
        return (self.data, self.indices, self.indptr)

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32) -> CSR:
        """The CSR matrix of the non-zeros of `mat`."""
        return csr_fromdense(mat, nse=nse, index_dtype=index_dtype)

    def todense(self):
        """The dense matrix."""
        return csr_todense(self)

    @property
    def T(self) -> CSC:
        return self.transpose()

    def transpose(self, axes=None) -> CSC:
        """The transpose: a CSC matrix over the same buffers."""
        if axes is not None and tuple(axes) != (1, 0):
            raise NotImplementedError("axes argument to transpose()")
        return CSC((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def _coo(self) -> COO:
        rows = _rows_of(self.indptr, self.nse).astype(self.indices.dtype)
        return COO((self.data, rows, self.indices), shape=self.shape)

    def _product(self, other, transpose):
        return (csr_matvec if other.ndim == 1 else csr_matmat)(self, other, transpose=transpose)


class CSC(_Matrix2D):
    """Compressed-column sparse matrix: `CSC((data, indices, indptr), shape=...)`."""

    def __init__(self, args, *, shape):
        data, indices, indptr = args
        self.data, self.indices, self.indptr = (_asarray(data), _asarray(indices),
                                                _asarray(indptr))
        self.shape = tuple(operator.index(d) for d in shape)

    def _leaves(self):
        return (self.data, self.indices, self.indptr)

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32) -> CSC:
        """The CSC matrix of the non-zeros of `mat`, column by column."""
        mat = _asarray(mat)
        return csr_fromdense(mat.T, nse=nse, index_dtype=index_dtype).T

    def todense(self):
        """The dense matrix."""
        return self.T.todense().T

    @property
    def T(self) -> CSR:
        return self.transpose()

    def transpose(self, axes=None) -> CSR:
        """The transpose: a CSR matrix over the same buffers."""
        if axes is not None and tuple(axes) != (1, 0):
            raise NotImplementedError("axes argument to transpose()")
        return CSR((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def _product(self, other, transpose):
        op = csr_matvec if other.ndim == 1 else csr_matmat
        return op(self.T, other, transpose=not transpose)


def csr_fromdense(mat, *, nse=None, index_dtype=np.int32) -> CSR:
    """The CSR matrix of the non-zeros of `mat` (padded to `nse` entries)."""
    mat = _asarray(mat)
    data, row, col, real = _nonzero_entries(mat, nse, index_dtype)
    counts = jnp.zeros((mat.shape[0],), index_dtype).at[row].add(real.astype(index_dtype))
    indptr = jnp.concatenate([jnp.zeros((1,), index_dtype), jnp.cumsum(counts)]).astype(
        index_dtype)
    return CSR((data, col, indptr), shape=tuple(mat.shape))


def csr_todense(mat: CSR):
    """The dense matrix of a CSR matrix."""
    coo = mat._coo()
    return jnp.zeros(mat.shape, mat.data.dtype).at[coo.row, coo.col].add(coo.data, mode="drop")


def csr_matvec(mat: CSR, v, transpose: bool = False):
    """`mat @ v` (or `mat.T @ v`) for a CSR matrix and a dense vector."""
    return _csr_product(mat, _asarray(v), transpose)


def csr_matmat(mat: CSR, B, transpose: bool = False):
    """`mat @ B` (or `mat.T @ B`) for a CSR matrix and a dense matrix."""
    return _csr_product(mat, _asarray(B), transpose)


def _csr_product(mat, other, transpose):
    coo = mat._coo()
    rows, cols = (coo.col, coo.row) if transpose else (coo.row, coo.col)
    size = mat.shape[1] if transpose else mat.shape[0]
    dtype = jnp.result_type(mat.data, other)
    picked = other.astype(dtype).at[cols].get(mode="fill", fill_value=0)
    products = mat.data.astype(dtype).reshape((-1,) + (1,) * (other.ndim - 1)) * picked
    out = jnp.zeros((size,) + other.shape[1:], dtype)
    return out.at[rows].add(products, mode="drop")


def _rebuild(cls, names, children, **attrs):
    # no conversion: a tree of placeholders (tree_map over in_axes specs ...) unflattens too
    obj = object.__new__(cls)
    for name, value in zip(names, children, strict=True):
        setattr(obj, name, value)
    obj.__dict__.update(attrs)
    return obj


register_pytree_node(
    COO, lambda m: ((m.data, m.row, m.col), (m.shape, m._rows_sorted, m._cols_sorted)),
    lambda aux, c: _rebuild(COO, ("data", "row", "col"), c, shape=aux[0],
                            _rows_sorted=aux[1], _cols_sorted=aux[2]))
for _cls in (CSR, CSC):
    register_pytree_node(_cls, lambda m: ((m.data, m.indices, m.indptr), m.shape),
                         lambda shape, c, cls=_cls: _rebuild(cls, ("data", "indices", "indptr"),
                                                             c, shape=shape))
_formats.update(coo=COO, csr=CSR, csc=CSC)
