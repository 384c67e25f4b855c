"""Products and diagonals: `dot`, `matmul`, `vdot`, `vecdot`, `inner`, `outer`, `tensordot`,
`kron`, `trace`, `diagonal`, `diag`, `diagflat`. Contractions are `lax.dot_general` with
`preferred_element_type` set to the promoted dtype, as JAX's jaxprs show."""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import lax
from laminax_core._avals import get_aval
from laminax_core._sharding_rules import requested_sharding
from laminax_core.numpy._operands import (
    as_array,
    canonicalize_axis,
    check_arraylike,
    promote_dtypes,
    select,
)
from laminax_core.numpy._reductions import sum as sum_
from laminax_core.numpy._shape import broadcast_arrays, moveaxis, stack
from laminax_core.numpy._ufuncs import conjugate, multiply

__all__ = [
    "cross", "diag", "diagflat", "diagonal", "dot", "inner", "kron", "matmul", "matrix_transpose",
    "matvec", "outer", "tensordot", "trace", "vdot", "vecdot", "vecmat",
]  # fmt: skip


def _operands(name, a, b):
    check_arraylike(name, a, b)
    return promote_dtypes(as_array(a), as_array(b))


def _dot_general(a, b, contract, batch=((), ()), precision=None, preferred_element_type=None,
                 out_sharding=None):
    dtype = preferred_element_type or get_aval(a).dtype
    return lax.dot_general(a, b, (contract, batch), precision=precision,
                           preferred_element_type=dtype, out_sharding=out_sharding)


def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """The dot product: for 2-d arrays the matrix product, for N-d a contraction of `a`'s last
    axis with `b`'s second-to-last (its only axis if 1-d); scalars multiply.

    Args:
      a, b: arrays.
      precision: passed to `lax.dot_general`.
      preferred_element_type: the accumulation and result dtype (default: the promoted one).
      out_sharding: the result's layout on a mesh with Explicit axes (a `NamedSharding`, or a
        `PartitionSpec` of the mesh in context).

    Returns:
      The product.

    Example:
      >>> dot(np.array([[1, 2], [3, 4]]), np.array([1, 1]))
      array([3, 7], dtype=int32)
    """
    a, b = _operands("dot", a, b)
    a_nd, b_nd = get_aval(a).ndim, get_aval(b).ndim
    if a_nd == 0 or b_nd == 0:
        if out_sharding is None:
            return multiply(a, b)
        return _dot_general(a, b, ((), ()), precision=precision,
                            preferred_element_type=preferred_element_type,
                            out_sharding=out_sharding)
    contract = ((a_nd - 1,), (max(b_nd - 2, 0),))
    _check_contracted("dot", a, b, contract)
    return _dot_general(a, b, contract, precision=precision,
                        preferred_element_type=preferred_element_type,
                        out_sharding=out_sharding)


def _check_contracted(name, a, b, contract):
    sa = [get_aval(a).shape[d] for d in contract[0]]
    sb = [get_aval(b).shape[d] for d in contract[1]]
    if sa != sb:
        raise TypeError(f"jnp.{name}: the contracted dimensions have different sizes: shapes "
                        f"{get_aval(a).shape} and {get_aval(b).shape} contract {sa} with {sb}.")


