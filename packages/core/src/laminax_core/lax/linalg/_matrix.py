"""Matrix helpers for the linalg rules, written with lax primitives so the rules stay
differentiable and batchable: matmul over leading batch dimensions, transposes of the last two
dimensions, triangular masks, identity matrices and diagonals."""

from __future__ import annotations

import numpy as np

from laminax_core import dtypes
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters.batching import bdim_at_front, move_bdim
from laminax_core._primitive import check_dtype
from laminax_core.lax import _elementwise as ew
from laminax_core.lax._dot import dot_general
from laminax_core.lax._math import conj, real
from laminax_core.lax._reductions import reduce_sum
from laminax_core.lax._structural import broadcast_in_dim, broadcasted_iota, transpose

__all__ = [
    "H", "T", "as_dtype", "batch_front", "batch_leading", "batched_reference", "check_matrix",
    "const", "diagonal", "eye_like", "is_complex", "matmul", "move_front", "real_dtype",
    "real_part", "tril", "triu",
]  # fmt: skip


def check_matrix(name: str, x: ShapedArray, square: bool = False) -> None:
    """TypeError unless `x` is a (batch of) floating or complex matrix (square if asked)."""
    check_dtype(name, x.dtype, (np.floating, np.complexfloating))
    if x.ndim < 2:
        raise ValueError(f"{name}: the input must have at least 2 dimensions (a matrix or a "
                         f"batch of matrices), got shape {x.shape}.")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name}: the input must be a square matrix (or a batch of them), got "
                         f"shape {x.shape}.")


def const(value, like):
    """`value` as a scalar of `like`'s dtype (Python scalars do not adopt complex dtypes)."""
    return np.asarray(value, get_aval(like).dtype)


def real_dtype(dtype):
    return np.empty((), dtype).real.dtype


def is_complex(x) -> bool:
    return dtypes.issubdtype(get_aval(x).dtype, np.complexfloating)


def matmul(a, b):
    """`a @ b` over matching leading batch dimensions."""
    nd = get_aval(a).ndim
    batch = tuple(range(nd - 2))
    return dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def T(x):
    """`x` with its last two dimensions swapped."""
    nd = get_aval(x).ndim
    return transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def H(x):
    """The conjugate transpose of the last two dimensions."""
    return conj(T(x)) if is_complex(x) else T(x)


def _mask(x, keep_lower: bool, k: int):
    # the mask JAX builds: rows + k >= cols keeps the lower part, rows + k <= cols the upper
    shape = get_aval(x).shape
    rows = ew.add(broadcasted_iota(np.int32, shape, len(shape) - 2), np.int32(k))
    cols = broadcasted_iota(np.int32, shape, len(shape) - 1)
    keep = ew.ge(rows, cols) if keep_lower else ew.le(rows, cols)
    zeros = broadcast_in_dim(np.zeros((), get_aval(x).dtype), shape, ())
    return ew.select_n(keep, zeros, x)


def tril(x, k: int = 0):
    """The lower triangle (on and below diagonal `k`) of the last two dimensions."""
    return _mask(x, True, k)


def triu(x, k: int = 0):
    """The upper triangle (on and above diagonal `k`) of the last two dimensions."""
    return _mask(x, False, k)


def eye_like(shape, dtype):
    """Identity matrices of `shape` (..., m, n) and `dtype`."""
    rows = broadcasted_iota(np.int32, shape, len(shape) - 2)
    cols = broadcasted_iota(np.int32, shape, len(shape) - 1)
    return ew.convert_element_type(ew.eq(rows, cols), dtype)


def diagonal(x):
    """The main diagonal of the last two (square) dimensions: shape (..., n)."""
    aval = get_aval(x)
    return reduce_sum(ew.mul(x, eye_like(aval.shape, aval.dtype)), (aval.ndim - 1,))


def real_part(x):
    return real(x) if is_complex(x) else x


def batch_front(axis_data, args, dims):
    """Every operand with its batch dimension first (unbatched operands broadcast)."""
    return [bdim_at_front(x, d, axis_data.size) for x, d in zip(args, dims, strict=True)]


def move_front(x, bdim):
    return move_bdim(x, bdim, 0)


def batch_leading(get_primitive):
    """The batch rule of a one-operand factorization whose leading dimensions are batch
    dimensions: the batch dimension moves first and every output is batched there.
    `get_primitive` defers the lookup until the primitive exists."""

    def rule(axis_data, args, dims, **params):
        primitive = get_primitive()
        outs = primitive.bind(move_front(args[0], dims[0]), **params)
        return outs, ([0] * len(outs) if primitive.multiple_results else 0)

    return rule


def as_dtype(x, dtype):
    return x if get_aval(x).dtype == dtype else ew.convert_element_type(x, dtype)


def batched_reference(fn, *matrices):
    """Applies `fn(*matrices_2d)` to each matrix of leading batch dimensions, stacking the
    results (a tuple of outputs per matrix)."""
    batch = matrices[0].shape[:-2]
    flat = [m.reshape((-1, *m.shape[-2:])) for m in matrices]
    count = int(np.prod(batch, dtype=np.int64))
    outs = [fn(*(m[i] for m in flat)) for i in range(count)]
    if count == 0:
        return None
    return [np.stack([o[j] for o in outs]).reshape(batch + np.shape(outs[0][j]))
            for j in range(len(outs[0]))]