def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """The matrix product with NumPy's broadcasting of leading (batch) dimensions; a 1-d
    operand is a vector (its axis is removed from the result). `out_sharding` (a
    NamedSharding, or a PartitionSpec of the mesh in context) sets the result's explicit
    sharding.

    Example:
      >>> matmul(np.ones((2, 3, 4)), np.ones((4, 5))).shape
      (2, 3, 5)
    """
    a, b = _operands("matmul", a, b)
    a_shape, b_shape = get_aval(a).shape, get_aval(b).shape
    if not a_shape or not b_shape:
        raise ValueError(f"jnp.matmul: operands must have at least one dimension, got shapes "
                         f"{a_shape} and {b_shape}; use * for scalars.")
    a_vec, b_vec = len(a_shape) == 1, len(b_shape) == 1
    a_k, b_k = len(a_shape) - 1, len(b_shape) - (1 if b_vec else 2)
    if a_shape[a_k] != b_shape[b_k]:
        raise TypeError(f"jnp.matmul: size mismatch in the contracted dimension: shapes "
                        f"{a_shape} and {b_shape} ({a_shape[a_k]} vs {b_shape[b_k]}).")
    a, b, shared, a_free, b_free = _matmul_batch_dims(a, b, a_shape, b_shape, a_vec, b_vec)
    a_ndim, b_ndim = get_aval(a).ndim, get_aval(b).ndim
    b_contract = b_ndim - (1 if b_vec else 2)
    # dot_general orders its result: shared batch dims, a's free dims, b's free dims. Move the
    # batch dims back into broadcast order, in front of the matrix dims.
    order = [p[0] for p in shared] + a_free + b_free
    batch_positions = sorted(i for i in order if i >= 0)
    matrix = [i for i, pos in enumerate(order) if pos < 0]
    permutation = tuple(order.index(pos) for pos in batch_positions) + tuple(matrix)
    typed = requested_sharding(out_sharding, len(permutation))
    if typed is not None:  # the requested layout, in dot_general's dimension order
        entries = [None] * len(permutation)
        for i, p in enumerate(permutation):
            entries[p] = typed.aval_partitions[i]
        typed = typed.with_aval_partitions(tuple(entries))
    elif out_sharding is not None:
        typed = out_sharding  # one that splits nothing: replicated, still a request
    out = _dot_general(a, b, ((a_ndim - 1,), (b_contract,)),
                       (tuple(p[1] for p in shared), tuple(p[2] for p in shared)),
                       precision, preferred_element_type, typed)
    if permutation != tuple(range(len(permutation))):
        out = lax.transpose(out, permutation)
    return out


def _matmul_batch_dims(a, b, a_shape, b_shape, a_vec, b_vec):
    """Splits the broadcast batch dims of a matmul into shared ones (batch dims of dot_general)
    and ones only one side has (free dims of that side), squeezing size-1 dims as JAX does, so a
    rank-3 by rank-2 product contracts against the 2-d operand without broadcasting it.

    Returns the squeezed operands, `shared` as (broadcast position, a dim, b dim) triples, and
    the broadcast positions of a's and b's free dims in order (-1/-2 mark matrix dims).
    """
    a_batch = a_shape[:-2] if not a_vec else ()
    b_batch = b_shape[:-2] if not b_vec else ()
    rank = max(len(a_batch), len(b_batch))
    a_pad, b_pad = rank - len(a_batch), rank - len(b_batch)
    shared, a_only, b_only, a_squeeze, b_squeeze = [], [], [], [], []
    for pos in range(rank):
        a_dim = a_batch[pos - a_pad] if pos >= a_pad else None
        b_dim = b_batch[pos - b_pad] if pos >= b_pad else None
        if a_dim == b_dim:
            shared.append(pos)
        elif b_dim is None or b_dim == 1:
            a_only.append(pos)
            if b_dim == 1:
                b_squeeze.append(pos - b_pad)
        elif a_dim is None or a_dim == 1:
            b_only.append(pos)
            if a_dim == 1:
                a_squeeze.append(pos - a_pad)
        else:
            raise ValueError(f"jnp.matmul: batch dimensions {a_batch} and {b_batch} do not "
                             "broadcast.")
    if a_squeeze:
        a = lax.squeeze(a, tuple(a_squeeze))
    if b_squeeze:
        b = lax.squeeze(b, tuple(b_squeeze))
    a_dim_of = _kept_dims(a_pad, a_squeeze, rank)
    b_dim_of = _kept_dims(b_pad, b_squeeze, rank)
    triples = [(pos, a_dim_of[pos], b_dim_of[pos]) for pos in shared]
    a_free = a_only + ([] if a_vec else [-1])
    b_free = b_only + ([] if b_vec else [-2])
    return a, b, triples, a_free, b_free


def _kept_dims(pad, squeezed, rank):
    """Maps broadcast positions to an operand's dims after `squeezed` dims were removed."""
    mapping, dim = {}, 0
    for pos in range(pad, rank):
        if pos - pad in squeezed:
            continue
        mapping[pos] = dim
        dim += 1
    return mapping


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """The dot product of the flattened arrays, conjugating `a`.

    Example:
      >>> vdot(np.array([1, 2]), np.array([3, 4]))
      array(11, dtype=int32)
    """
    a, b = _operands("vdot", a, b)
    a = lax.reshape(conjugate(a), (get_aval(a).size,))
    b = lax.reshape(b, (get_aval(b).size,))
    return dot(a, b, precision=precision, preferred_element_type=preferred_element_type)


def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
    """The vector dot product along `axis`, conjugating `x1`, broadcasting the other axes.

    Example:
      >>> vecdot(np.ones((2, 3)), np.ones(3))
      array([3., 3.], dtype=float32)
    """
    check_arraylike("vecdot", x1, x2)
    x1, x2 = as_array(x1), as_array(x2)
    n1, n2 = get_aval(x1).ndim, get_aval(x2).ndim
    a1, a2 = canonicalize_axis(axis, n1, "jnp.vecdot"), canonicalize_axis(axis, n2, "jnp.vecdot")
    if get_aval(x1).shape[a1] != get_aval(x2).shape[a2]:
        raise ValueError(f"jnp.vecdot: axes of size {get_aval(x1).shape[a1]} and "
                         f"{get_aval(x2).shape[a2]} cannot be contracted.")
    return sum_(multiply(conjugate(x1), x2), axis=axis)


def inner(a, b, *, precision=None, preferred_element_type=None):
    """The inner product over the last axes (scalars multiply).

    Example:
      >>> inner(np.ones((2, 3)), np.ones((4, 3))).shape
      (2, 4)
    """
    a, b = _operands("inner", a, b)
    a_nd, b_nd = get_aval(a).ndim, get_aval(b).ndim
    if a_nd == 0 or b_nd == 0:
        return multiply(a, b)
    contract = ((a_nd - 1,), (b_nd - 1,))
    _check_contracted("inner", a, b, contract)
    return _dot_general(a, b, contract, precision=precision,
                        preferred_element_type=preferred_element_type)


def outer(a, b, out=None):
    """The outer product of the flattened arrays.

    Example:
      >>> outer(np.array([1, 2]), np.array([1, 10]))
      array([[ 1, 10],
             [ 2, 20]], dtype=int32)
    """
    if out is not None:
        raise NotImplementedError("jnp.outer: the out argument is not supported.")
    a, b = _operands("outer", a, b)
    a = lax.reshape(a, (get_aval(a).size, 1))
    b = lax.reshape(b, (1, get_aval(b).size))

    return multiply(a, b)


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None,
              out_sharding=None):
    """Contracts the last `axes` axes of `a` with the first of `b`, or the listed axes.

    Args:
      a, b: arrays.
      axes: an int N (a's last N with b's first N), or a pair of axis sequences.
      out_sharding: the result's layout on a mesh with Explicit axes.

    Returns:
      The contraction: `a`'s free axes then `b`'s.

    Example:
      >>> tensordot(np.ones((2, 3, 4)), np.ones((3, 4, 5))).shape
      (2, 5)
    """
    a, b = _operands("tensordot", a, b)
    a_nd, b_nd = get_aval(a).ndim, get_aval(b).ndim
    if isinstance(axes, int | np.integer):
        n = max(operator.index(axes), 0)  # a negative count contracts nothing (NumPy, JAX)
        if n > min(a_nd, b_nd):
            raise TypeError(f"jnp.tensordot: axes={n} is out of range for shapes "
                            f"{get_aval(a).shape} and {get_aval(b).shape}.")
        contract = (tuple(range(a_nd - n, a_nd)), tuple(range(n)))
    else:
        try:
            ax_a, ax_b = axes
        except (TypeError, ValueError) as err:
            raise TypeError("jnp.tensordot: axes must be an int or a pair of axis "
                            f"sequences, got {axes!r}.") from err
        ax_a = [ax_a] if isinstance(ax_a, int | np.integer) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, int | np.integer) else list(ax_b)
        if len(ax_a) != len(ax_b):
            raise TypeError(f"jnp.tensordot: the axis lists {ax_a} and {ax_b} have different "
                            "lengths.")
        contract = (tuple(canonicalize_axis(x, a_nd, "jnp.tensordot") for x in ax_a),
                    tuple(canonicalize_axis(x, b_nd, "jnp.tensordot") for x in ax_b))
    _check_contracted("tensordot", a, b, contract)
    return _dot_general(a, b, contract, precision=precision,
                        preferred_element_type=preferred_element_type,
                        out_sharding=out_sharding)


def kron(a, b):
    """The Kronecker product.

    Example:
      >>> kron(np.eye(2, dtype=np.int32), np.array([[1, 2]], np.int32))
      array([[1, 2, 0, 0],
             [0, 0, 1, 2]], dtype=int32)
    """
    a, b = _operands("kron", a, b)
    a_shape, b_shape = get_aval(a).shape, get_aval(b).shape
    n = max(len(a_shape), len(b_shape))
    a_shape = (1,) * (n - len(a_shape)) + a_shape
    b_shape = (1,) * (n - len(b_shape)) + b_shape
    a = lax.reshape(a, tuple(d for s in a_shape for d in (s, 1)))
    b = lax.reshape(b, tuple(d for s in b_shape for d in (1, s)))
    out = multiply(a, b)
    return lax.reshape(out, tuple(x * y for x, y in zip(a_shape, b_shape, strict=True)))


def matrix_transpose(x, /):
    """`x` with its last two axes swapped.

    Example:
      >>> matrix_transpose(np.zeros((4, 2, 3))).shape
      (4, 3, 2)
    """
    check_arraylike("matrix_transpose", x)
    x = as_array(x)
    n = get_aval(x).ndim
    if n < 2:
        raise ValueError(f"jnp.matrix_transpose: x must have at least 2 dimensions, got {n}.")
    return lax.transpose(x, (*range(n - 2), n - 1, n - 2))


def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """The `offset`-th diagonal over the plane of `axis1` and `axis2`, as the last axis.

    Example:
      >>> diagonal(np.arange(9).reshape(3, 3), 1)
      array([1, 5], dtype=int32)
    """
    check_arraylike("diagonal", a)
    a = as_array(a)
    shape = get_aval(a).shape
    if len(shape) < 2:
        raise ValueError(f"jnp.diagonal requires an array of at least two dimensions, got "
                         f"shape {shape}.")
    ax1 = canonicalize_axis(axis1, len(shape), "jnp.diagonal")
    ax2 = canonicalize_axis(axis2, len(shape), "jnp.diagonal")
    if ax1 == ax2:
        raise ValueError("jnp.diagonal: axis1 and axis2 cannot be the same.")
    rest = [d for d in range(len(shape)) if d not in (ax1, ax2)]
    a = lax.transpose(a, (*rest, ax1, ax2)) if (*rest, ax1, ax2) != tuple(range(len(shape))) \
        else a
    n, m = shape[ax1], shape[ax2]
    offset = operator.index(offset)
    length = max(0, min(n + min(offset, 0), m - max(offset, 0)))
    lead = tuple(shape[d] for d in rest)
    flat = lax.reshape(a, (*lead, n * m))
    if length == 0:
        return lax.slice(flat, (0,) * (len(lead) + 1), (*lead, 0))
    # the diagonal is a strided slice of the flattened matrix: stride m + 1
    start = offset if offset >= 0 else -offset * m
    stop = start + (length - 1) * (m + 1) + 1
    return lax.slice(flat, (0,) * len(lead) + (start,), (*lead, stop),
                     (1,) * len(lead) + (m + 1,))


def diag(v, k: int = 0):
    """The `k`-th diagonal of a 2-d array, or a 2-d array with the 1-d `v` on its `k`-th
    diagonal.

    Example:
      >>> diag(np.array([1, 2]))
      array([[1, 0],
             [0, 2]], dtype=int32)
    """
    check_arraylike("diag", v)
    v = as_array(v)
    shape = get_aval(v).shape
    k = operator.index(k)
    if len(shape) == 2:
        return diagonal(v, k)
    if len(shape) != 1:
        raise ValueError(f"jnp.diag: the input must be 1-d or 2-d, got shape {shape}.")
    n = shape[0] + abs(k)
    padded = lax.pad(v, np.zeros((), get_aval(v).dtype), [(0, abs(k), 0)])
    rows = lax.iota_p.bind(dtype=np.dtype(np.int32), shape=(n, n), dimension=0, sharding=None)
    cols = lax.iota_p.bind(dtype=np.dtype(np.int32), shape=(n, n), dimension=1, sharding=None)
    on_diagonal = lax.eq(lax.sub(cols, rows), np.int32(k))
    values = lax.broadcast_in_dim(padded, (n, n), (0,) if k >= 0 else (1,))
    zero = lax.broadcast_in_dim(np.zeros((), get_aval(v).dtype), (n, n), ())
    return select(on_diagonal, zero, values)


def diagflat(v, k: int = 0):
    """A 2-d array with the flattened `v` on its `k`-th diagonal.

    Example:
      >>> diagflat(np.array([[1], [2]])).shape
      (2, 2)
    """
    check_arraylike("diagflat", v)
    v = as_array(v)
    return diag(lax.reshape(v, (get_aval(v).size,)), k)


def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None, out=None):
    """The sum along the `offset`-th diagonal.

    Example:
      >>> trace(np.arange(9).reshape(3, 3))
      array(12, dtype=int32)
    """
    if out is not None:
        raise NotImplementedError("jnp.trace: the out argument is not supported.")
    return sum_(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None):
    """The cross product of 3-vectors (or the z-component for 2-vectors) along the given axes.

    Example:
      >>> cross(np.array([1, 0, 0]), np.array([0, 1, 0]))
      array([0, 0, 1], dtype=int32)
    """
    a, b = _operands("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis(a, axisa, -1)
    b = moveaxis(b, axisb, -1)
    na, nb = get_aval(a).shape[-1], get_aval(b).shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(f"jnp.cross: vector dimensions must be 2 or 3, got {na} and {nb}.")

    def component(x, i):
        n = get_aval(x).shape[-1]
        if i >= n:
            return None
        start = [0] * get_aval(x).ndim
        limit = list(get_aval(x).shape)
        start[-1], limit[-1] = i, i + 1
        return lax.squeeze(lax.slice(x, start, limit), (get_aval(x).ndim - 1,))

    a0, a1, a2 = (component(a, i) for i in range(3))
    b0, b1, b2 = (component(b, i) for i in range(3))
    z = lax.sub(*broadcast_arrays(lax.mul(*broadcast_arrays(a0, b1)),
                                  lax.mul(*broadcast_arrays(a1, b0))))
    if na == 2 and nb == 2:
        return z
    zero = np.zeros((), get_aval(a).dtype)
    a2 = zero if a2 is None else a2
    b2 = zero if b2 is None else b2
    x = lax.sub(*broadcast_arrays(lax.mul(*broadcast_arrays(a1, b2)),
                                  lax.mul(*broadcast_arrays(a2, b1))))
    y = lax.sub(*broadcast_arrays(lax.mul(*broadcast_arrays(a2, b0)),
                                  lax.mul(*broadcast_arrays(a0, b2))))
    out = stack(broadcast_arrays(x, y, z), axis=-1)
    return moveaxis(out, -1, axisc)


def matvec(x1, x2, /):
    """The batched matrix-vector product `x1 @ x2[..., None]` (broadcasting batch dims).

    Example:
      >>> matvec(np.ones((2, 3)), np.ones(3))
      array([3., 3.], dtype=float32)
    """
    a, b = _operands("matvec", x1, x2)
    return lax.squeeze(matmul(a, lax.expand_dims(b, (get_aval(b).ndim,))),
                       (max(get_aval(a).ndim, get_aval(b).ndim + 1) - 1,))


def vecmat(x1, x2, /):
    """The batched vector-matrix product `conj(x1)[..., None, :] @ x2`.

    Example:
      >>> vecmat(np.ones(3), np.ones((3, 2)))
      array([3., 3.], dtype=float32)
    """
    a, b = _operands("vecmat", x1, x2)
    out = matmul(lax.expand_dims(conjugate(a), (get_aval(a).ndim - 1,)), b)
    return lax.squeeze(out, (get_aval(out).ndim - 2,))
